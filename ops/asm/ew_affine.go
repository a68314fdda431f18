package asm

import (
	"fmt"
	"math"
	"unsafe"
)

// Per-plane affine maps: dst = x·a + b with a and b constant over each
// plane (a batch normalization over NCHW), then a Relu or nothing. Run
// as BinaryScalar's Mul and Add and Unary's Relu a plane at a time, that
// is three calls per plane, whose scalar heads and tails dominate small
// planes (DenseNet's 2×2 to 16² ones); the vector kernels do a whole
// range of planes in one call with the same operations, so the same
// bits.

// ewAffineFunc is a variant's affine kernel (ewAffinePlanesAVX512): for
// q < planes, i < n, dst[q·n+i] = max(floor, x[q·n+i]·a[q] + b[q]) with
// the product and the sum rounded and max returning its second operand
// on NaN and ±0 ties. planes, n >= 1; the caller checks every read and
// write.
type ewAffineFunc func(dst, x *float32, planes, n int, a, b *float32, floor float32)

// AffinePlanes sets, for each plane q < len(a) of n floats and i < n,
// dst[q·n+i] = x[q·n+i]·a[q] + b[q], then Relu where relu: the bits of
// BinaryScalar's Mul then Add (and Unary's Relu) over each plane. dst may
// be x.
func (k *EwKernels) AffinePlanes(dst, x []float32, n int, a, b []float32, relu bool) error {
	planes := len(a)
	switch {
	case len(b) != planes:
		return fmt.Errorf("asm: affine planes: %d scales, %d shifts", planes, len(b))
	case n < 0 || len(dst) != planes*n || len(x) != planes*n:
		return fmt.Errorf("asm: affine planes: %d planes of %d, dst %d and x %d floats", planes, n, len(dst), len(x))
	case planes == 0 || n == 0:
		return nil
	}
	if err := ewCheck(dst, x); err != nil {
		return err
	}
	if k.affine == nil {
		for q := range planes {
			d, s := dst[q*n:(q+1)*n], x[q*n:(q+1)*n]
			_ = k.BinaryScalar(EwMul, d, s, a[q])
			_ = k.BinaryScalar(EwAdd, d, d, b[q])
			if relu {
				_ = k.Unary(EwRelu, d, d)
			}
		}
		return nil
	}
	floor := float32(math.Inf(-1))
	if relu {
		floor = 0
	}
	k.affine(unsafe.SliceData(dst), unsafe.SliceData(x), planes, n, unsafe.SliceData(a), unsafe.SliceData(b), floor)
	return nil
}

// AffineVector reports whether AffinePlanes runs in one vector call (else
// three calls per plane, slower than a tiled loop for planes of a few
// floats).
func (k *EwKernels) AffineVector() bool { return k.affine != nil }
