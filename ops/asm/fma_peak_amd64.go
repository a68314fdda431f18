//go:build amd64 && !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// fmaPeakAVX512 runs n iterations of 24 independent zmm FMA chains
// (384 FMAs each) on registers only.
//
//go:noescape
func fmaPeakAVX512(n int)

// fmaPeakAVX2 runs n iterations of 12 independent ymm FMA chains (96
// FMAs each) on registers only.
//
//go:noescape
func fmaPeakAVX2(n int)

func init() {
	fmaPeakFamily.add(
		&fmaPeak{cpuid.AVX512, 384, fmaPeakAVX512},
		&fmaPeak{cpuid.AVX2, 96, fmaPeakAVX2})
}
