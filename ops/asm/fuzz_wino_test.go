package asm

import "testing"

// FuzzWinoKernels runs every variant's Winograd transforms, eight and
// sixteen tiles a call, against their Go twins bit for bit (NaN as NaN),
// on fuzz-chosen values with NaN, ±Inf, ±0, subnormals and the range's
// extremes, |x| sums to add to, patch row strides, value strides,
// offsets and output column counts; nothing past the values each call
// writes may change (wino16Same).
func FuzzWinoKernels(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 31})
	f.Add([]byte{3, 17, 5, 9, 2, 6, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	f.Add([]byte{60, 1, 30, 39, 1, 0, 0x81, 0x87, 4, 200, 6, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		wp, dstride, off := 34+in.intn(64), 16+in.intn(24), in.intn(4)
		cols := 1 + in.intn(32)
		sstride, ldy := (cols+1)/2+in.intn(24), cols+in.intn(40)
		bias := in.float(0)
		var acc0 [16]float32
		for i := range acc0 {
			acc0[i] = in.float(0)
		}
		// The values repeat with a period the strides rarely share.
		vals := in.floats(53, 0)
		src := make([]float32, off+3*wp+34)
		for i := range src {
			src[i] = vals[i%len(vals)]
		}
		m := make([]float32, 15*max(sstride, 8)+16)
		for i := range m {
			m[i] = vals[(i*7+3)%len(vals)]
		}
		for _, wk := range winoFamily.variants() {
			if wk.in16 != nil {
				wino16Same(t, wk, src[off:], wp, dstride, acc0, m, sstride, ldy, cols, bias)
			}
			if wk.in == nil {
				continue
			}
			// The eight-tile kernels: their twins' bits, all sixteen columns.
			got, want := make([]float32, 15*dstride+8), make([]float32, 15*dstride+8)
			accGot, accWant := *(*[8]float32)(acc0[:8]), *(*[8]float32)(acc0[:8])
			wk.in(&src[off], wp, &got[0], dstride, &accGot)
			winoInGo(&src[off], wp, &want[0], dstride, &accWant)
			winoSame(t, "in", got, want)
			winoSame(t, "in acc", accGot[:], accWant[:])
			ss := max(sstride, 8)
			yGot, yWant := make([]float32, ldy+16+16), make([]float32, ldy+16+16)
			wk.out(&m[0], ss, &yGot[0], ldy+16, bias)
			winoOutGo(&m[0], ss, &yWant[0], ldy+16, bias)
			winoSame(t, "out", yGot, yWant)
		}
	})
}
