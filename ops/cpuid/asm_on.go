//go:build !purego

package cpuid

// buildHasAsm: assembly kernels are compiled in.
const buildHasAsm = true
