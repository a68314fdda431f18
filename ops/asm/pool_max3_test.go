package asm

import (
	"math/rand/v2"
	"testing"
)

// TestMaxRow3S2 checks every maxRow3S2 kernel bit for bit against Go's
// builtin max (NaN, ±0 and ±Inf among the inputs) for row lengths over
// full vectors and every tail, with each input row fenced by
// inaccessible pages on the side its last read is, so a read past its
// 2n+1 floats faults.
func TestMaxRow3S2(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for _, ks := range append([]*convKernels{convKernelsGo}, convFamily.asm...) {
		if ks.maxRow3S2 == nil {
			continue
		}
		for n := 1; n <= 70; n++ {
			var rows [3][]float32
			for i := range rows {
				row, release := fencedFloats(t, 2*n+1, i == 1)
				defer release()
				copy(row, specialFloats(r, 2*n+1))
				rows[i] = row
			}
			y := newGuarded(n, 1)
			ks.maxRow3S2(&y.Data[0], &rows[0][0], &rows[1][0], &rows[2][0], n)
			y.check(t, string(ks.feature))
			for i, v := range y.Data {
				var cs []float32
				for _, row := range rows {
					cs = append(cs, row[2*i:2*i+3]...)
				}
				if want := builtinMax(cs...); !sameBits(v, want) {
					t.Fatalf("%s n=%d: y[%d] = %v, want %v (from %v)", ks.feature, n, i, v, want, cs)
				}
			}
		}
	}
}
