// Package approx is kiln's one NaN-aware numeric comparison for tests:
// `math.Abs(got-want) > tol` is false when either side is NaN, so a
// kernel that writes NaN passes such a check. Far and Close treat NaN as
// equal only to NaN and an infinity only to the same infinity; Slices
// compares whole slices with go-cmp (cmpopts.EquateNaNs and
// EquateApprox) and reports where they differ.
package approx

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Close reports whether got is within tol of want (an absolute margin:
// callers scale it by the magnitude they expect). NaN is close only to
// NaN, an infinity only to itself, and a finite value never to NaN or
// an infinity.
func Close(got, want, tol float64) bool {
	switch {
	case math.IsNaN(got) || math.IsNaN(want):
		return math.IsNaN(got) && math.IsNaN(want)
	case math.IsInf(got, 0) || math.IsInf(want, 0):
		return got == want
	}
	return math.Abs(got-want) <= tol
}

// Far is !Close: the NaN-aware form of `math.Abs(got-want) > tol`.
func Far(got, want, tol float64) bool { return !Close(got, want, tol) }

// Slices fails t (naming what) when got and want differ in length or in
// any element beyond rel·min(|got|, |want|) or abs, whichever is larger
// (go-cmp's EquateApprox), NaN matching only NaN; it reports go-cmp's
// diff. It returns whether they matched.
func Slices[T float32 | float64](t testing.TB, what string, got, want []T, rel, abs float64) bool {
	t.Helper()
	if d := cmp.Diff(want, got, cmpopts.EquateNaNs(), cmpopts.EquateApprox(rel, abs)); d != "" {
		t.Errorf("%s: mismatch (-want +got):\n%s", what, truncate(d, 4000))
		return false
	}
	return true
}

// truncate shortens a long diff to n bytes.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("\n… (%d more bytes)", len(s)-n)
}
