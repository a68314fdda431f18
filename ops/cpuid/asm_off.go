//go:build purego

package cpuid

// buildHasAsm: the purego tag removes all assembly.
const buildHasAsm = false
