package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestZip2AddRows checks every variant's Zip2Add against its definition
// (the float32 sum a[i] + b, c[i] + b, interleaved), over every length
// of rowLengths, misaligned starts, special values, guard words around
// the output, inputs unchanged.
func TestZip2AddRows(t *testing.T) {
	for _, k := range RowVariants() {
		for _, n := range rowLengths() {
			for off := range 3 {
				r := rand.New(rand.NewPCG(uint64(n), uint64(off+23)))
				a, c := make([]float32, n+off)[off:], make([]float32, n)
				specialRow(r, a, 3, off == 1)
				specialRow(r, c, 3, off == 2)
				b := float32(r.NormFloat64())
				a0, c0 := append([]float32(nil), a...), append([]float32(nil), c...)
				y := newGuarded(2*n, off)
				k.Zip2Add(y.Data, a, c, b)
				y.check(t, "Zip2Add")
				for i := range n {
					for j, want := range [2]float32{a0[i] + b, c0[i] + b} {
						got := y.Data[2*i+j]
						if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
							t.Fatalf("%s n=%d off=%d: y[%d] = %v, want %v", k.Name, n, off, 2*i+j, got, want)
						}
					}
				}
				for i := range n {
					if math.Float32bits(a[i]) != math.Float32bits(a0[i]) || math.Float32bits(c[i]) != math.Float32bits(c0[i]) {
						t.Fatalf("%s n=%d: input %d changed", k.Name, n, i)
					}
				}
			}
		}
	}
}

// TestZipSumRows checks every variant's ZipSumRows against its
// definition (b plus each output's sources in list order, float32), over
// widths 1..70 and long rows (every tail of the 32-output step, odd
// widths whose last pair has no odd output), zero to sixteen sources
// split every way between even and odd, one to three rows at loose
// strides, sources at shifted starts, specials mixed in; guard words
// around dst, the gaps between its rows keep their bits, src unchanged.
func TestZipSumRows(t *testing.T) {
	widths := []int{100, 259}
	for w := 1; w <= 70; w++ {
		widths = append(widths, w)
	}
	for _, k := range RowVariants() {
		for _, w := range widths {
			r := rand.New(rand.NewPCG(uint64(w), 29))
			nt := r.IntN(17)
			ne := r.IntN(nt + 1)
			rows := 1 + w%3
			ldd, lds := w+w%4, (w+1)/2+2+w%3
			offs := make([]int, nt)
			for i := range offs {
				offs[i] = r.IntN(5)
			}
			src := make([]float32, 4+(rows-1)*lds+(w+1)/2)
			specialRow(r, src, 3, w%5 == 1)
			src0 := append([]float32(nil), src...)
			b := float32(r.NormFloat64())
			d := newGuarded((rows-1)*ldd+w, w%3)
			specialRow(r, d.Data, 1, false)
			want := zipSumWant(d.Data, ldd, src0, offs, ne, lds, rows, w, b)
			k.ZipSumRows(d.Data, ldd, src, offs, ne, lds, rows, w, b)
			d.check(t, "ZipSumRows")
			for i := range want {
				if !bitsEq(d.Data[i], want[i]) {
					t.Fatalf("%s w=%d %d sources (%d even) %d rows: dst[%d] = %v, want %v", k.Name, w, nt, ne, rows, i, d.Data[i], want[i])
				}
			}
			if !slicesBitsEq(src, src0) {
				t.Fatalf("%s w=%d: src changed", k.Name, w)
			}
		}
	}
}

// TestZipSumRowsChecks: sources past src, a short dst, too many sources
// and overlap panic.
func TestZipSumRowsChecks(t *testing.T) {
	k := BestRows()
	buf := make([]float32, 40)
	for name, f := range map[string]func(){
		"even source past src": func() { k.ZipSumRows(make([]float32, 5), 5, make([]float32, 4), []int{2}, 1, 0, 1, 5, 0) },
		"odd source past src":  func() { k.ZipSumRows(make([]float32, 6), 6, make([]float32, 4), []int{0, 2}, 1, 0, 1, 6, 0) },
		"rows past src":        func() { k.ZipSumRows(make([]float32, 8), 4, make([]float32, 4), []int{0}, 1, 3, 2, 4, 0) },
		"short dst":            func() { k.ZipSumRows(make([]float32, 7), 4, make([]float32, 8), nil, 0, 2, 2, 4, 0) },
		"17 sources":           func() { k.ZipSumRows(make([]float32, 4), 4, make([]float32, 8), make([]int, 17), 0, 0, 1, 4, 0) },
		"negative offset":      func() { k.ZipSumRows(make([]float32, 4), 4, make([]float32, 8), []int{-1}, 1, 0, 1, 4, 0) },
		"overlap":              func() { k.ZipSumRows(buf[:8], 8, buf[4:20], []int{0}, 1, 0, 1, 8, 0) },
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

// zipSumWant is ZipSumRows's definition: dst (copied) with each row's
// first w outputs b plus their sources, summed in list order in float32.
func zipSumWant(dst []float32, ldd int, src []float32, offs []int, ne, lds, rows, w int, b float32) []float32 {
	want := append([]float32(nil), dst...)
	for row := range rows {
		for o := range w {
			lo, hi := 0, ne
			if o%2 == 1 {
				lo, hi = ne, len(offs)
			}
			v := b
			for _, off := range offs[lo:hi] {
				v += src[off+row*lds+o/2]
			}
			want[row*ldd+o] = v
		}
	}
	return want
}
