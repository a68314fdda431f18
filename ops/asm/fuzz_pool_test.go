package asm

import (
	"math"
	"testing"
)

// FuzzPool2D runs a fuzz-chosen max or average pooling (one or two
// images, one to four channels, planes up to 24×70, windows up to 4×4 —
// or, with a flag, 3 wide at column stride 2, the planes of the max3S2
// kernels — strides 1-3, pads 0-2 on each side, one to three workers)
// over fuzz-chosen values with NaN, ±Inf, ±0 and subnormals, on every
// row variant, against poolRef: a max to the bit, an average within
// 1e-6 of the mean magnitude of its window (finite values within ±4:
// the float64 sums may differ in order; one float32 subnormal step for
// rounding near zero).
func FuzzPool2D(f *testing.F) {
	f.Add([]byte{0, 2, 20, 60, 2, 2, 1, 1, 1, 1, 1, 1, 0x03})   // the stem's window on a 21×61 plane
	f.Add([]byte{1, 1, 9, 33, 1, 3, 0, 1, 2, 0, 0, 2, 0x02, 7}) // 2 rows high, 3 wide, pads 2
	f.Add([]byte{0, 0, 5, 5, 3, 0, 2, 0, 1, 1, 1, 1, 0x08, 1})  // an average counting the padding
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		c := 1 + in.intn(4)
		tg := tgeom{N: 1 + in.intn(2), C: c, M: c, H: 1 + in.intn(24), W: 1 + in.intn(70), KH: 1 + in.intn(4), KW: 1 + in.intn(4),
			SH: 1 + in.intn(3), SW: 1 + in.intn(3), PT: in.intn(3), PL: in.intn(3), PB: in.intn(3), PR: in.intn(3)}
		flags := in.byte()
		isMax, threads := flags&1 != 0, 1+int(flags>>2&1)+int(flags>>4&1)
		if flags&2 != 0 {
			tg.KH, tg.KW, tg.SW = min(tg.KH, 3), 3, 2
		}
		countPad := flags&8 != 0
		g := tg.normalised()
		if g.OH <= 0 || g.OW <= 0 {
			return
		}
		maxAbs := float32(0)
		if !isMax {
			maxAbs = 4
		}
		vals := in.floats(97, maxAbs)
		x, abs := make([]float32, g.N*g.C*g.H*g.W), make([]float32, g.N*g.C*g.H*g.W)
		for i := range x {
			x[i] = vals[i%len(vals)]
			abs[i] = float32(math.Abs(float64(x[i])))
		}
		want, mag := poolRef(g, x, isMax, countPad), poolRef(g, abs, isMax, countPad)
		for _, k := range RowVariants() {
			p, err := NewPool2D(g, isMax, countPad, k, goPar(threads))
			if err != nil {
				t.Fatal(err)
			}
			y := newGuarded(len(want), 1)
			if err := p.Run(y.Data, x); err != nil {
				t.Fatal(err)
			}
			y.check(t, k.Name)
			for i, v := range y.Data {
				w := float32(want[i])
				if isMax && !sameBits(v, w) || !isMax && !closeTo(v, float64(w), 0, 1e-6*mag[i]+math.SmallestNonzeroFloat32) {
					t.Fatalf("%s %+v max=%v countPad=%v: element %d = %g, want %g (magnitude %g)", k.Name, g, isMax, countPad, i, v, want[i], mag[i])
				}
			}
		}
	})
}
