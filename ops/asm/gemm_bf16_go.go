package asm

import (
	"math"
	"unsafe"

	"github.com/kilnml/kiln/tensor"
)

// The pure-Go twins of the BF16 kernels, and the scalar conversions the
// packers share with them.

// bf16FromF32 is the float32 → bf16 conversion of VCVTNE2PS2BF16: a NaN
// keeps its sign and top payload bits and is made quiet, a float32
// denormal becomes a zero of its sign (denormal inputs read as zero),
// anything else rounds to nearest, ties to even (huge values to ±Inf).
func bf16FromF32(f float32) uint16 {
	if b := math.Float32bits(f); b&0x7f800000 == 0 {
		return uint16(b>>16) & 0x8000
	}
	return tensor.F32ToBF16(f)
}

// bf16Round rounds f to bf16 (nearest even; NaN made quiet) keeping
// denormals, for packing B: exact for values that are bf16 already.
// (The dot product reads bf16 denormals as zero either way.) It is
// tensor's conversion.
func bf16Round(f float32) uint16 { return tensor.F32ToBF16(f) }

// bf16Widen is a bf16 value as float32, a denormal read as zero.
func bf16Widen(x uint16) float32 {
	if x&0x7f80 == 0 {
		x &= 0x8000
	}
	return math.Float32frombits(uint32(x) << 16)
}

// flushDenormal returns a zero of x's sign for a float32 denormal x.
func flushDenormal(x float32) float32 {
	if b := math.Float32bits(x); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return x
}

// bf16Dot2 is one lane of VDPBF16PS as Intel documents it: the high
// halves' product added to acc and rounded, then the low halves' product
// added and rounded (nearest even), denormal inputs read as zero and
// denormal results flushed to zero:
//
//	acc = ftz(acc + a.hi·b.hi);  acc = ftz(acc + a.lo·b.lo)
//
// The product of two bf16 values has at most 16 significant bits, so it
// is exact in float32 and each float32 addition below rounds the exact
// sum once, as the instruction's fused accumulation does. Where the
// twin may differ from hardware: a product whose magnitude falls below
// float32's normal range (< 2⁻¹²⁶, from factors near the bottom of the
// exponent range) is rounded here to a float32 denormal before it is
// added, where the instruction adds it unrounded; and an implementation
// that sums both products before one rounding differs in the last bit
// of some lanes. Tests compare the assembly with the twin within a few
// float32 ulps of the magnitude, not bit for bit.
func bf16Dot2(acc float32, a, b uint32) float32 {
	hi := float32(bf16Widen(uint16(a>>16)) * bf16Widen(uint16(b>>16))) // exact: the conversion rounds nothing, and keeps it from fusing
	acc = flushDenormal(acc + hi)
	lo := float32(bf16Widen(uint16(a)) * bf16Widen(uint16(b)))
	return flushDenormal(acc + lo)
}

// gemmPanelBF16Go is the twin of gemmPanelBF16AVX512 (see
// bf16PanelKernel).
func gemmPanelBF16Go(tiles, kp int, a *uint32, lda int, b *uint32, c *float32, ldc int, flags uint) {
	as := unsafe.Slice(a, (bf16MR*tiles-1)*lda+kp)
	bs := unsafe.Slice(b, kp*bf16NR)
	cs := unsafe.Slice(c, (bf16MR*tiles-1)*ldc+bf16NR)
	var acc [bf16NR]float32
	for i := range bf16MR * tiles {
		row := as[i*lda : i*lda+kp]
		acc = [bf16NR]float32{}
		for q, w := range row {
			bq := bs[q*bf16NR : (q+1)*bf16NR]
			for j := range acc {
				acc[j] = bf16Dot2(acc[j], w, bq[j])
			}
		}
		gemmMerge(cs[i*ldc:i*ldc+bf16NR], acc[:], flags&gemmAccumulate != 0)
	}
}

// bf16ConvertRowsGo is the twin of bf16ConvertRowsAVX512 (see
// bf16ConvertKernel).
func bf16ConvertRowsGo(rows, n32 int, src *float32, lds int, dst *uint32, ldd int) {
	s := unsafe.Slice(src, (rows-1)*lds+bf16Conv*n32)
	d := unsafe.Slice(dst, (rows-1)*ldd+bf16Conv/2*n32)
	for r := range rows {
		bf16ConvertTail(d[r*ldd:r*ldd+bf16Conv/2*n32], s[r*lds:r*lds+bf16Conv*n32])
	}
}

// gemvBF16Go is the twin of gemvBF16AVX512 (see bf16GemvKernel): the
// panel kernel's sums for one row.
func gemvBF16Go(kp, panels int, a *uint32, b *uint32, pstride int, c *float32, flags uint) {
	as := unsafe.Slice(a, kp)
	bs := unsafe.Slice(b, (panels-1)*pstride+kp*bf16NR)
	cs := unsafe.Slice(c, panels*bf16NR)
	var acc [bf16NR]float32
	for p := range panels {
		acc = [bf16NR]float32{}
		for q, w := range as {
			bq := bs[p*pstride+q*bf16NR : p*pstride+(q+1)*bf16NR]
			for j := range acc {
				acc[j] = bf16Dot2(acc[j], w, bq[j])
			}
		}
		gemmMerge(cs[p*bf16NR:(p+1)*bf16NR], acc[:], flags&gemmAccumulate != 0)
	}
}
