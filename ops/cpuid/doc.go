// Package cpuid reads the CPU's SIMD features once (with
// github.com/klauspost/cpuid/v2) and decides which kernel variant kiln
// uses: the best one the CPU supports, lowered by the KILN_CPU kill switch
// (generic, avx2, avx512, neon). Builds with the purego tag have only the
// generic variant.
package cpuid
