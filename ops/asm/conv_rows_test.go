package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestConvRowsKernels checks the packers of panels spanning rows against
// their definition, on random segmentations of 1 to 16 lanes at strides
// 1 and 2, with the cells read touching both ends of src (fenced by
// inaccessible pages where the OS allows, so a lane read outside faults)
// and guards around dst (a lane the kernel reads outside src faults: see
// fencedFloats).
func TestConvRowsKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	found := false
	for _, ks := range convFamily.asm {
		for _, stride := range []int{1, 2} {
			k := ks.rowsKernel(stride)
			if k == nil {
				continue
			}
			found = true
			for trial := range 300 {
				cols := 1 + r.IntN(16)
				if trial%3 == 0 {
					cols = 16
				}
				n := 1 + r.IntN(9)
				checkConvRows(t, fmt.Sprintf("%s/s%d/%d", ks.feature, stride, trial), k, r, stride, cols, n, trial%2 == 0)
			}
		}
	}
	if !found {
		t.Skip("no assembly packer of panels spanning rows on this architecture")
	}
}

// checkConvRows runs k on one random panel of cols lanes and n taps.
func checkConvRows(t *testing.T, name string, k convRowsKernel, r *rand.Rand, stride, cols, n int, fenceStart bool) {
	type seg struct{ at, n, src int }
	var segs []seg
	reach := 0
	for at := 0; at < cols; {
		ln := 1 + r.IntN(cols-at)
		s := seg{at, ln, r.IntN(40)}
		if at == 0 {
			s.src = 0 // the first tap's first lane reads src[0]
		}
		segs = append(segs, s)
		reach = max(reach, s.src+(ln-1)*stride)
		at += ln
	}
	off := make([]int, n)
	for i := 1; i < n; i++ {
		off[i] = off[i-1] + r.IntN(20)
	}
	size := off[n-1] + reach + 1 // the last tap's furthest lane reads the last cell
	src, release := fencedFloats(t, size, fenceStart)
	defer release()
	for i := range src {
		src[i] = float32(r.NormFloat64())
	}
	var ks convSegs
	for i, s := range segs {
		ks[i] = makeConvSeg(s.at, s.n, s.src, stride)
	}
	dst := newGuarded(16*n, 1)
	for i := range dst.Data {
		dst.Data[i] = -7 // not zero: the kernel must clear the lanes past cols
	}
	k(&dst.Data[0], &src[0], &off[0], n, len(segs), ks)
	dst.check(t, name)
	for s := range n {
		want := make([]float32, 16)
		for _, sg := range segs {
			for t := range sg.n {
				want[sg.at+t] = src[off[s]+sg.src+t*stride]
			}
		}
		for l, w := range want {
			if got := dst.Data[16*s+l]; got != w {
				t.Fatalf("%s: tap %d lane %d = %v, want %v (segments %v)", name, s, l, got, w, segs)
			}
		}
	}
}
