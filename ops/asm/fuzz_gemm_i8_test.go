package asm

import (
	"math/rand/v2"
	"testing"
)

// FuzzGemmU8S8 runs a fuzz-chosen int8 product (M, N, K including 0 and
// the tails of every tile, K sometimes past a depth block, strides past
// the row, B transposed, one to three threads) whose A and B cycle
// through fuzz-chosen bytes, biased towards the extremes (0, 255, -128,
// 127), on every variant, against the plain loop (refU8S8), bit for bit,
// with the row sums.
func FuzzGemmU8S8(f *testing.F) {
	f.Add([]byte{7, 17, 5, 0, 0, 0})
	f.Add([]byte{13, 33, 200, 0x0f, 1, 2, 3, 0xff, 0x80, 0x7f})
	f.Add([]byte{1, 40, 130, 0x31, 255, 255, 128, 127})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		c := i8Case{m: in.intn(30), n: in.intn(70), k: in.intn(300)}
		flags := in.byte()
		if flags&1 != 0 {
			c.k += 1000 // past the first depth block (1024 steps) for most
		}
		if flags&2 != 0 {
			c.lda, c.ldb, c.ldc = in.intn(9), in.intn(9), in.intn(9)
		}
		c.transB = flags&4 != 0
		c.threads = 1 + int(flags>>3)%3
		extremes := []byte{0, 255, 0x80, 0x7f, 1, 0x81}
		vals := make([]byte, 1+in.intn(32))
		for i := range vals {
			v := in.byte()
			if v&0x80 != 0 {
				v = extremes[int(v)%len(extremes)]
			} else {
				v = in.byte()
			}
			vals[i] = v
		}
		pa, pb := 0, len(vals)/2
		c.aOf = func(*rand.Rand) uint8 { pa++; return vals[pa%len(vals)] }
		c.bOf = func(*rand.Rand) int8 { pb++; return int8(vals[pb%len(vals)]) }
		for _, v := range GemmU8S8Variants() {
			pa, pb = 0, len(vals)/2
			runI8Case(t, v, c, 1)
		}
	})
}
