package approx

import (
	"math"
	"testing"
)

func TestClose(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		got, want, tol float64
		close          bool
	}{
		{1, 1.05, 0.1, true},
		{1, 1.2, 0.1, false},
		{nan, 1, 1e9, false}, // math.Abs(NaN-1) > tol is false: the defect this package exists for
		{1, nan, 1e9, false},
		{nan, nan, 0, true},
		{inf, inf, 0, true},
		{inf, -inf, 1e300, false},
		{1e308, inf, 1e300, false},
	} {
		if got := Close(c.got, c.want, c.tol); got != c.close || Far(c.got, c.want, c.tol) == c.close {
			t.Errorf("Close(%v, %v, %v) = %v, want %v", c.got, c.want, c.tol, got, c.close)
		}
	}
}

func TestSlices(t *testing.T) {
	nan := float32(math.NaN())
	if !Slices(t, "equal", []float32{1, nan, 3}, []float32{1.0000001, nan, 3}, 1e-6, 0) {
		t.Error("equal slices reported different")
	}
	ft := &testing.T{}
	if Slices(ft, "nan", []float32{1, nan}, []float32{1, 2}, 1e-6, 1e9) {
		t.Error("a NaN matched a number")
	}
	if Slices(ft, "len", []float64{1}, []float64{1, 2}, 1, 1) {
		t.Error("different lengths matched")
	}
}
