//go:build amd64 && !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// The AVX-512 elementwise kernels (ew512_amd64.s, math512_amd64.s): the
// AVX2 kernels' steps on 16 lanes, with the same bits as the Go twins.
// Each processes n elements, n a multiple of 16 (the EwKernels methods
// check lengths and run the rest as the last whole block, Unary, or
// through the Go twins). With stream set,
// dst must be 64-byte aligned (EwKernels.split aligns it to a block):
// results are written with non-temporal stores (and fenced).
//
// What AVX-512 changes, never the bits: constants are broadcast from a
// table of single words (embedded broadcast) or held in zmm16-31 across
// the loop; 2^n scaling is one VSCALEFPS, which rounds v·2^n once, as the
// twin's two exact power-of-two factors do (ewScale: its first product is
// exact in every use, so only the last rounds); log reduces with
// VGETEXPPS/VGETMANTPS (exact) and fixes zero, negative, infinite and NaN
// inputs with one VFIXUPIMMPS; branches select with opmasks; max and min
// are one VRANGEPS (NaN if either operand is, max(-0, +0) = +0); relu is
// VMAXPS with x as the operand returned on a tie or NaN.

func init() {
	ewFamily.add(&EwKernels{
		Name: "avx512", Feature: cpuid.AVX512, block: 16,
		unary: [ewNumUnary]ewUnaryFunc{
			EwExp: ewExpAVX512, EwLog: ewLogAVX512, EwTanh: ewTanhAVX512, EwSigmoid: ewSigmoidAVX512,
			EwErf: ewErfAVX512, EwGelu: ewGeluAVX512, EwGeluTanh: ewGeluTanhAVX512, EwSilu: ewSiluAVX512,
			EwRelu: ewReluAVX512, EwNeg: ewNegAVX512, EwAbs: ewAbsAVX512,
		},
		vv: [ewNumBinary]ewVVFunc{EwAdd: ewAddVVAVX512, EwSub: ewSubVVAVX512, EwMul: ewMulVVAVX512,
			EwDiv: ewDivVVAVX512, EwMax: ewMaxVVAVX512, EwMin: ewMinVVAVX512},
		vs: [ewNumBinary]ewVSFunc{EwAdd: ewAddVSAVX512, EwSub: ewSubVSAVX512, EwMul: ewMulVSAVX512,
			EwDiv: ewDivVSAVX512, EwMax: ewMaxVSAVX512, EwMin: ewMinVSAVX512},
		sv: [ewNumBinary]ewSVFunc{EwAdd: ewAddSVAVX512, EwSub: ewSubSVAVX512, EwMul: ewMulSVAVX512,
			EwDiv: ewDivSVAVX512, EwMax: ewMaxSVAVX512, EwMin: ewMinSVAVX512},
		clamp: ewClampAVX512, affine: ewAffinePlanesAVX512,
	})
}

// Unary kernels: for i < n, dst[i] = f(x[i]) with f the scalar twin
// (ewExp, ewLog, ewTanh, ewSigmoid, ewErf, ewGelu, ewGeluTanh, ewSilu;
// ewReluGo, ewNegGo, ewAbsGo for the last three), n a multiple of 16.

// ewExpAVX512 is dst[i] = ewExp(x[i]).
//
//go:noescape
func ewExpAVX512(dst, x *float32, n int, stream bool)

// ewLogAVX512 is dst[i] = ewLog(x[i]).
//
//go:noescape
func ewLogAVX512(dst, x *float32, n int, stream bool)

// ewTanhAVX512 is dst[i] = ewTanh(x[i]).
//
//go:noescape
func ewTanhAVX512(dst, x *float32, n int, stream bool)

// ewSigmoidAVX512 is dst[i] = ewSigmoid(x[i]).
//
//go:noescape
func ewSigmoidAVX512(dst, x *float32, n int, stream bool)

// ewErfAVX512 is dst[i] = ewErf(x[i]).
//
//go:noescape
func ewErfAVX512(dst, x *float32, n int, stream bool)

// ewGeluAVX512 is dst[i] = ewGelu(x[i]).
//
//go:noescape
func ewGeluAVX512(dst, x *float32, n int, stream bool)

// ewGeluTanhAVX512 is dst[i] = ewGeluTanh(x[i]).
//
//go:noescape
func ewGeluTanhAVX512(dst, x *float32, n int, stream bool)

// ewSiluAVX512 is dst[i] = ewSilu(x[i]).
//
//go:noescape
func ewSiluAVX512(dst, x *float32, n int, stream bool)

// ewReluAVX512 is dst[i] = x[i] < 0 ? 0 : x[i] (ewReluGo).
//
//go:noescape
func ewReluAVX512(dst, x *float32, n int, stream bool)

// ewNegAVX512 is dst[i] = -x[i] (ewNegGo).
//
//go:noescape
func ewNegAVX512(dst, x *float32, n int, stream bool)

// ewAbsAVX512 is dst[i] = |x[i]| (ewAbsGo).
//
//go:noescape
func ewAbsAVX512(dst, x *float32, n int, stream bool)

// ewConstTable512 returns the AVX-512 kernels' constant table, one word
// per constant (for a test). Not a kernel.
func ewConstTable512() []uint32

// Binary kernels, as ewAddVVGo ... ewMinSVGo: for i < n (a multiple of
// 16), dst[i] = x[i] op y[i] (VV), x[i] op s (VS), s op y[i] (SV), op one
// of + - × ÷ (rounded once) and Go's max and min.

// ewAddVVAVX512 is dst[i] = x[i] + y[i].
//
//go:noescape
func ewAddVVAVX512(dst, x, y *float32, n int, stream bool)

// ewSubVVAVX512 is dst[i] = x[i] - y[i].
//
//go:noescape
func ewSubVVAVX512(dst, x, y *float32, n int, stream bool)

// ewMulVVAVX512 is dst[i] = x[i] * y[i].
//
//go:noescape
func ewMulVVAVX512(dst, x, y *float32, n int, stream bool)

// ewDivVVAVX512 is dst[i] = x[i] / y[i].
//
//go:noescape
func ewDivVVAVX512(dst, x, y *float32, n int, stream bool)

// ewMaxVVAVX512 is dst[i] = max(x[i], y[i]).
//
//go:noescape
func ewMaxVVAVX512(dst, x, y *float32, n int, stream bool)

// ewMinVVAVX512 is dst[i] = min(x[i], y[i]).
//
//go:noescape
func ewMinVVAVX512(dst, x, y *float32, n int, stream bool)

// ewAddVSAVX512 is dst[i] = x[i] + s.
//
//go:noescape
func ewAddVSAVX512(dst, x *float32, s float32, n int, stream bool)

// ewSubVSAVX512 is dst[i] = x[i] - s.
//
//go:noescape
func ewSubVSAVX512(dst, x *float32, s float32, n int, stream bool)

// ewMulVSAVX512 is dst[i] = x[i] * s.
//
//go:noescape
func ewMulVSAVX512(dst, x *float32, s float32, n int, stream bool)

// ewDivVSAVX512 is dst[i] = x[i] / s.
//
//go:noescape
func ewDivVSAVX512(dst, x *float32, s float32, n int, stream bool)

// ewClampAVX512 is dst[i] = min(max(x[i], lo), hi), n a multiple of 16.
//
//go:noescape
func ewClampAVX512(dst, x *float32, lo, hi float32, n int, stream bool)

// ewMaxVSAVX512 is dst[i] = max(x[i], s).
//
//go:noescape
func ewMaxVSAVX512(dst, x *float32, s float32, n int, stream bool)

// ewMinVSAVX512 is dst[i] = min(x[i], s).
//
//go:noescape
func ewMinVSAVX512(dst, x *float32, s float32, n int, stream bool)

// ewAddSVAVX512 is dst[i] = s + y[i].
//
//go:noescape
func ewAddSVAVX512(dst *float32, s float32, y *float32, n int, stream bool)

// ewSubSVAVX512 is dst[i] = s - y[i].
//
//go:noescape
func ewSubSVAVX512(dst *float32, s float32, y *float32, n int, stream bool)

// ewMulSVAVX512 is dst[i] = s * y[i].
//
//go:noescape
func ewMulSVAVX512(dst *float32, s float32, y *float32, n int, stream bool)

// ewDivSVAVX512 is dst[i] = s / y[i].
//
//go:noescape
func ewDivSVAVX512(dst *float32, s float32, y *float32, n int, stream bool)

// ewMaxSVAVX512 is dst[i] = max(s, y[i]).
//
//go:noescape
func ewMaxSVAVX512(dst *float32, s float32, y *float32, n int, stream bool)

// ewMinSVAVX512 is dst[i] = min(s, y[i]).
//
//go:noescape
func ewMinSVAVX512(dst *float32, s float32, y *float32, n int, stream bool)

// ewAffinePlanesAVX512 is the AVX-512 ewAffineFunc (ew_affine_amd64.s).
//
//go:noescape
func ewAffinePlanesAVX512(dst, x *float32, planes, n int, a, b *float32, floor float32)
