package asm

import (
	"slices"
	"testing"
)

// FuzzConv2DDepthwise runs a fuzz-chosen depthwise convolution (one or
// two images, one to three channels plus 0, 7, 14 or 30 (partial and
// whole groups of the interleaved path) with multiplier 1 or 2, planes
// up to 20×24, kernels up to 7×7, strides 1-3, dilations 1-2, pads 0-3
// on each side, bias or not, one or two workers, the plane or the
// channel-interleaved path) whose input, weights and bias hold
// fuzz-chosen values with NaN, ±Inf, ±0 and subnormals, on every
// depthwise variant, against convRef (padding a zero the weights
// multiply), NaN-aware; the assembly variants must agree to the bit. Finite values stay within ±4 so that float32
// overflow, where the float64 reference would not overflow, cannot
// occur.
func FuzzConv2DDepthwise(f *testing.F) {
	f.Add([]byte{0, 2, 6, 6, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 1})
	f.Add([]byte{1, 1, 13, 17, 4, 4, 1, 1, 1, 0, 2, 2, 0, 1, 0x81, 7, 9, 11})
	f.Add([]byte{0, 0, 0, 0, 6, 6, 2, 2, 0, 1, 3, 3, 3, 3, 1, 0x87, 0x01})
	f.Add([]byte{0, 2, 6, 6, 4, 4, 0, 0, 0, 0, 1, 2, 2, 2, 2, 0x3d, 0x83, 5})   // 7×7 5×5, 33·2 channels, interleaved
	f.Add([]byte{1, 0, 13, 13, 2, 2, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0x1c, 3, 0x90}) // 14×14 3×3 stride 2, 15 channels, interleaved
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		n, c := 1+in.intn(2), 1+in.intn(3)
		tg := tgeom{N: n, C: c, H: 1 + in.intn(20), W: 1 + in.intn(24), KH: 1 + in.intn(7), KW: 1 + in.intn(7),
			SH: 1 + in.intn(3), SW: 1 + in.intn(3), DH: 1 + in.intn(2), DW: 1 + in.intn(2), Groups: c}
		mult := 1 + in.intn(2)
		tg.PT, tg.PL, tg.PB, tg.PR = in.intn(4), in.intn(4), in.intn(4), in.intn(4)
		flags := in.byte()
		bias, threads := flags&1 != 0, 1+int(flags>>1&1)
		path := dwPaths[flags>>2&1].path
		c += []int{0, 7, 14, 30}[flags>>3&3]
		tg.C, tg.M, tg.Groups = c, c*mult, c
		g := tg.normalised()
		if g.OH == 0 || g.OW == 0 {
			return
		}
		vals := in.floats(64, 4)
		p := 0
		next := func() float32 { p++; return vals[p%len(vals)] }
		x, w := make([]float32, g.N*g.C*g.H*g.W), make([]float32, g.M*g.KH*g.KW)
		var b []float32
		for _, s := range [][]float32{x, w} {
			for i := range s {
				s[i] = next()
			}
		}
		if bias {
			b = make([]float32, g.M)
			for i := range b {
				b[i] = next()
			}
		}
		want, mag := convRef(g, x, w, b)
		var first []float32 // the first assembly variant's
		for _, v := range depthwiseVariants() {
			y := newGuarded(len(want), 1)
			if err := newDepthwisePath(t, g, bias, false, v, goPar(threads), path).Run(y.Data, x, w, b); err != nil {
				t.Fatal(err)
			}
			y.check(t, v.name)
			for i, got := range y.Data {
				if !dwClose(got, want[i], mag[i], 1e-5) {
					t.Fatalf("%s %+v bias=%v path %d: element %d = %v, want %v", v.name, g, bias, path, i, got, want[i])
				}
			}
			if v == depthwiseGo {
				continue
			}
			if first == nil {
				first = y.Data
			} else if !slices.EqualFunc(y.Data, first, dwSameBits) {
				t.Fatalf("%s %+v path %d: differs from the first assembly variant", v.name, g, path)
			}
		}
	})
}
