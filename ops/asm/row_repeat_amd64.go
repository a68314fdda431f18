//go:build amd64 && !purego

package asm

// repeatWideAVX512 is the repeatWide primitive on zmm for s >= 16: each
// value broadcast and stored as whole vectors, the last one of its group
// at s-16 (overlapping, same value).
//
//go:noescape
func repeatWideAVX512(y, x *float32, n, s int)

// repeatWideAVX2 is repeatWide on ymm for s >= 8.
//
//go:noescape
func repeatWideAVX2(y, x *float32, n, s int)
