package asm

import (
	"math/rand/v2"
	"testing"
)

// TestBlendRowsBand checks BlendRows against lerpRef (Blend's definition
// from float64 arithmetic) for every variant: widths 1..40 and long rows
// (every vector tail of the 8- and 16-wide bodies), bands whose rows read
// any two rows of h (repeated, swapped, equal), a non-zero base,
// misaligned starts, NaN, ±Inf, ±0 and subnormals mixed in, guard words
// around the output, h checked unchanged.
func TestBlendRowsBand(t *testing.T) {
	widths := []int{1, 2, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 40, 127, 256, 259}
	for _, k := range RowVariants() {
		for _, width := range widths {
			for off := range 3 {
				r := rand.New(rand.NewPCG(uint64(width), uint64(off+5)))
				const hRows, rows, base = 5, 9, 3
				h := make([]float32, hRows*width+off)[off:] // misaligned rows
				specialRow(r, h, 3, off == 1)
				h0 := append([]float32(nil), h...)
				i0, i1 := make([]int32, rows), make([]int32, rows)
				w0, w1 := make([]float32, rows), make([]float32, rows)
				for i := range rows {
					i0[i], i1[i] = int32(base+r.IntN(hRows)), int32(base+r.IntN(hRows))
					w0[i], w1[i] = r.Float32(), float32(r.NormFloat64())
				}
				w0[0], w1[0] = 1, 0
				y := newGuarded(rows*width, off)
				k.BlendRows(y.Data, h, width, base, i0, i1, w0, w1)
				y.check(t, "BlendRows")
				for i := range rows {
					for j := range width {
						u, v := h0[(int(i0[i])-base)*width+j], h0[(int(i1[i])-base)*width+j]
						if got, want := y.Data[i*width+j], lerpRef(w0[i], u, w1[i], v); !bitsEq(got, want) {
							t.Fatalf("%s width=%d off=%d: row %d [%d] = %v, want %v (%v·%v + %v·%v)",
								k.Name, width, off, i, j, got, want, w0[i], u, w1[i], v)
						}
					}
				}
				if !slicesBitsEq(h, h0) {
					t.Fatalf("%s width=%d: h changed", k.Name, width)
				}
			}
		}
	}
}

// TestBlendRowsChecks: out-of-band rows, mismatched lengths and an output
// overlapping h panic rather than read or write out of bounds.
func TestBlendRowsChecks(t *testing.T) {
	k := BestRows()
	h := make([]float32, 12) // 3 rows of 4
	one := []float32{1}
	for name, f := range map[string]func(){
		"row below base": func() { k.BlendRows(make([]float32, 4), h, 4, 1, []int32{0}, []int32{1}, one, one) },
		"row past h":     func() { k.BlendRows(make([]float32, 4), h, 4, 0, []int32{0}, []int32{3}, one, one) },
		"dst length":     func() { k.BlendRows(make([]float32, 5), h, 4, 0, []int32{0}, []int32{1}, one, one) },
		"weights":        func() { k.BlendRows(make([]float32, 4), h, 4, 0, []int32{0}, []int32{1}, one, nil) },
		"width":          func() { k.BlendRows(nil, h, 0, 0, []int32{0}, []int32{1}, one, one) },
		"overlap":        func() { k.BlendRows(h[8:], h, 4, 0, []int32{0}, []int32{1}, one, one) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestBlendLerp2Band checks BlendLerp2 against lerpRef for every variant:
// v = wy0·s0 + wy1·s1 and then Lerp2's pairs from v, each step rounded
// as the contract says; widths 2..40 and long rows (every tail of the 8-
// and 16-pair steps), rows reading any two source rows, end outputs from
// random taps, misaligned output, specials mixed in, guard words around
// the output, x unchanged.
func TestBlendLerp2Band(t *testing.T) {
	widths := []int{2, 3, 8, 9, 10, 16, 17, 18, 24, 31, 33, 40, 128, 257}
	for _, k := range RowVariants() {
		for _, w := range widths {
			for off := range 3 {
				r := rand.New(rand.NewPCG(uint64(w), uint64(off+9)))
				const xRows, rows = 4, 7
				x := make([]float32, xRows*w)
				specialRow(r, x, 3, off == 1)
				x0 := append([]float32(nil), x...)
				i0, i1 := make([]int32, rows), make([]int32, rows)
				wy0, wy1 := make([]float32, rows), make([]float32, rows)
				for i := range rows {
					i0[i], i1[i] = int32(r.IntN(xRows)), int32(r.IntN(xRows))
					wy0[i], wy1[i] = r.Float32(), float32(r.NormFloat64())
				}
				a, b := float32(0.75), float32(0.25)
				if off == 2 {
					a, b = 0.3, -1.7
				}
				ends := &Lerp2Ends{I: [4]int32{0, int32(r.IntN(w)), int32(w - 1), int32(r.IntN(w))},
					W: [4]float32{1, 0, r.Float32(), float32(r.NormFloat64())}}
				y := newGuarded(rows*2*w, off)
				k.BlendLerp2(y.Data, x, w, i0, i1, wy0, wy1, a, b, ends)
				y.check(t, "BlendLerp2")
				for i := range rows {
					v := make([]float32, w)
					for j := range v {
						v[j] = lerpRef(wy0[i], x0[int(i0[i])*w+j], wy1[i], x0[int(i1[i])*w+j])
					}
					row := y.Data[i*2*w : (i+1)*2*w]
					for e, o := range []int{0, 2*w - 1} {
						want := lerpRef(ends.W[2*e], v[ends.I[2*e]], ends.W[2*e+1], v[ends.I[2*e+1]])
						if !bitsEq(row[o], want) {
							t.Fatalf("%s w=%d off=%d: row %d end %d = %v, want %v", k.Name, w, off, i, o, row[o], want)
						}
					}
					for j := range w - 1 {
						p, q := lerpRef(a, v[j], b, v[j+1]), lerpRef(b, v[j], a, v[j+1])
						if !bitsEq(row[2*j+1], p) || !bitsEq(row[2*j+2], q) {
							t.Fatalf("%s w=%d off=%d: row %d pair %d = %v, %v, want %v, %v", k.Name, w, off, i, j, row[2*j+1], row[2*j+2], p, q)
						}
					}
				}
				if !slicesBitsEq(x, x0) {
					t.Fatalf("%s w=%d: x changed", k.Name, w)
				}
			}
		}
	}
}

// TestBlendTapsBand checks BlendTaps against lerpRef (v = wy0·s0 +
// wy1·s1, then each output's taps of v, every step rounded as the
// contract says) for every variant: output lengths across the 16-wide
// blocks and their tail, taps local (the permute layouts, blocks within
// 16 sources and within 32; align_corners taps at 2× and 4/3×, which the
// window layout takes) and anywhere (the twin), source rows chosen at
// random, specials mixed in, guard words around the output, x unchanged.
// The window primitive's twin is checked on its own too.
func TestBlendTapsBand(t *testing.T) {
	var sawNarrow, sawWide, sawWin, sawWin8 bool // the layouts' kernels ran
	defer func() {
		if !sawNarrow || !sawWide || BestRows().blendTapsWin != nil && !sawWin {
			t.Errorf("narrow taps tested %v, wide %v, window kernel %v", sawNarrow, sawWide, sawWin)
		}
		for _, k := range RowVariants() {
			if k.blendTapsWin8 != nil && !sawWin8 {
				t.Errorf("%s: the 8-wide window kernel never ran", k.Name)
			}
		}
	}()
	for _, k := range RowVariants() {
		for _, n := range []int{1, 15, 16, 17, 31, 32, 33, 48, 63, 100, 256, 259, 513} {
			for off := range 6 {
				local := off >= 2
				r := rand.New(rand.NewPCG(uint64(n), uint64(off+17)))
				w := 1 + r.IntN(n+3)
				switch off {
				case 3:
					w = 1 + n/4 // 4× upsampling: blocks span at most 16 sources
				case 4:
					w = (n + 1) / 2 // 2× align_corners
				case 5:
					w = 3*n/4 + 1
				}
				const xRows, rows = 4, 5
				x := make([]float32, xRows*w)
				specialRow(r, x, 3, off%2 == 1)
				x0 := append([]float32(nil), x...)
				ti0, ti1 := make([]int32, n), make([]int32, n)
				tw0, tw1 := make([]float32, n), make([]float32, n)
				for o := range n {
					ti0[o], ti1[o] = int32(r.IntN(w)), int32(r.IntN(w))
					if local {
						c := o * w / n
						ti0[o] = int32(min(max(c+r.IntN(12)-4, 0), w-1))
						ti1[o] = int32(min(max(c+r.IntN(12)-4, 0), w-1))
					}
					if off >= 4 { // align_corners
						s := o * (w - 1) / max(n-1, 1)
						ti0[o], ti1[o] = int32(s), int32(min(s+1, w-1))
					}
					tw0[o], tw1[o] = r.Float32(), r.Float32()*2-0.5
				}
				tp, err := NewTaps(ti0, ti1, tw0, tw1, w)
				if err != nil {
					t.Fatal(err)
				}
				if local && n >= tapsBlock && !k.BlendTapsVector(tp) && k.blendTaps != nil {
					t.Fatalf("%s n=%d w=%d: local taps not run by the vector kernel", k.Name, n, w)
				}
				if off >= 4 && n >= tapsBlock && (len(tp.win) == 0 || len(tp.win8) == 0) {
					t.Fatalf("n=%d w=%d: align_corners taps not laid out in windows (%d, %d words)", n, w, len(tp.win), len(tp.win8))
				}
				if tp.base != nil {
					sawNarrow, sawWide = sawNarrow || tp.narrow, sawWide || !tp.narrow
				}
				sawWin = sawWin || k.blendTapsWin != nil && k.BlendTapsVector(tp) && len(tp.win) > 0
				sawWin8 = sawWin8 || k.blendTapsWin == nil && k.blendTapsWin8 != nil && len(tp.win8) > 0
				i0, i1 := make([]int32, rows), make([]int32, rows)
				wy0, wy1 := make([]float32, rows), make([]float32, rows)
				for i := range rows {
					i0[i], i1[i] = int32(r.IntN(xRows)), int32(r.IntN(xRows))
					wy0[i], wy1[i] = r.Float32(), float32(r.NormFloat64())
				}
				y := newGuarded(rows*n, off)
				k.BlendTaps(y.Data, x, tp, i0, i1, wy0, wy1)
				y.check(t, "BlendTaps")
				yw := make([]float32, rows*n) // the window twins' whole blocks
				yw8 := make([]float32, rows*n)
				if blocks := len(tp.win) / winRec; blocks > 0 {
					blendTapsWinGo(tapsBlock, &yw[0], &x[0], w, n, &i0[0], &i1[0], &wy0[0], &wy1[0], rows, &tp.win[0], blocks)
				}
				if blocks := len(tp.win8) / 32; blocks > 0 {
					blendTapsWinGo(8, &yw8[0], &x[0], w, n, &i0[0], &i1[0], &wy0[0], &wy1[0], rows, &tp.win8[0], blocks)
				}
				for i := range rows {
					v := func(j int32) float32 {
						return lerpRef(wy0[i], x0[int(i0[i])*w+int(j)], wy1[i], x0[int(i1[i])*w+int(j)])
					}
					for o := range n {
						want := lerpRef(tw0[o], v(ti0[o]), tw1[o], v(ti1[o]))
						if got := y.Data[i*n+o]; !bitsEq(got, want) {
							t.Fatalf("%s n=%d w=%d off=%d: row %d [%d] = %v, want %v", k.Name, n, w, off, i, o, got, want)
						}
						if got := yw[i*n+o]; o < len(tp.win)/winRec*tapsBlock && !bitsEq(got, want) {
							t.Fatalf("blendTapsWinGo n=%d w=%d off=%d: row %d [%d] = %v, want %v", n, w, off, i, o, got, want)
						}
						if got := yw8[i*n+o]; o < len(tp.win8)/32*8 && !bitsEq(got, want) {
							t.Fatalf("blendTapsWinGo(8) n=%d w=%d off=%d: row %d [%d] = %v, want %v", n, w, off, i, o, got, want)
						}
					}
				}
				if !slicesBitsEq(x, x0) {
					t.Fatalf("%s n=%d: x changed", k.Name, n)
				}
			}
		}
	}
}
