package asm

import (
	"slices"
	"testing"

	"github.com/kilnml/kiln/ops/cpuid"
)

// testVariant is a kernel table for registry tests.
type testVariant struct{ f cpuid.Variant }

func (v *testVariant) variantID() (string, cpuid.Variant) { return featureName(v.f), v.f }

func newTestSet(optional bool) *variantSet[*testVariant] {
	return &variantSet[*testVariant]{family: "test", optional: optional}
}

// TestVariantSetOrder checks add keeps the assembly best first whatever
// order the inits register it in, and that best takes the first variant
// cpuid.Allows, once.
func TestVariantSetOrder(t *testing.T) {
	twin := &testVariant{cpuid.Generic}
	s := newTestSet(false)
	s.twin = twin
	neon, avx2, avx512 := &testVariant{cpuid.NEON}, &testVariant{cpuid.AVX2}, &testVariant{cpuid.AVX512}
	s.add(avx2)
	s.add(neon, avx512)
	if want := []*testVariant{avx512, avx2, neon}; !slices.Equal(s.asm, want) {
		t.Fatalf("asm order %v, want avx512, avx2, neon", s.asm)
	}
	var want []*testVariant
	var best *testVariant
	for _, v := range s.asm {
		if slices.Contains(cpuid.Detect().Supported, v.f) {
			want = append(want, v)
		}
		if best == nil && cpuid.Allows(v.f) {
			best = v
		}
	}
	want = append(want, twin)
	if best == nil {
		best = twin
	}
	if got := s.variants(); !slices.Equal(got, want) {
		t.Errorf("variants %v, want %v", got, want)
	}
	if got := s.best(); got != best {
		t.Errorf("best %v, want %v", got, best)
	}
	if got := s.forFeature(cpuid.AVX2); got != avx2 {
		t.Errorf("forFeature(avx2) = %v", got)
	}
	if got := s.forFeature(cpuid.Generic); got != twin {
		t.Errorf("forFeature(generic) = %v, want the twin", got)
	}
	if got := s.named("go"); got != twin {
		t.Errorf(`named("go") = %v, want the twin`, got)
	}
	defer func() {
		if recover() == nil {
			t.Error("add after best did not panic")
		}
	}()
	s.add(&testVariant{cpuid.AVX2})
}

// TestVariantSetOptional checks an optional family without a variant
// for the CPU chooses none, and a follower takes its leader's feature.
func TestVariantSetOptional(t *testing.T) {
	s := newTestSet(true)
	s.gate = func() bool { return false }
	s.add(&testVariant{cpuid.AVX2}, &testVariant{cpuid.NEON})
	if got := s.best(); got != nil {
		t.Errorf("gated optional family chose %v", got)
	}
	if got := s.variants(); len(got) != 0 {
		t.Errorf("gated optional family lists %v", got)
	}
	if got := s.forFeature(cpuid.AVX512); got != nil {
		t.Errorf("optional family has no avx512 variant, got %v", got)
	}
	leader := newTestSet(false)
	leader.twin = &testVariant{cpuid.Generic}
	f := newTestSet(true)
	f.follows = leader
	f.add(&testVariant{cpuid.AVX512}, &testVariant{cpuid.AVX2}, &testVariant{cpuid.NEON})
	if got, want := f.best(), f.forFeature(cpuid.Generic); got != want || got != nil {
		t.Errorf("follower of a twin-only family chose %v", got)
	}
	if r := f.report(); r.Follows != "test" || r.Chosen != -1 || !r.Optional {
		t.Errorf("follower report %+v", r)
	}
}

// TestFamilies checks the report names each family's dispatch choice as
// the package's Best functions and constructors see it.
func TestFamilies(t *testing.T) {
	chosen := map[string]string{}
	for _, f := range Families() {
		if len(f.Variants) == 0 && f.Chosen != -1 || f.Chosen >= len(f.Variants) || f.Chosen < -1 {
			t.Errorf("%s: chosen %d of %d variants", f.Name, f.Chosen, len(f.Variants))
			continue
		}
		if f.Chosen < 0 {
			if !f.Optional {
				t.Errorf("%s chose nothing but is not optional", f.Name)
			}
			chosen[f.Name] = ""
			continue
		}
		chosen[f.Name] = f.Variants[f.Chosen].Name
	}
	bf16 := ""
	if v := BestGemmBF16(); v != nil {
		bf16 = v.Name
	}
	wino := ""
	if w := winoKernelsFor(BestGemm().Feature); w != nil {
		wino = string(w.feature)
	}
	for name, want := range map[string]string{
		"gemm": BestGemm().Name, "gemm-bf16": bf16, "elementwise": BestEw().Name, "rows": BestRows().Name,
		"depthwise": bestDepthwise().name, "conv": nameOf(convKernelsFor(BestGemm().Feature)), "winograd": wino,
	} {
		if got, ok := chosen[name]; !ok || got != want {
			t.Errorf("family %s reports %q (listed %v), want %q", name, got, ok, want)
		}
	}
}
