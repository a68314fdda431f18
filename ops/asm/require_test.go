package asm

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kilnml/kiln/ops/cpu"
)

// dispatchedFeatures reports the variant every kernel family dispatches
// to by default: the Best* choices, and the variants the constructors
// pick when given nil (a constructor wired to the wrong default would
// slip past the Best* functions).
func dispatchedFeatures(t *testing.T) []familyFeature {
	t.Helper()
	gemm, err := NewGemm(GemmConfig{M: 4, N: 4, K: 4, Alpha: 1}, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTranspose32([]int{16, 24}, []int{1, 0}, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	g := ConvGeom{N: 1, C: 4, H: 6, W: 6, M: 8, OH: 4, OW: 4, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}
	conv, err := NewConv2D(g, false, nil, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	dw := g
	dw.M, dw.Groups = 4, 4
	depthwise, err := NewConv2D(dw, false, nil, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := NewPool2D(dw, true, false, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	return []familyFeature{
		{"gemm", BestGemm().Feature},
		{"gemm plan", gemm.v.Feature},
		{"elementwise", BestEw().Feature},
		{"rows (softmax, norms, reductions)", BestRows().Feature},
		{"transpose", tr.k.Feature},
		{"conv (implicit gemm)", conv.v.Feature},
		{"conv (depthwise)", depthwise.k.Feature},
		{"pool", pool.k.Feature},
	}
}

// familyFeature is a kernel family and the variant it dispatches to.
type familyFeature struct {
	name string
	v    cpu.Variant
}

// TestRequireFeature fails CI when KILN_TEST_REQUIRE names a variant
// (avx2, avx512, neon) that some kernel family does not dispatch to: a
// family left on its Go twins would otherwise pass every test, since the
// twins are correct, just slow.
func TestRequireFeature(t *testing.T) {
	got := dispatchedFeatures(t)
	want := cpu.Variant(os.Getenv("KILN_TEST_REQUIRE"))
	if want == "" {
		var s []string
		for _, f := range got {
			s = append(s, fmt.Sprintf("%s=%s", f.name, f.v))
		}
		t.Skipf("KILN_TEST_REQUIRE unset, dispatch not enforced (%s)", strings.Join(s, ", "))
	}
	for _, f := range got {
		if f.v != want {
			t.Errorf("KILN_TEST_REQUIRE=%s but %s dispatches to %s (supported %v, chosen %s)",
				want, f.name, f.v, cpu.Detect().Supported, cpu.Chosen())
		}
	}
}
