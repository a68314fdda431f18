package asm

import (
	"math"
	"unsafe"

	"github.com/kilnml/kiln/ops/cpuid"
)

// The transforms of Winograd's F(2×2, 3×3) convolution (conv_wino.go),
// eight tiles side by side: tile i covers output columns 2i and 2i+1 of
// two output rows and reads a 4×4 input patch starting two columns on
// from tile i-1's. With Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1] and
// Aᵀ = [1 1 1 0; 0 1 -1 -1], a patch d becomes V = Bᵀ·d·B and a product
// tile M becomes the outputs Aᵀ·M·A.

// winoInKernel transforms the patches of eight tiles of one channel: the
// patch of tile i is src[r*wp + 2i + j] (r, j < 4), and value (a, b) of
// its V goes to dst[(4a+b)*dstride + i]. It adds |x| of every cell it
// reads into the eight sums of acc (whose lanes the caller checks for
// values too large to transform safely, or NaN).
//
//	u[r][0] = x[r][0] - x[r][2]   u[r][1] = x[r][1] + x[r][2]
//	u[r][2] = x[r][2] - x[r][1]   u[r][3] = x[r][1] - x[r][3]
//	V[0][b] = u[0][b] - u[2][b]   V[1][b] = u[1][b] + u[2][b]
//	V[2][b] = u[2][b] - u[1][b]   V[3][b] = u[1][b] - u[3][b]
//
// src reaches 3*wp+18 floats (the cells past column 15 are read for
// acc and the shifted columns), dst 15*dstride+8.
type winoInKernel func(src *float32, wp int, dst *float32, dstride int, acc *[8]float32)

// winoOutKernel turns the sixteen product values of eight tiles, value
// (a, b) of tile i at src[(4a+b)*sstride + i], into their 2×2 outputs
// plus bias: y[r*ldy + 2i + c] for r, c < 2.
//
//	s[a][0] = (M[a][0] + M[a][1]) + M[a][2]   s[a][1] = (M[a][1] - M[a][2]) - M[a][3]
//	y[0][c] = ((s[0][c] + s[1][c]) + s[2][c]) + bias
//	y[1][c] = ((s[1][c] - s[2][c]) - s[3][c]) + bias
//
// src reaches 15*sstride+8 floats, y ldy+16.
type winoOutKernel func(src *float32, sstride int, y *float32, ldy int, bias float32)

// winoIn16Kernel is winoInKernel for sixteen tiles (one panel of V):
// the patch of tile i < 16 is src[r*wp + 2i + j], value (a, b) of its V
// goes to dst[(4a+b)*dstride + i], and lane i of acc adds, once a call,
// the sum of |x| over the cells at columns i, i+16, i+2 and i+18 of the
// four patch rows, summed as a tree (winoIn16Go) so that the call adds
// to acc once. src reaches 3*wp+34 floats, dst 15*dstride+16.
type winoIn16Kernel func(src *float32, wp int, dst *float32, dstride int, acc *[16]float32)

// winoOut16Kernel is winoOutKernel for up to sixteen tiles, written as
// cols output columns (1 <= cols <= 32) of both rows: y[r*ldy + c] for
// r < 2, c < cols, read from the (cols+1)/2 tiles' values (the lanes
// past them neither read nor written, through opmasks). src reaches
// 15*sstride + (cols+1)/2 floats, y ldy+cols.
type winoOut16Kernel func(src *float32, sstride int, y *float32, ldy int, bias float32, cols int)

// winoKernels are one feature's transforms: eight tiles a call, and
// where the feature has them (nil else) sixteen.
type winoKernels struct {
	feature cpuid.Variant
	in      winoInKernel
	out     winoOutKernel
	in16    winoIn16Kernel
	out16   winoOut16Kernel
}

// winoKernelsFor returns the transforms of feature f, nil where f has
// none (winoFamily, variant.go). Features without transforms in assembly
// do not take the Winograd path: in Go the transforms would cost more
// than the products they save.
func winoKernelsFor(f cpuid.Variant) *winoKernels { return winoFamily.forFeature(f) }

// f32At is p[i] for a float32 pointer (callers check the bounds).
func f32At(p *float32, i int) *float32 { return (*float32)(unsafe.Add(unsafe.Pointer(p), 4*i)) }

// winoInGo is the twin of the assembly input transforms.
func winoInGo(src *float32, wp int, dst *float32, dstride int, acc *[8]float32) {
	winoInTwin(src, wp, dst, dstride, acc[:], false)
}

// winoIn16Go is the twin of the sixteen-tile input transforms.
func winoIn16Go(src *float32, wp int, dst *float32, dstride int, acc *[16]float32) {
	winoInTwin(src, wp, dst, dstride, acc[:], true)
}

// winoInTwin transforms len(acc) tiles. Lane i of acc sums the cells at
// columns i, i+n, i+2 and i+n+2 of rows 1, 2, 0 and 3, as the kernels
// load them: one by one into acc (tree false, the eight-tile kernels),
// or per row as (|x_i| + |x_i+n|) + (|x_i+2| + |x_i+n+2|), the rows as
// (r1 + r2) + (r0 + r3), and that once into acc (tree true: the
// sixteen-tile kernels, whose sums would otherwise be one chain of
// sixteen dependent adds a call).
func winoInTwin(src *float32, wp int, dst *float32, dstride int, acc []float32, tree bool) {
	n := len(acc)
	for i := range n {
		var u [4][4]float32
		for r := range 4 {
			row := f32At(src, r*wp+2*i)
			x := [4]float32{*f32At(row, 0), *f32At(row, 1), *f32At(row, 2), *f32At(row, 3)}
			u[r] = [4]float32{x[0] - x[2], x[1] + x[2], x[2] - x[1], x[1] - x[3]}
		}
		for b := range 4 {
			v := [4]float32{u[0][b] - u[2][b], u[1][b] + u[2][b], u[2][b] - u[1][b], u[1][b] - u[3][b]}
			for a := range 4 {
				*f32At(dst, (4*a+b)*dstride+i) = v[a]
			}
		}
	}
	for i := range n {
		var rs [4]float32
		for k, r := range [4]int{1, 2, 0, 3} {
			row := f32At(src, r*wp)
			x := [4]float32{abs32(*f32At(row, i)), abs32(*f32At(row, i+n)), abs32(*f32At(row, i+2)), abs32(*f32At(row, i+n+2))}
			if !tree {
				for _, v := range x {
					acc[i] += v
				}
				continue
			}
			rs[k] = (x[0] + x[1]) + (x[2] + x[3])
		}
		if tree {
			acc[i] += (rs[0] + rs[1]) + (rs[2] + rs[3])
		}
	}
}

// winoOutGo is the twin of the assembly output transforms.
func winoOutGo(src *float32, sstride int, y *float32, ldy int, bias float32) {
	winoOutTwin(src, sstride, y, ldy, bias, 16)
}

// winoOut16Go is the twin of the sixteen-tile output transforms.
func winoOut16Go(src *float32, sstride int, y *float32, ldy int, bias float32, cols int) {
	winoOutTwin(src, sstride, y, ldy, bias, cols)
}

// winoOutTwin writes cols output columns of both rows, from the
// (cols+1)/2 tiles' values.
func winoOutTwin(src *float32, sstride int, y *float32, ldy int, bias float32, cols int) {
	for i := range (cols + 1) / 2 {
		var s [4][2]float32
		for a := range 4 {
			m := func(b int) float32 { return *f32At(src, (4*a+b)*sstride+i) }
			s[a] = [2]float32{(m(0) + m(1)) + m(2), (m(1) - m(2)) - m(3)}
		}
		for c := range min(2, cols-2*i) {
			*f32At(y, 2*i+c) = ((s[0][c] + s[1][c]) + s[2][c]) + bias
			*f32At(y, ldy+2*i+c) = ((s[1][c] - s[2][c]) - s[3][c]) + bias
		}
	}
}

// abs32 clears the sign bit, as the kernels' mask does (NaN included).
func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }
