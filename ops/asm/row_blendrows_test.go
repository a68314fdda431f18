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
