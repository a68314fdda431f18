//go:build amd64 && !purego

package asm

// Upsampling row primitives (row_resize_amd64.s): bodies over whole
// vectors (n a multiple of 8 for AVX2, 16 for AVX-512), wrapped by the
// split* constructors (row_resize.go); what AVX-512 leaves (rows under
// sixteen, Blend's remainder) goes to AVX2, what AVX2 leaves to the twin.

// repeat2AVX2 sets y[2i] = y[2i+1] = x[i] for i < n, n a multiple of 8.
//
//go:noescape
func repeat2AVX2(y, x *float32, n int)

// repeat4AVX2 sets y[4i+j] = x[i] for i < n, j < 4, n a multiple of 8.
//
//go:noescape
func repeat4AVX2(y, x *float32, n int)

// lerp2BodyAVX2 is lerp2 for n a multiple of 8 (reads x[0..n]).
//
//go:noescape
func lerp2BodyAVX2(y, x *float32, n int, a, b float32)

// repeat2AVX512 is repeat2AVX2 for n a multiple of 16.
//
//go:noescape
func repeat2AVX512(y, x *float32, n int)

// repeat4AVX512 is repeat4AVX2 for n a multiple of 16.
//
//go:noescape
func repeat4AVX512(y, x *float32, n int)

// lerp2BodyAVX512 is lerp2 for n a multiple of 16.
//
//go:noescape
func lerp2BodyAVX512(y, x *float32, n int, a, b float32)

// blendBodyAVX2 is blend for n a multiple of 8.
//
//go:noescape
func blendBodyAVX2(y, x0, x1 *float32, n int, a, b float32)

// blendBodyAVX512 is blend for n a multiple of 16.
//
//go:noescape
func blendBodyAVX512(y, x0, x1 *float32, n int, a, b float32)

var (
	repeatAVX2   = splitRepeat(8, repeat2AVX2, repeat4AVX2, repeatGo)
	repeatAVX512 = splitRepeat(16, repeat2AVX512, repeat4AVX512, repeatAVX2)
	lerp2AVX2    = splitLerp2(8, lerp2BodyAVX2, lerp2Go)
	lerp2AVX512  = splitLerp2(16, lerp2BodyAVX512, lerp2AVX2)
	blendAVX2    = splitBlend(8, blendBodyAVX2, blendGo)
	blendAVX512  = splitBlend(16, blendBodyAVX512, blendAVX2)
)

// blendLerp2AVX2 and blendLerp2AVX512 are the blendLerp2 primitive
// (row_resize_amd64.s): whole vectors of pairs, then the last w-1 mod 8
// pairs one at a time (AVX2) or as one masked step (AVX-512), then the
// row's two end outputs from their taps, scalar.
//
//go:noescape
func blendLerp2AVX2(y, x *float32, w int, i0, i1 *int32, wy0, wy1 *float32, rows int, a, b float32, ei *int32, ew *float32)

//go:noescape
func blendLerp2AVX512(y, x *float32, w int, i0, i1 *int32, wy0, wy1 *float32, rows int, a, b float32, ei *int32, ew *float32)
