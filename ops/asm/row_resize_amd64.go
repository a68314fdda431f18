//go:build amd64 && !purego

package asm

import "unsafe"

// Upsampling row primitives (row_resize_amd64.s). The assembly bodies
// take whole vectors only (n a multiple of 8 for AVX2, 16 for AVX-512);
// the wrappers below run them on the largest such prefix and the twin on
// the few elements left, so no masked tail is needed and nothing outside
// the slices is touched.

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

// addF32 is &p[i].
func addF32(p *float32, i int) *float32 { return (*float32)(unsafe.Add(unsafe.Pointer(p), 4*i)) }

// repeatVec runs the vector bodies for factors 2 and 4 on the first
// n&^(step-1) inputs and the twin on the rest and on other factors.
func repeatVec(y, x *float32, n, s, step int, r2, r4 func(y, x *float32, n int)) {
	m := n &^ (step - 1)
	switch {
	case m == 0:
	case s == 2:
		r2(y, x, m)
	case s == 4:
		r4(y, x, m)
	default:
		m = 0
	}
	if m < n {
		repeatGo(addF32(y, m*s), addF32(x, m), n-m, s)
	}
}

func repeatAVX2(y, x *float32, n, s int) { repeatVec(y, x, n, s, 8, repeat2AVX2, repeat4AVX2) }

// repeatAVX512 runs sixteen inputs at a time, then AVX2 on a last eight.
func repeatAVX512(y, x *float32, n, s int) {
	m := n &^ 15
	if m > 0 && (s == 2 || s == 4) {
		repeatVec(y, x, m, s, 16, repeat2AVX512, repeat4AVX512)
		y, x, n = addF32(y, m*s), addF32(x, m), n-m
	}
	repeatAVX2(y, x, n, s)
}

func lerp2AVX2(y, x *float32, n int, a, b float32) {
	m := n &^ 7
	if m > 0 {
		lerp2BodyAVX2(y, x, m, a, b)
	}
	if m < n {
		lerp2Go(addF32(y, 2*m), addF32(x, m), n-m, a, b)
	}
}

// lerp2AVX512 runs sixteen pairs at a time, then AVX2 on the rest.
func lerp2AVX512(y, x *float32, n int, a, b float32) {
	m := n &^ 15
	if m > 0 {
		lerp2BodyAVX512(y, x, m, a, b)
	}
	if m < n {
		lerp2AVX2(addF32(y, 2*m), addF32(x, m), n-m, a, b)
	}
}

func blendAVX2(y, x0, x1 *float32, n int, a, b float32) {
	m := n &^ 7
	if m > 0 {
		blendBodyAVX2(y, x0, x1, m, a, b)
	}
	if m < n {
		blendGo(addF32(y, m), addF32(x0, m), addF32(x1, m), n-m, a, b)
	}
}

// blendAVX512 runs sixteen elements at a time, then AVX2 on the rest.
func blendAVX512(y, x0, x1 *float32, n int, a, b float32) {
	m := n &^ 15
	if m > 0 {
		blendBodyAVX512(y, x0, x1, m, a, b)
	}
	if m < n {
		blendAVX2(addF32(y, m), addF32(x0, m), addF32(x1, m), n-m, a, b)
	}
}
