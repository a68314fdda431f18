//go:build !purego

package cpu

// buildHasAsm: assembly kernels are compiled in.
const buildHasAsm = true
