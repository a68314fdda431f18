//go:build amd64 && !purego

package asm

// lerpTapsPermAVX512 is the lerpTaps primitive on zmm: per block of 16
// outputs, 32 sources loaded under masks and each output's two taps
// picked by VPERMI2PS (Taps.window lays the blocks out).
//
//go:noescape
func lerpTapsPermAVX512(y, x *float32, base *int32, mask *uint32, r0, r1 *int32, w0, w1 *float32, blocks int)

// blendTapsAVX512 is the blendTaps primitive on zmm: per output row, per
// block of 16 outputs, the blend of the 32 sources at the block's base
// of both source rows, then lerpTapsPermAVX512's permutes on it.
//
//go:noescape
func blendTapsAVX512(y, x *float32, w, ow int, i0, i1 *int32, wy0, wy1 *float32, rows int, base *int32, mask *uint32, r0, r1 *int32, tw0, tw1 *float32, blocks int)

// blendTapsWinAVX512 is the blendTapsWin primitive on zmm: two output
// rows at a time (r and r + ⌈rows/2⌉), each aligned vector of 16
// sources blended once per row, the last two in registers, every
// block's taps picked from them by VPERMI2PS.
//
//go:noescape
func blendTapsWinAVX512(y, x *float32, w, ow int, i0, i1 *int32, wy0, wy1 *float32, rows int, win *uint32, blocks int)

// blendTapsWin8AVX2 is the blendTapsWin8 primitive on ymm: one output
// row at a time, each aligned vector of 8 sources blended once per row,
// the last two in registers, every tap picked from both by VPERMPS and
// chosen between by VBLENDVPS.
//
//go:noescape
func blendTapsWin8AVX2(y, x *float32, w, ow int, i0, i1 *int32, wy0, wy1 *float32, rows int, win *uint32, blocks int)

// lerpTapsRows16AVX512 is the lerpTapsRows primitive on zmm: narrow
// blocks, blocks outer and rows inner, four blocks' tables in registers
// at a time.
//
//go:noescape
func lerpTapsRows16AVX512(y, x *float32, w, ow, rows int, base *int32, mask *uint32, r0, r1 *int32, w0, w1 *float32, blocks, groups int)
