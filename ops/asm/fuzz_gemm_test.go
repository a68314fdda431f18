package asm

import (
	"math/rand/v2"
	"testing"
)

// FuzzGemm runs a fuzz-chosen product (small M and K, N up to 167, all
// including 0; transposes, leading dimensions past the row, offsets, accumulate,
// alpha, packed B, serial or parallel) whose A and B hold fuzz-chosen
// values with NaN, ±Inf, ±0 and subnormals, on every variant (also with
// tiny cache blocks), against the float64 reference of gemm_test.go.
// Finite values stay within ±4 so that float32 overflow, where the
// float64 reference would not overflow, cannot occur.
func FuzzGemm(f *testing.F) {
	f.Add([]byte{7, 17, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{13, 3, 33, 3, 1, 2, 3, 1, 2, 3, 1, 1, 1, 0x81, 7, 9, 11})
	f.Add([]byte{0, 5, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		m, n, k := in.intn(40), in.intn(40), in.intn(70)
		n += 64 * in.intn(3) // whole groups of the fewRows kernel's columns too
		flags := in.byte()
		cfg := GemmConfig{M: m, N: n, K: k, TransA: flags&1 != 0, TransB: flags&2 != 0,
			Accumulate: flags&4 != 0, Alpha: []float32{1, 0.5, -2, 1e35}[flags>>3&3]}
		if cfg.Accumulate {
			cfg.Alpha = 1 // Accumulate needs Alpha 1
		}
		if flags&0x20 != 0 {
			_, ac := cfg.storedA()
			_, bc := cfg.storedB()
			cfg.LDA, cfg.LDB, cfg.LDC = ac+in.intn(9), bc+in.intn(9), n+in.intn(9)
		}
		gc := gemmCase{cfg: cfg, offA: in.intn(8), offB: in.intn(8), offC: in.intn(8)}
		packed, threads := flags&0x40 != 0, 1+int(flags>>7)
		vals := in.floats(64, 4)
		gc.poke = func(a, b []float32) {
			c := gc.cfg
			if c.normalise() != nil {
				return
			}
			ar, ac := c.storedA()
			br, bc := c.storedB()
			p := 0
			next := func() float32 { p++; return vals[p%len(vals)] }
			for i := range ar {
				for j := range ac {
					a[i*c.LDA+j] = next()
				}
			}
			for i := range br {
				for j := range bc {
					b[i*c.LDB+j] = next()
				}
			}
		}
		par := Par{}
		if threads > 1 {
			par = gemmTestPar(threads)
		}
		seed := uint64(len(data))
		for _, v := range gemmTestVariants() {
			runGemmCase(t, rand.New(rand.NewPCG(seed, 1)), gc, v, par, packed, nil)
		}
	})
}
