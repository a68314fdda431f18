package asm

import "testing"

// FuzzAffinePlanes runs every elementwise variant's AffinePlanes on
// fuzz-chosen planes (count, length, Relu, in place, misaligned dst)
// against the Go variant's plane-by-plane Mul, Add and Relu: the same
// bits, nothing written outside dst.
func FuzzAffinePlanes(f *testing.F) {
	f.Add([]byte{2, 17, 1, 0, 3, 0x81, 7, 9})
	f.Add([]byte{5, 64, 0, 1, 5, 0x87, 1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		planes, n, relu, inPlace, off := 1+in.intn(6), in.intn(70), in.byte()&1 == 1, in.byte()&1 == 1, in.intn(8)
		x, a, b := in.floats(planes*n, 0), in.floats(planes, 0), in.floats(planes, 0)
		want := make([]float32, len(x))
		if err := ewGo.AffinePlanes(want, x, n, a, b, relu); err != nil {
			t.Fatal(err)
		}
		for _, v := range EwVariants() {
			g := newGuarded(len(x), off)
			src := x
			if inPlace {
				copy(g.Data, x)
				src = g.Data
			}
			if err := v.AffinePlanes(g.Data, src, n, a, b, relu); err != nil {
				t.Fatal(err)
			}
			g.check(t, v.Name+" affine planes")
			if i := firstDiff(g.Data, want); i >= 0 {
				t.Fatalf("%s: %d planes of %d, relu %v: float %d = %v, twin %v", v.Name, planes, n, relu, i, g.Data[i], want[i])
			}
		}
	})
}

// FuzzTapPacker runs every tap packer on fuzz-chosen blocks (output
// channels, taps, input channels, weight stride, each tap's rows where
// the fuzzer puts them, channels contiguous or every other float) against the Go twin: the same floats and the
// same non-finite report, nothing written outside the rows.
func FuzzTapPacker(f *testing.F) {
	f.Add([]byte{11, 8, 2, 3, 1, 0, 2, 1, 7})
	f.Add([]byte{15, 15, 4, 0, 0x87, 3, 2, 1, 0, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		n, taps, c := 1+in.intn(TapPackerMax), 1+in.intn(TapPackerMax), 1+in.intn(4)
		spread, e := in.byte()&1 == 1, 1
		if spread {
			n, e = 1+(n-1)%(TapPackerMax/2), 2
		}
		ldw := n*taps + in.intn(4)
		w := in.floats((c-1)*ldw+n*taps, 0)
		off, step := make([]int, taps), make([]int, taps)
		size := 0
		for k := range taps {
			step[k] = e*n + in.intn(3)
			off[k] = size + in.intn(3)
			size = off[k] + (c-1)*step[k] + e*n
		}
		want := newGuarded(size, 0)
		bad := convTPackTapsGo(&want.Data[0], &w[0], c, ldw, n, taps, &off[0], &step[0], spread)
		for name, p := range tapPackers() {
			got := newGuarded(size, 0)
			pack := p.Pack
			if spread {
				pack = p.PackSpread
			}
			gotBad, err := pack(got.Data, w, c, ldw, n, off, step)
			if err != nil {
				t.Fatal(err)
			}
			got.check(t, name+" packed")
			if i := firstDiff(got.Data, want.Data); i >= 0 || gotBad != bad {
				t.Fatalf("%s: n %d, taps %d, c %d: float %d differs (non-finite %v, twin %v)", name, n, taps, c, i, gotBad, bad)
			}
		}
	})
}

// FuzzPadRows runs every padded-rows kernel on fuzz-chosen rows, widths
// and pads against the Go twin, nothing written outside the rows.
func FuzzPadRows(f *testing.F) {
	f.Add([]byte{3, 40, 1, 1})
	f.Add([]byte{1, 5, 17, 20, 0x81})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		rows, w, pl, pr := 1+in.intn(4), 1+in.intn(80), in.intn(21), in.intn(21)
		wp := pl + w + pr
		src := in.floats(rows*w, 0)
		masks := padMasks(w, wp, pl)
		want := make([]float32, rows*wp)
		padRowsGo(&want[0], &src[0], rows, w, wp, pl, &masks[0], len(masks))
		for _, k := range convFamily.asm {
			if k.padRows == nil {
				continue
			}
			got := newGuarded(rows*wp, in.intn(8))
			k.padRows(&got.Data[0], &src[0], rows, w, wp, pl, &masks[0], len(masks))
			got.check(t, "padded rows")
			if i := firstDiff(got.Data, want); i >= 0 {
				t.Fatalf("%s: rows %d, w %d, pads %d+%d: float %d = %v, twin %v", k.feature, rows, w, pl, pr, i, got.Data[i], want[i])
			}
		}
	})
}

// FuzzAvgRows2x2 runs every vector 2×2 average-pool kernel on
// fuzz-chosen rows against the Go twin's bits, nothing written outside
// the output.
func FuzzAvgRows2x2(f *testing.F) {
	f.Add([]byte{2, 9, 1, 0x81, 7})
	f.Add([]byte{0, 40, 0, 3, 0x87, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		rows, ow := 1+in.intn(3), 1+in.intn(41)
		w := 2*ow + in.intn(2)
		x := in.floats(2*rows*w, 0)
		want := make([]float32, rows*ow)
		avgRows2x2Go(&want[0], &x[0], rows, w, ow)
		for _, k := range poolFamily.asm {
			if k.avg2 == nil {
				continue
			}
			got := newGuarded(rows*ow, in.intn(8))
			k.avg2(&got.Data[0], &x[0], rows, w, ow)
			got.check(t, "avg rows")
			if i := firstDiff(got.Data, want); i >= 0 {
				t.Fatalf("%s: rows %d, w %d, ow %d: output %d = %v, twin %v", k.feature, rows, w, ow, i, got.Data[i], want[i])
			}
		}
	})
}
