package asm

import "testing"

// FuzzGemmZip runs a fuzz-chosen zip-stored product (small even M, N
// and K including 0, segment width and stride, batch, bias,
// accumulate, A transposed, serial or parallel) whose operands, old
// outputs and bias hold fuzz-chosen values with NaN, ±Inf, ±0 and
// subnormals, on every variant (also with tiny cache blocks), against
// the same variant's plain product placed by hand (runZipCase): the zip
// kernels promise its bits.
func FuzzGemmZip(f *testing.F) {
	f.Add([]byte{6, 32, 5, 16, 0, 0})
	f.Add([]byte{13, 40, 9, 7, 3, 0xff, 1, 2, 3})
	f.Add([]byte{2, 17, 0, 1, 0, 0x1e})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		m, n, k := 2*(1+in.intn(20)), 1+in.intn(48), in.intn(40)
		width, extra := 1+in.intn(n), in.intn(5)
		flags := in.byte()
		c := zipCase{cfg: GemmConfig{M: m, N: n, K: k, TransA: flags&1 != 0, Alpha: 1, Accumulate: flags&2 != 0},
			width: width, extra: extra, batch: 1 + int(flags>>2&1), bias: int(flags >> 3 & 1), threads: 1 + int(flags>>4&3)}
		vals := in.floats(64, 4)
		for _, v := range gemmTestVariants() {
			runZipCase(t, v, c, vals)
		}
	})
}
