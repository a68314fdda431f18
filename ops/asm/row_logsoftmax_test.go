package asm

import (
	"math"
	"testing"
)

// A huge row max must not swallow log Σ: [m, m, 0...] gives -log 2 at the
// two maxima for every large m (this read 0 when max + log Σ was formed first).
func TestLogSoftmaxHugeMax(t *testing.T) {
	for _, m := range []float32{1e6, 3.8e29, 3e38} {
		x := []float32{m, m, 0, 0, 0, 0, 0, 0, 0}
		for _, k := range RowVariants() {
			dst := make([]float32, len(x))
			k.LogSoftmax(dst, x)
			want := -math.Log(2) // exp(0 - m) vanishes for these m
			if d := math.Abs(float64(dst[0]) - want); d > 1e-6 {
				t.Errorf("%s: LogSoftmax([%g, %g, 0...])[0] = %g, want %g", k.Name, m, m, dst[0], want)
			}
		}
	}
}
