//go:build purego

package cpu

// buildHasAsm: the purego tag removes all assembly.
const buildHasAsm = false
