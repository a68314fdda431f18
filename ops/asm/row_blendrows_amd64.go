//go:build amd64 && !purego

package asm

// blendRowsAVX2 and blendRowsAVX512 are the blendRows primitive
// (row_blendrows_amd64.s): whole vectors, then the row's last width mod
// 8 values one at a time (AVX2) or as one masked vector (AVX-512).
//
//go:noescape
func blendRowsAVX2(y, h *float32, width, base int, i0, i1 *int32, w0, w1 *float32, rows int)

//go:noescape
func blendRowsAVX512(y, h *float32, width, base int, i0, i1 *int32, w0, w1 *float32, rows int)
