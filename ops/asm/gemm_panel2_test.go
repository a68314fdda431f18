package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmPanel2 checks each variant's two-panel kernel, and its 4- and
// 8-row edge kernel, against two calls of its one-panel kernel, bit for
// bit: random depths (across the unrolled steps and the tail), one to
// four tiles, both flags (with no prefetch hint, the far one or the next
// panels' one, which change no bits), C rows wider than the tile, and
// guards around C (the edge kernels must not write past their rows).
func TestGemmPanel2(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	found := false
	for _, v := range GemmVariants() {
		if v.panel2 == nil {
			continue
		}
		found = true
		mr, nr := v.mr, v.nr
		for trial := range 60 {
			k := 1 + r.IntN(300)
			if trial < 4 {
				k = 1 + trial
			}
			tiles, ldc := 1+r.IntN(4), 2*nr+r.IntN(9)
			flags := uint(trial%2) | []uint{0, gemmPrefetchFar, gemmPrefetchNext}[trial/2%3] // hints change no bits
			a := make([]float32, tiles*mr*k)
			b0, b1 := make([]float32, k*nr), make([]float32, k*nr)
			for _, x := range [][]float32{a, b0, b1} {
				randRow(r, x, 1)
			}
			c0 := make([]float32, tiles*mr*ldc)
			randRow(r, c0, 1)
			want := append([]float32(nil), c0...)
			v.panel(tiles, k, &a[0], &b0[0], &want[0], ldc, flags&gemmAccumulate)
			v.panel(tiles, k, &a[0], &b1[0], &want[nr], ldc, flags&gemmAccumulate)
			got := newGuarded(len(c0)-(ldc-2*nr), 0) // C ends with the last tile row's 2NR columns
			copy(got.Data, c0)
			v.panel2(tiles, k, &a[0], &b0[0], &b1[0], &got.Data[0], ldc, flags)
			name := fmt.Sprintf("%s k=%d tiles=%d flags=%d", v.Name, k, tiles, flags)
			got.check(t, name)
			for i, w := range want[:len(got.Data)] {
				if math.Float32bits(got.Data[i]) != math.Float32bits(w) {
					t.Fatalf("%s: C[%d][%d] = %v, want %v (the one-panel kernel's bits)", name, i/ldc, i%ldc, got.Data[i], w)
				}
			}
			if v.edge2 == nil {
				continue
			}
			for _, rows := range []int{4, 8} {
				// Rows 0..rows-1 of the first tile, from the same A panel.
				edge := newGuarded((rows-1)*ldc+2*nr, 0)
				copy(edge.Data, c0)
				v.edge2(rows, k, &a[0], &b0[0], &b1[0], &edge.Data[0], ldc, flags)
				edge.check(t, fmt.Sprintf("%s edge %d", name, rows))
				for i, w := range want[:len(edge.Data)] {
					if math.Float32bits(edge.Data[i]) != math.Float32bits(w) {
						t.Fatalf("%s edge %d: C[%d][%d] = %v, want %v", name, rows, i/ldc, i%ldc, edge.Data[i], w)
					}
				}
			}
		}
	}
	if !found {
		t.Skip("no variant has a two-panel kernel on this CPU")
	}
}
