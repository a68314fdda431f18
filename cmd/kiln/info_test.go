package main

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/ops/cpuid"
)

// TestWriteFamilies pins the kernel-family lines of `kiln info`.
func TestWriteFamilies(t *testing.T) {
	var b strings.Builder
	writeFamilies(&b, []asm.Family{
		{Name: "gemm", Variants: []asm.VariantInfo{{Name: "avx512", Feature: cpuid.AVX512}, {Name: "avx2", Feature: cpuid.AVX2}, {Name: "go", Feature: cpuid.Generic}}},
		{Name: "gemm-bf16", Variants: []asm.VariantInfo{{Name: "go-bf16", Feature: cpuid.Generic}}, Chosen: -1, Optional: true},
		{Name: "conv", Variants: []asm.VariantInfo{{Name: "avx2", Feature: cpuid.AVX2}, {Name: "go", Feature: cpuid.Generic}}, Chosen: 1, Follows: "gemm"},
		{Name: "winograd", Chosen: -1, Optional: true, Follows: "gemm"},
	})
	want := `kernel families (variants this CPU runs, best first; * chosen):
  gemm         *avx512 avx2 go
  gemm-bf16    go-bf16 (optional; none chosen)
  conv         avx2 *go (follows gemm)
  winograd     none (optional, follows gemm; none chosen)
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestInfoListsFamilies checks `kiln info` lists every family of the
// registry, with the one it chose.
func TestInfoListsFamilies(t *testing.T) {
	var b strings.Builder
	writeInfo(&b)
	out := b.String()
	for _, f := range asm.Families() {
		line := "  " + f.Name + " "
		if !strings.Contains(out, line) {
			t.Errorf("no line for family %s:\n%s", f.Name, out)
		}
		if f.Chosen >= 0 && !strings.Contains(out, "*"+f.Variants[f.Chosen].Name) {
			t.Errorf("family %s: chosen %s not starred:\n%s", f.Name, f.Variants[f.Chosen].Name, out)
		}
	}
}
