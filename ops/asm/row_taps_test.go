package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLerpTapsRows checks every variant's LerpTaps against lerpRef (each
// product and the sum rounded to float32, in float64) on taps scattered
// anywhere in the source (the twin's path) and on taps that follow the
// output as a resize's do (the permute kernel's path, checked to be
// taken where upsampling), over sources of several lengths (first and
// last index included, so the masked loads meet the end),
// every output length of rowLengths, misaligned starts, special values,
// guard words around the output, inputs unchanged.
func TestLerpTapsRows(t *testing.T) {
	for _, k := range RowVariants() {
		for _, n := range rowLengths() {
			for off := range 6 {
				local := off >= 3
				r := rand.New(rand.NewPCG(uint64(n), uint64(off+11)))
				srcLen := 1 + r.IntN(2*n+3)
				x := make([]float32, srcLen+off)[off:]
				specialRow(r, x, 3, off%3 == 1)
				i0, i1 := make([]int32, n), make([]int32, n)
				w0, w1 := make([]float32, n), make([]float32, n)
				for o := range n {
					i0[o], i1[o] = int32(r.IntN(srcLen)), int32(r.IntN(srcLen))
					if local { // within [o·srcLen/n - 4, o·srcLen/n + 8)
						c := o * srcLen / n
						i0[o] = int32(min(max(c+r.IntN(12)-4, 0), srcLen-1))
						i1[o] = int32(min(max(c+r.IntN(12)-4, 0), srcLen-1))
					}
					w0[o], w1[o] = r.Float32(), r.Float32()*2-0.5
				}
				if n > 1 {
					i0[0], i1[n-1] = 0, int32(srcLen-1)
				}
				tp, err := NewTaps(i0, i1, w0, w1, srcLen)
				if err != nil {
					t.Fatal(err)
				}
				if local && n >= tapsBlock && srcLen <= n && tp.base == nil { // a block spans at most 16 + 11 sources
					t.Fatalf("n=%d srcLen=%d: local taps not laid out for the permute kernel", n, srcLen)
				}
				x0 := append([]float32(nil), x...)
				y := newGuarded(n, off)
				k.LerpTaps(y.Data, x, tp)
				y.check(t, "LerpTaps")
				for o, v := range y.Data {
					want := lerpRef(w0[o], x0[i0[o]], w1[o], x0[i1[o]])
					if math.Float32bits(v) != math.Float32bits(want) && !(v != v && want != want) {
						t.Fatalf("%s n=%d off=%d: y[%d] = %v, want %v", k.Name, n, off, o, v, want)
					}
				}
				for i := range x {
					if math.Float32bits(x[i]) != math.Float32bits(x0[i]) {
						t.Fatalf("%s n=%d: input %d changed", k.Name, n, i)
					}
				}
			}
		}
	}
}

// TestNewTapsErrors checks that taps outside the source or of unequal
// lengths are refused when made, before any gather.
func TestNewTapsErrors(t *testing.T) {
	w := []float32{0.5, 0.5}
	for _, c := range []struct {
		i0, i1 []int32
		w1     []float32
		srcLen int
	}{
		{[]int32{0, 2}, []int32{1, 1}, w, 2},
		{[]int32{0, -1}, []int32{1, 1}, w, 2},
		{[]int32{0, 1}, []int32{1, 3}, w, 3 - 1},
		{[]int32{0, 1}, []int32{1}, w, 2},
		{[]int32{0, 1}, []int32{1, 1}, w[:1], 2},
	} {
		if _, err := NewTaps(c.i0, c.i1, w, c.w1, c.srcLen); err == nil {
			t.Errorf("NewTaps(%v, %v, %d sources) gave no error", c.i0, c.i1, c.srcLen)
		}
	}
	if _, err := NewTaps([]int32{0, 1}, []int32{1, 0}, w, w, 2); err != nil {
		t.Errorf("valid taps refused: %v", err)
	}
}

// TestLerpTapsBand checks LerpTapsRows against lerpRef, bit for bit, on
// every variant: align_corners-style taps (2× and 4× upsampling, which
// the band kernel takes: groups of four blocks, then single masked
// blocks to the source's end, then the tail outputs) and taps anywhere
// (LerpTaps per row), bands of one and several rows, special values,
// guard words around the output, inputs unchanged.
func TestLerpTapsBand(t *testing.T) {
	band := false // a variant with the band kernel ran it on groups
	for _, k := range RowVariants() {
		for _, n := range []int{16, 48, 64, 65, 128, 256, 259} {
			for c, w := range []int{(n + 1) / 2, n/4 + 1, n} {
				for _, rows := range []int{1, 3, 9} {
					r := rand.New(rand.NewPCG(uint64(n*10+c), uint64(rows)))
					i0, i1 := make([]int32, n), make([]int32, n)
					w0, w1 := make([]float32, n), make([]float32, n)
					for o := range n {
						s := float64(o) * float64(w-1) / float64(max(n-1, 1)) // align_corners
						i0[o], i1[o] = int32(s), int32(min(int(s)+1, w-1))
						if c == 2 { // anywhere
							i0[o], i1[o] = int32(r.IntN(w)), int32(r.IntN(w))
						}
						w0[o], w1[o] = r.Float32(), r.Float32()*2-0.5
					}
					tp, err := NewTaps(i0, i1, w0, w1, w)
					if err != nil {
						t.Fatal(err)
					}
					band = band || k.lerpTapsRows != nil && tp.full >= 4
					x := make([]float32, rows*w)
					specialRow(r, x, 3, c == 1)
					x0 := append([]float32(nil), x...)
					y := newGuarded(rows*n, c)
					k.LerpTapsRows(y.Data, x, tp, rows)
					y.check(t, "LerpTapsRows")
					for row := range rows {
						for o := range n {
							want := lerpRef(w0[o], x0[row*w+int(i0[o])], w1[o], x0[row*w+int(i1[o])])
							if got := y.Data[row*n+o]; !bitsEq(got, want) {
								t.Fatalf("%s n=%d w=%d rows=%d: row %d [%d] = %v, want %v", k.Name, n, w, rows, row, o, got, want)
							}
						}
					}
					if !slicesBitsEq(x, x0) {
						t.Fatalf("%s n=%d w=%d: input changed", k.Name, n, w)
					}
				}
			}
		}
	}
	if BestRows().lerpTapsRows != nil && !band {
		t.Error("the band kernel never ran on groups of blocks")
	}
}
