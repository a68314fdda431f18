//go:build !purego

package asm

// NEON upsampling row primitives (row_resize_arm64.s): bodies over whole
// 4-lane vectors, the twin on the rest (split* in row_resize.go).

// repeat2NEON sets y[2i] = y[2i+1] = x[i] for i < n, n a multiple of 4.
//
//go:noescape
func repeat2NEON(y, x *float32, n int)

// repeat4NEON sets y[4i+j] = x[i] for i < n, j < 4, n a multiple of 4.
//
//go:noescape
func repeat4NEON(y, x *float32, n int)

// lerp2BodyNEON is lerp2 for n a multiple of 4 (reads x[0..n]).
//
//go:noescape
func lerp2BodyNEON(y, x *float32, n int, a, b float32)

// blendBodyNEON is blend for n a multiple of 4.
//
//go:noescape
func blendBodyNEON(y, x0, x1 *float32, n int, a, b float32)

var (
	repeatNEON = splitRepeat(4, repeat2NEON, repeat4NEON, repeatGo)
	lerp2NEON  = splitLerp2(4, lerp2BodyNEON, lerp2Go)
	blendNEON  = splitBlend(4, blendBodyNEON, blendGo)
)
