package asm

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln/ops/cpuid"
)

// dispatchedFeatures reports the variant every kernel family dispatches
// to by default: the registry's choices, and the variants the constructors
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
	// Every family that picks its own variant and must run one (not an
	// optional speed-up, not one that follows the GEMM's choice: "conv
	// (implicit gemm)" below checks that choice), as the registry
	// reports it.
	var fs []familyFeature
	for _, f := range Families() {
		if !f.Optional && f.Follows == "" {
			fs = append(fs, familyFeature{f.Name, f.Variants[f.Chosen].Feature, featuresOf(f)})
		}
	}
	gemms, rows, depthwises := featuresOf(gemmFamily.report()), featuresOf(rowFamily.report()), featuresOf(depthwiseFamily.report())
	return append(fs,
		familyFeature{"gemm plan", gemm.v.Feature, gemms},
		familyFeature{"transpose", tr.k.Feature, rows},
		familyFeature{"conv (implicit gemm)", conv.v.Feature, gemms},
		familyFeature{"conv (depthwise)", depthwise.dw.k.feature, depthwises},
		familyFeature{"pool", pool.k.Feature, rows},
	)
}

// featuresOf lists the features of a family's variants.
func featuresOf(f Family) []cpuid.Variant {
	fs := make([]cpuid.Variant, len(f.Variants))
	for i, v := range f.Variants {
		fs[i] = v.Feature
	}
	return fs
}

// familyFeature is a kernel family, the variant it dispatches to and the
// variants it has on this machine.
type familyFeature struct {
	name string
	v    cpuid.Variant
	has  []cpuid.Variant
}

// requiredFeature is what KILN_TEST_REQUIRE=want asks of a family that
// has the variants in has: want itself, except that AVX-512 lands family
// by family, so a family without an avx512 variant must still dispatch
// to avx2 (never to its Go twins).
func requiredFeature(want cpuid.Variant, has []cpuid.Variant) cpuid.Variant {
	if want == cpuid.AVX512 && !slices.Contains(has, cpuid.AVX512) {
		return cpuid.AVX2
	}
	return want
}

// TestRequireFeature fails CI when KILN_TEST_REQUIRE names a variant
// (avx2, avx512, neon) that some kernel family does not dispatch to (see
// requiredFeature for the families that have no avx512 variant yet): a
// family left on its Go twins would otherwise pass every test, since the
// twins are correct, just slow.
func TestRequireFeature(t *testing.T) {
	got := dispatchedFeatures(t)
	var s []string
	for _, f := range got {
		s = append(s, fmt.Sprintf("%s=%s", f.name, f.v))
	}
	want := cpuid.Variant(os.Getenv("KILN_TEST_REQUIRE"))
	if want == "" {
		t.Skipf("KILN_TEST_REQUIRE unset, dispatch not enforced (%s)", strings.Join(s, ", "))
	}
	t.Logf("dispatch: %s", strings.Join(s, ", "))
	for _, f := range got {
		if req := requiredFeature(want, f.has); f.v != req {
			t.Errorf("KILN_TEST_REQUIRE=%s but %s dispatches to %s, not %s (family has %v; supported %v, chosen %s)",
				want, f.name, f.v, req, f.has, cpuid.Detect().Supported, cpuid.Chosen())
		}
	}
}

// TestRequiredFeature pins the family-by-family rule.
func TestRequiredFeature(t *testing.T) {
	for _, c := range []struct {
		want cpuid.Variant
		has  []cpuid.Variant
		req  cpuid.Variant
	}{
		{cpuid.AVX512, []cpuid.Variant{cpuid.AVX512, cpuid.AVX2, cpuid.Generic}, cpuid.AVX512},
		{cpuid.AVX512, []cpuid.Variant{cpuid.AVX2, cpuid.Generic}, cpuid.AVX2},
		{cpuid.AVX512, []cpuid.Variant{cpuid.Generic}, cpuid.AVX2}, // a family on its twins still fails
		{cpuid.AVX2, []cpuid.Variant{cpuid.AVX512, cpuid.AVX2, cpuid.Generic}, cpuid.AVX2},
		{cpuid.NEON, []cpuid.Variant{cpuid.Generic}, cpuid.NEON},
	} {
		if got := requiredFeature(c.want, c.has); got != c.req {
			t.Errorf("requiredFeature(%s, %v) = %s, want %s", c.want, c.has, got, c.req)
		}
	}
}
