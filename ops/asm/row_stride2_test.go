package asm

import (
	"math/rand/v2"
	"testing"
)

// TestAddStride2 checks AddStride2 against the float32 sums for every
// variant: lengths 1..40 and long rows (every tail of the 8- and
// 16-source steps), one to three rows at tight and loose strides,
// misaligned starts, specials mixed in; the odd elements between (and
// guard words around dst) keep their bits, src is unchanged.
func TestAddStride2(t *testing.T) {
	lengths := []int{1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 100, 259}
	for _, k := range RowVariants() {
		for _, n := range lengths {
			for off := range 3 {
				rows, ldd, lds := 1+off, 2*n-1+off*3, n+off
				r := rand.New(rand.NewPCG(uint64(n), uint64(off+13)))
				src := make([]float32, (rows-1)*lds+n+off)[off:]
				specialRow(r, src, 3, off == 1)
				src0 := append([]float32(nil), src...)
				d := newGuarded((rows-1)*ldd+2*n-1, off)
				specialRow(r, d.Data, 3, off == 1)
				want := append([]float32(nil), d.Data...)
				for i := range rows {
					for j := range n {
						want[i*ldd+2*j] += src0[i*lds+j]
					}
				}
				k.AddStride2(d.Data, ldd, src, lds, rows, n)
				d.check(t, "AddStride2")
				for i := range want {
					if !bitsEq(d.Data[i], want[i]) {
						t.Fatalf("%s n=%d off=%d: dst[%d] = %v, want %v", k.Name, n, off, i, d.Data[i], want[i])
					}
				}
				if !slicesBitsEq(src, src0) {
					t.Fatalf("%s n=%d: src changed", k.Name, n)
				}
			}
		}
	}
}

// TestAddStride2Checks: short operands and overlap panic.
func TestAddStride2Checks(t *testing.T) {
	k := BestRows()
	buf := make([]float32, 20)
	for name, f := range map[string]func(){
		"short dst":  func() { k.AddStride2(make([]float32, 4), 3, make([]float32, 3), 3, 1, 3) },
		"short src":  func() { k.AddStride2(make([]float32, 5), 5, make([]float32, 2), 3, 1, 3) },
		"rows meet":  func() { k.AddStride2(make([]float32, 9), 4, make([]float32, 6), 3, 2, 3) },
		"overlap":    func() { k.AddStride2(buf[:5], 5, buf[4:7], 3, 1, 3) },
		"negative n": func() { k.AddStride2(buf, 5, buf, 3, 1, -1) },
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
