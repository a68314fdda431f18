package asm

import (
	"math"
	"unsafe"
)

// Pure-Go twins of the reduction primitives (see RowKernels for what each
// computes). They are always compiled: the purego build and other
// architectures run them, and tests compare them with the assembly.

// f32s views n floats at p (nil for n == 0, where p may be nil).
func f32s(p *float32, n int) []float32 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice(p, n)
}

func sumGo(x *float32, n int) float64 {
	var s float64
	for _, v := range f32s(x, n) {
		s += float64(v)
	}
	return s
}

func sumSqDevGo(x *float32, n int, c float64) float64 {
	var s float64
	for _, v := range f32s(x, n) {
		d := float64(v) - c
		s += d * d
	}
	return s
}

// maxGo relies on the builtin max, which returns NaN if either operand is
// NaN.
func maxGo(x *float32, n int) float32 {
	m := float32(math.Inf(-1))
	for _, v := range f32s(x, n) {
		m = max(m, v)
	}
	return m
}

func minGo(x *float32, n int) float32 {
	m := float32(math.Inf(1))
	for _, v := range f32s(x, n) {
		m = min(m, v)
	}
	return m
}

func accAddGo(acc *float64, x *float32, n int) {
	if n == 0 {
		return
	}
	a := unsafe.Slice(acc, n)
	for i, v := range f32s(x, n) {
		a[i] += float64(v)
	}
}

func accMaxGo(acc, x *float32, n int) {
	a := f32s(acc, n)
	for i, v := range f32s(x, n) {
		a[i] = max(a[i], v)
	}
}

func accMinGo(acc, x *float32, n int) {
	a := f32s(acc, n)
	for i, v := range f32s(x, n) {
		a[i] = min(a[i], v)
	}
}
