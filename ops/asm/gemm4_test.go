package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmMicro4 runs each variant's four-row kernel (where it has one)
// against its six-row kernel on the same panels, with and without the
// next-panel prefetch flag: rows 0-3 must be the same bits (the blocked
// product relies on it to mix the two), nothing outside the four rows
// may be written, and the prefetch bit must change nothing.
func TestGemmMicro4(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, v := range GemmVariants() {
		if v.micro4 == nil {
			continue
		}
		mr, nr := v.mr, v.nr
		for k := 1; k <= 4*4+3; k++ {
			for _, ldc := range []int{nr, nr + 1, 3*nr + 5} {
				for _, flags := range []uint{0, gemmAccumulate, gemmPrefetchNext, gemmAccumulate | gemmPrefetchNext} {
					a, b := make([]float32, k*mr), make([]float32, k*nr)
					for i := range a {
						a[i] = gemmRand(r)
					}
					for i := range b {
						b[i] = gemmRand(r)
					}
					init := func(i, j int) float32 { return float32(i*nr+j) / 7 }
					c4 := newGemmOperand(4, nr, ldc, 1+r.IntN(7), init)
					c6, c6p := newGemmOperand(mr, nr, ldc, 0, init), newGemmOperand(mr, nr, ldc, 0, init)
					snap := c4.snapshot()
					v.micro4(k, &a[0], &b[0], &c4.data[0], ldc, flags)
					v.micro(k, &a[0], &b[0], &c6.data[0], ldc, flags&gemmAccumulate)
					v.micro(k, &a[0], &b[0], &c6p.data[0], ldc, flags)
					for i, x := range c6p.data {
						if math.Float32bits(x) != math.Float32bits(c6.data[i]) {
							t.Fatalf("%s k=%d ldc=%d flags=%d: six-row kernel's element %d is %v, %v without prefetch", v.Name, k, ldc, flags, i, x, c6.data[i])
						}
					}
					c4.checkOutside(t, snap, 4, nr, ldc)
					for i := range 4 {
						for j := range nr {
							got, want := c4.data[i*ldc+j], c6.data[i*ldc+j]
							if math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("%s k=%d ldc=%d flags=%d: [%d,%d] = %v, six-row kernel %v", v.Name, k, ldc, flags, i, j, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// TestGemmMicro4Blocked runs whole products whose last row panel has four
// rows (M ≡ 4 mod 6), B pre-packed and not, overwriting and accumulating,
// with and without the four-row kernel: C must be the same bits.
func TestGemmMicro4Blocked(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, v := range GemmVariants() {
		if v.micro4 == nil {
			continue
		}
		plain := *v
		plain.micro4 = nil
		for _, s := range [][3]int{{16, 300, 40}, {4, 19, 33}, {10, 257, 17}} {
			m, k, n := s[0], s[1], s[2]
			a, b, c0 := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
			for _, x := range [][]float32{a, b, c0} {
				for i := range x {
					x[i] = gemmRand(r)
				}
			}
			for _, packed := range []bool{false, true} {
				for _, acc := range []bool{false, true} {
					var outs [2][]float32
					for i, w := range []*GemmVariant{v, &plain} {
						g, err := NewGemm(GemmConfig{M: m, N: n, K: k, Alpha: 1, Accumulate: acc}, w, Par{})
						if err != nil {
							t.Fatal(err)
						}
						args := &GemmArgs{A: a, B: b, C: append([]float32(nil), c0...)}
						if packed {
							args.PackedB, args.B = new(PackedB), nil
							if err := g.PackB(args.PackedB, b); err != nil {
								t.Fatal(err)
							}
						}
						if err := g.Run(args); err != nil {
							t.Fatal(err)
						}
						outs[i] = args.C
					}
					for i, x := range outs[0] {
						if math.Float32bits(x) != math.Float32bits(outs[1][i]) {
							t.Fatalf("%s %v packed=%v acc=%v: C[%d] = %v, %v without the four-row kernel", v.Name, s, packed, acc, i, x, outs[1][i])
						}
					}
				}
			}
		}
	}
}
