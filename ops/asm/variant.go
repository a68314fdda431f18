package asm

import (
	"slices"
	"sync"

	"github.com/kilnml/kiln/ops/cpuid"
)

// The variant registry: every CPU kernel family keeps its
// implementations in one variantSet, and picks among them only through
// it. An architecture's init adds its assembly variants (add); the
// pure-Go twins are the set's fallback. Dispatch (best) is the first
// assembly variant cpuid.Allows (the CPU has its feature and KILN_CPU does
// not rule it out), chosen once; the variants a test runs (variants) are
// every one this CPU and build can run, whatever KILN_CPU says.
//
// The families, in the order reports list them (families), each filled
// by the init of the files named:
//
//	gemm        gemm_amd64.go (avx2), gemm512_amd64.go (avx512), gemm_arm64.go (neon)
//	gemm-bf16   gemm_bf16_amd64.go (avx512 with AVX512_BF16); optional
//	gemm-i8     gemm_i8_amd64.go (avx512 with AVX512_VNNI, avx2 with AVX-VNNI, avx2),
//	            gemm_i8_arm64.go (neon with the dot product); each registered
//	            only where the CPU has its dot-product instructions
//	elementwise ew_amd64.go (avx2), ew512_amd64.go (avx512), ew_arm64.go (neon)
//	rows        row_amd64.go (avx2), row512_amd64.go (avx512), row_arm64.go (neon)
//	depthwise   conv_depthwise_amd64.go (avx512, avx2), conv_depthwise_arm64.go (neon)
//	conv        conv_amd64.go (avx512, avx2): patch packers (avx512 also the stride-2
//	            phase product, conv_phase.go; the 4×4-input transposed convolution,
//	            conv_convt4.go; the tap packer, conv_packtaps.go; padded rows,
//	            conv_pad.go), by the GEMM's feature
//	pool        pool_max3s2_amd64.go (avx512; avx2 keeps the row folds): by the rows' feature
//	winograd    conv_wino_amd64.go (avx512: sixteen tiles a call, avx2): transforms, by the GEMM's feature; optional
//	fma-peak    fma_peak_amd64.go (avx512, avx2): the benchmarks' yardstick; optional
var (
	gemmFamily      = &variantSet[*GemmVariant]{family: "gemm", twin: gemmGo}
	gemmBF16Family  = &variantSet[*GemmBF16Variant]{family: "gemm-bf16", twin: gemmBF16Go, optional: true, gate: cpuid.HasBF16}
	gemmI8Family    = &variantSet[*GemmU8S8Variant]{family: "gemm-i8", twin: gemmU8S8Go}
	ewFamily        = &variantSet[*EwKernels]{family: "elementwise", twin: ewGo}
	rowFamily       = &variantSet[*RowKernels]{family: "rows", twin: rowsGo}
	depthwiseFamily = &variantSet[*depthwiseKernels]{family: "depthwise", twin: depthwiseGo}
	convFamily      = &variantSet[*convKernels]{family: "conv", twin: convKernelsGo, follows: gemmFamily}
	poolFamily      = &variantSet[*poolKernels]{family: "pool", twin: poolGo, follows: rowFamily}
	winoFamily      = &variantSet[*winoKernels]{family: "winograd", optional: true, follows: gemmFamily}
	fmaPeakFamily   = &variantSet[*fmaPeak]{family: "fma-peak", optional: true}
)

// kernelTable is what the registry needs of a family's kernel table: a
// pointer (nil for none) that names itself and the feature it needs.
type kernelTable interface {
	comparable
	variantID() (name string, feature cpuid.Variant)
}

// The families' kernel tables as the registry sees them.
func (v *GemmVariant) variantID() (string, cpuid.Variant)      { return v.Name, v.Feature }
func (v *GemmBF16Variant) variantID() (string, cpuid.Variant)  { return v.Name, v.Feature }
func (v *GemmU8S8Variant) variantID() (string, cpuid.Variant)  { return v.Name, v.Feature }
func (v *EwKernels) variantID() (string, cpuid.Variant)        { return v.Name, v.Feature }
func (v *RowKernels) variantID() (string, cpuid.Variant)       { return v.Name, v.Feature }
func (v *depthwiseKernels) variantID() (string, cpuid.Variant) { return v.name, v.feature }
func (v *convKernels) variantID() (string, cpuid.Variant)      { return featureName(v.feature), v.feature }
func (v *poolKernels) variantID() (string, cpuid.Variant)      { return featureName(v.feature), v.feature }
func (v *winoKernels) variantID() (string, cpuid.Variant)      { return featureName(v.feature), v.feature }
func (v *fmaPeak) variantID() (string, cpuid.Variant)          { return featureName(v.feature), v.feature }

// featureName names a variant after its feature, the twins "go".
func featureName(f cpuid.Variant) string {
	if f == cpuid.Generic {
		return "go"
	}
	return string(f)
}

// featureOf is the feature variant v needs.
func featureOf[V kernelTable](v V) cpuid.Variant {
	_, f := v.variantID()
	return f
}

// nameOf is what reports call variant v.
func nameOf[V kernelTable](v V) string {
	n, _ := v.variantID()
	return n
}

// families lists every set for reports (Families) and the dispatch test.
var families = []family{gemmFamily, gemmBF16Family, gemmI8Family, ewFamily, rowFamily, depthwiseFamily, convFamily, poolFamily, winoFamily, fmaPeakFamily}

// variantSet is one kernel family's implementations: the assembly
// variants, best first, and the pure-Go twin (nil where the family has
// none). V is a pointer to the family's kernel table.
type variantSet[V kernelTable] struct {
	family string // what reports call it
	twin   V      // the pure-Go twins, listed last; nil for none
	// optional: the family's assembly is a speed-up its callers can do
	// without. Where no assembly variant is allowed, best is nil (the
	// callers take another path) rather than the twin, and
	// KILN_TEST_REQUIRE does not hold the family to a feature.
	optional bool
	// gate is a CPU check that every assembly variant needs beyond its
	// feature (nil: none).
	gate func() bool
	// follows is the family whose choice this one takes (forFeature
	// with its feature) rather than choosing by itself; nil for none.
	follows family

	asm    []V // filled by add, best first
	once   sync.Once
	chosen V
	frozen bool // best has chosen: add would come too late
}

// featureOrder ranks the features best first; add keeps a family's
// assembly in this order whatever order the inits run in.
var featureOrder = []cpuid.Variant{cpuid.AVX512, cpuid.AVX2, cpuid.NEON, cpuid.Generic}

// add registers assembly variants; only architecture inits call it.
func (s *variantSet[V]) add(vs ...V) {
	if s.frozen {
		panic("asm: " + s.family + " variant registered after dispatch chose")
	}
	for _, v := range vs {
		rank := slices.Index(featureOrder, featureOf(v))
		at := len(s.asm)
		for i, w := range s.asm {
			if slices.Index(featureOrder, featureOf(w)) > rank {
				at = i
				break
			}
		}
		s.asm = slices.Insert(s.asm, at, v)
	}
}

// runs reports whether this CPU and build can run v (KILN_CPU aside).
func (s *variantSet[V]) runs(v V) bool {
	return slices.Contains(cpuid.Detect().Supported, featureOf(v)) && (s.gate == nil || s.gate())
}

// variants lists the variants this CPU and build can run, best first,
// ending with the twin. KILN_CPU does not shorten it (tests run them
// all).
func (s *variantSet[V]) variants() []V {
	var vs []V
	for _, v := range s.asm {
		if s.runs(v) {
			vs = append(vs, v)
		}
	}
	var none V
	if s.twin != none {
		vs = append(vs, s.twin)
	}
	return vs
}

// best is the variant kernels dispatch to, chosen once: the first
// assembly variant cpuid.Allows (which honours KILN_CPU) and the gate
// passes, else the twin (nil for an optional family); for a family that
// follows another, the variant of that family's chosen feature.
func (s *variantSet[V]) best() V {
	s.once.Do(func() {
		s.frozen = true
		if s.follows != nil {
			s.chosen = s.forFeature(s.follows.chosenFeature())
			return
		}
		for _, v := range s.asm {
			if cpuid.Allows(featureOf(v)) && (s.gate == nil || s.gate()) {
				s.chosen = v
				return
			}
		}
		if !s.optional {
			s.chosen = s.twin
		}
	})
	return s.chosen
}

// forFeature is the variant of feature f, for a family that follows
// another's choice (conv and winograd follow the GEMM's): the twin (nil
// for an optional family) where f has none.
func (s *variantSet[V]) forFeature(f cpuid.Variant) V {
	for _, v := range s.asm {
		if featureOf(v) == f {
			return v
		}
	}
	if s.optional {
		var none V
		return none
	}
	return s.twin
}

// named is the variant called name if this machine can run it, else nil.
func (s *variantSet[V]) named(name string) V {
	for _, v := range s.variants() {
		if nameOf(v) == name {
			return v
		}
	}
	var none V
	return none
}

// family is a variantSet of any kernel type, as reports and followers
// see it.
type family interface {
	familyName() string
	report() Family
	chosenFeature() cpuid.Variant
}

// familyName is what reports call the family.
func (s *variantSet[V]) familyName() string { return s.family }

// chosenFeature is the feature of the variant best chose (Generic where
// none).
func (s *variantSet[V]) chosenFeature() cpuid.Variant {
	var none V
	if v := s.best(); v != none {
		return featureOf(v)
	}
	return cpuid.Generic
}

// report describes the set.
func (s *variantSet[V]) report() Family {
	f := Family{Name: s.family, Chosen: -1, Optional: s.optional}
	if s.follows != nil {
		f.Follows = s.follows.familyName()
	}
	best := s.best()
	for i, v := range s.variants() {
		f.Variants = append(f.Variants, VariantInfo{Name: nameOf(v), Feature: featureOf(v)})
		if v == best {
			f.Chosen = i
		}
	}
	return f
}

// Family describes one kernel family for reports (kiln info).
type Family struct {
	Name string
	// Variants are those this CPU and build can run, best first, the
	// pure-Go twins last.
	Variants []VariantInfo
	// Chosen indexes the variant kernels dispatch to; -1 where an
	// optional family has none (the CPU or KILN_CPU rules its assembly
	// out and callers take another path).
	Chosen int
	// Optional families' assembly is a speed-up callers can do without;
	// the others always run some variant, at worst the twins.
	Optional bool
	// Follows names the family whose chosen feature picks this one's
	// variant (conv and winograd run beside the GEMM); "" for none.
	Follows string
}

// VariantInfo names one variant of a family and the CPU feature it needs.
type VariantInfo struct {
	Name    string
	Feature cpuid.Variant
}

// Families reports every kernel family: its variants and the one chosen.
func Families() []Family {
	fs := make([]Family, len(families))
	for i, f := range families {
		fs[i] = f.report()
	}
	return fs
}
