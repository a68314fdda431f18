//go:build amd64 && !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// maxRows3S2AVX512 is the AVX-512 maxRows3S2Kernel (pool_max3s2.go).
//
//go:noescape
func maxRows3S2AVX512(y, x0, x1, x2 *float32, rows, w, pl, ow, xstride int, masks *uint16)

func init() {
	// AVX2 has no kernel of its own: its rows keep the general path's
	// vector folds, which beat the twin.
	poolFamily.add(&poolKernels{feature: cpuid.AVX512, max3S2: maxRows3S2AVX512, avg2: avgRows2x2AVX512}, &poolKernels{feature: cpuid.AVX2})
}

// avgRows2x2AVX512 is the AVX-512 avgRows2x2Kernel (pool_avg2_amd64.s).
//
//go:noescape
func avgRows2x2AVX512(y, x *float32, rows, w, ow int)
