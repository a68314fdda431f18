//go:build !purego

package asm

import "github.com/kilnml/kiln/ops/cpuid"

// The AVX2+FMA elementwise kernels (ew_amd64.s, math_amd64.s).
// Each processes n elements, n a multiple of 8 (the EwKernels methods
// check lengths and run the rest as the last whole block, Unary, or
// through the Go twins), and computes the
// same bits as its twin: see the twin for the loop. With stream set, dst
// must be 32-byte aligned: results are written with non-temporal stores
// (and fenced), which spares reading the output lines into the cache.

func init() {
	ewFamily.add(&EwKernels{
		Name: "avx2", Feature: cpuid.AVX2, block: 8,
		unary: [ewNumUnary]ewUnaryFunc{
			EwExp: ewExpAVX2, EwLog: ewLogAVX2, EwTanh: ewTanhAVX2, EwSigmoid: ewSigmoidAVX2,
			EwErf: ewErfAVX2, EwGelu: ewGeluAVX2, EwGeluTanh: ewGeluTanhAVX2, EwSilu: ewSiluAVX2,
			EwRelu: ewReluAVX2, EwNeg: ewNegAVX2, EwAbs: ewAbsAVX2,
		},
		vv: [ewNumBinary]ewVVFunc{EwAdd: ewAddVVAVX2, EwSub: ewSubVVAVX2, EwMul: ewMulVVAVX2,
			EwDiv: ewDivVVAVX2, EwMax: ewMaxVVAVX2, EwMin: ewMinVVAVX2},
		vs: [ewNumBinary]ewVSFunc{EwAdd: ewAddVSAVX2, EwSub: ewSubVSAVX2, EwMul: ewMulVSAVX2,
			EwDiv: ewDivVSAVX2, EwMax: ewMaxVSAVX2, EwMin: ewMinVSAVX2},
		sv: [ewNumBinary]ewSVFunc{EwAdd: ewAddSVAVX2, EwSub: ewSubSVAVX2, EwMul: ewMulSVAVX2,
			EwDiv: ewDivSVAVX2, EwMax: ewMaxSVAVX2, EwMin: ewMinSVAVX2},
		clamp: ewClampAVX2,
	})
}

// ewClampAVX2 is dst[i] = min(max(x[i], lo), hi), n a multiple of 8.
//
//go:noescape
func ewClampAVX2(dst, x *float32, lo, hi float32, n int, stream bool)

// Unary kernels: dst[i] = f(x[i]) with f the scalar twin (ewExp, ewLog,
// ewTanh, ewSigmoid, ewErf, ewGelu, ewGeluTanh, ewSilu; ewReluGo,
// ewNegGo, ewAbsGo for the last three).

//go:noescape
func ewExpAVX2(dst, x *float32, n int, stream bool)

//go:noescape
func ewLogAVX2(dst, x *float32, n int, stream bool)

//go:noescape
func ewTanhAVX2(dst, x *float32, n int, stream bool)

//go:noescape
func ewSigmoidAVX2(dst, x *float32, n int, stream bool)

//go:noescape
func ewErfAVX2(dst, x *float32, n int, stream bool)

//go:noescape
func ewGeluAVX2(dst, x *float32, n int, stream bool)

//go:noescape
func ewGeluTanhAVX2(dst, x *float32, n int, stream bool)

//go:noescape
func ewSiluAVX2(dst, x *float32, n int, stream bool)

//go:noescape
func ewReluAVX2(dst, x *float32, n int, stream bool)

//go:noescape
func ewNegAVX2(dst, x *float32, n int, stream bool)

//go:noescape
func ewAbsAVX2(dst, x *float32, n int, stream bool)

// ewConstTable returns the assembly's constant table (for a test).
func ewConstTable() []uint32 // not a kernel

// Binary kernels, as ewAddVVGo ... ewMinSVGo: dst[i] = x[i] op y[i] (VV),
// x[i] op s (VS), s op y[i] (SV).

//go:noescape
func ewAddVVAVX2(dst, x, y *float32, n int, stream bool)

//go:noescape
func ewSubVVAVX2(dst, x, y *float32, n int, stream bool)

//go:noescape
func ewMulVVAVX2(dst, x, y *float32, n int, stream bool)

//go:noescape
func ewDivVVAVX2(dst, x, y *float32, n int, stream bool)

//go:noescape
func ewMaxVVAVX2(dst, x, y *float32, n int, stream bool)

//go:noescape
func ewMinVVAVX2(dst, x, y *float32, n int, stream bool)

//go:noescape
func ewAddVSAVX2(dst, x *float32, s float32, n int, stream bool)

//go:noescape
func ewSubVSAVX2(dst, x *float32, s float32, n int, stream bool)

//go:noescape
func ewMulVSAVX2(dst, x *float32, s float32, n int, stream bool)

//go:noescape
func ewDivVSAVX2(dst, x *float32, s float32, n int, stream bool)

//go:noescape
func ewMaxVSAVX2(dst, x *float32, s float32, n int, stream bool)

//go:noescape
func ewMinVSAVX2(dst, x *float32, s float32, n int, stream bool)

//go:noescape
func ewAddSVAVX2(dst *float32, s float32, y *float32, n int, stream bool)

//go:noescape
func ewSubSVAVX2(dst *float32, s float32, y *float32, n int, stream bool)

//go:noescape
func ewMulSVAVX2(dst *float32, s float32, y *float32, n int, stream bool)

//go:noescape
func ewDivSVAVX2(dst *float32, s float32, y *float32, n int, stream bool)

//go:noescape
func ewMaxSVAVX2(dst *float32, s float32, y *float32, n int, stream bool)

//go:noescape
func ewMinSVAVX2(dst *float32, s float32, y *float32, n int, stream bool)
