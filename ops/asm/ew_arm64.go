//go:build !purego

package asm

import (
	"math"

	"github.com/kilnml/kiln/ops/cpuid"
)

// The NEON elementwise kernels (ew_arm64.s, math_arm64.s). Each processes
// n elements, n a multiple of 4 (the EwKernels methods check lengths and
// run the rest as the last whole block, Unary, or through the Go twins),
// and computes the same bits as its
// twin. The stream flag is ignored: non-temporal stores are an x86
// feature here, and arm64 stores normally.

func init() {
	k := &EwKernels{
		Name: "neon", Feature: cpuid.NEON, block: 4,
		unary: [ewNumUnary]ewUnaryFunc{
			EwExp: ewExpNEON, EwLog: ewLogNEON, EwTanh: ewTanhNEON, EwSigmoid: ewSigmoidNEON,
			EwErf: ewErfNEON, EwGelu: ewGeluNEON, EwGeluTanh: ewGeluTanhNEON, EwSilu: ewSiluNEON,
			EwRelu: ewBitsForm(ewBitsRelu), EwNeg: ewBitsForm(ewBitsNeg), EwAbs: ewBitsForm(ewBitsAbs),
		},
	}
	for op := range EwBinary(ewNumBinary) {
		k.vv[op], k.vs[op], k.sv[op] = ewBinaryForms(op)
	}
	ewFamily.add(k)
}

// The operations of ewBitsNEON.
const (
	ewBitsRelu = iota // ewReluGo
	ewBitsNeg         // ewNegGo
	ewBitsAbs         // ewAbsGo
)

// ewBitsForm adapts ewBitsNEON to a unary kernel.
func ewBitsForm(op int) ewUnaryFunc {
	return func(dst, x *float32, n int, _ bool) { ewBitsNEON(dst, x, n, op) }
}

// ewBinaryForms adapts ewBinaryNEON to the three forms: a scalar operand
// is a 16-float splat on the stack read with stride 0, so that one loop
// per operation serves all three.
func ewBinaryForms(op EwBinary) (ewVVFunc, ewVSFunc, ewSVFunc) {
	vv := func(dst, x, y *float32, n int, _ bool) { ewBinaryNEON(dst, x, y, 64, 64, n, op) }
	vs := func(dst, x *float32, s float32, n int, _ bool) {
		b := ewSplat16(s)
		ewBinaryNEON(dst, x, &b[0], 64, 0, n, op)
	}
	sv := func(dst *float32, s float32, y *float32, n int, _ bool) {
		a := ewSplat16(s)
		ewBinaryNEON(dst, &a[0], y, 0, 64, n, op)
	}
	return vv, vs, sv
}

func ewSplat16(s float32) (b [16]float32) {
	for i := range b {
		b[i] = s
	}
	return b
}

// ewcValues are the constants of math_arm64.s in the order of its C_*
// offsets, taken from the twins' constants so that the two cannot
// disagree (77: the last, C_GELUG8, is at 16·76). The first 12 are
// loaded into V20..V31 for a whole kernel.
var ewcValues = func(b func(float32) uint32) [77]uint32 {
	return [...]uint32{
		// V20..V31
		ewSignBit, b(ewExpC4), b(ewExpC3), b(ewExpC2), b(ewExpC1), b(ewExpC0),
		b(ewLn2Lo), b(ewLn2Hi), b(ewLog2e), b(ewExpMax), b(ewExpMin), b(1),
		// C_HALF ... (math_arm64.s)
		b(0.5), b(0.25), b(-0.5), b(4), 0x7F800000, 0xFF800000, 0x7FC00000,
		b(ewLogTiny), b(ewLogPrescale), b(-23), ewLogSqrtHalf,
		b(ewLogC0), b(ewLogC1), b(ewLogC2), b(ewLogC3), b(ewLogC4), b(ewLogC5), b(ewLogC6), b(ewLogC7),
		b(ewTanhSmall), b(ewTanhC0), b(ewTanhC1), b(ewTanhC2), b(ewTanhC3), b(ewTanhC4),
		b(ewSiluMin), b(-ewGeluTanhMax), b(ewGeluTanhMax), b(ewGTK), b(ewGTKLo), b(ewGT2C), b(ewGT2CLo),
		b(ewErfSmall), b(ewErfMax), b(ewErfT0), b(ewErfC0m1), b(ewErfC1), b(ewErfC2), b(ewErfC3), b(ewErfC4), b(ewErfC5),
		b(ewErfK0), b(ewErfK1), b(ewErfK2), b(ewErfK3), b(ewErfK4), b(ewErfK5), b(ewErfK6),
		b(ewGeluSmall), b(ewGeluMax), b(ewGeluT0), b(ewGeluP0), b(ewGeluP1), b(ewGeluP2), b(ewGeluP3), b(ewGeluP4),
		b(ewGeluG0), b(ewGeluG1), b(ewGeluG2), b(ewGeluG3), b(ewGeluG4), b(ewGeluG5), b(ewGeluG6), b(ewGeluG7), b(ewGeluG8),
	}
}(math.Float32bits)

// ewcNEON is math_arm64.s's constant table: each of ewcValues as one
// 16-byte vector (4 copies), loaded by one LDR Q.
var ewcNEON = func() (t [len(ewcValues)][4]uint32) {
	for i, c := range ewcValues {
		t[i] = [4]uint32{c, c, c, c}
	}
	return t
}()

// Unary kernels: dst[i] = f(x[i]) with f the scalar twin (ewExp, ewLog,
// ewTanh, ewSigmoid, ewErf, ewGelu, ewGeluTanh, ewSilu).

//go:noescape
func ewExpNEON(dst, x *float32, n int, stream bool)

//go:noescape
func ewLogNEON(dst, x *float32, n int, stream bool)

//go:noescape
func ewTanhNEON(dst, x *float32, n int, stream bool)

//go:noescape
func ewSigmoidNEON(dst, x *float32, n int, stream bool)

//go:noescape
func ewErfNEON(dst, x *float32, n int, stream bool)

//go:noescape
func ewGeluNEON(dst, x *float32, n int, stream bool)

//go:noescape
func ewGeluTanhNEON(dst, x *float32, n int, stream bool)

//go:noescape
func ewSiluNEON(dst, x *float32, n int, stream bool)

// ewBitsNEON is relu, neg or abs (op: ewBitsRelu ...).
//
//go:noescape
func ewBitsNEON(dst, x *float32, n int, op int)

// ewBinaryNEON is dst[i] = a[i] op b[i] for n elements (op in EwBinary
// order: add, sub, mul, div, max, min), where a and b
// advance sa and sb bytes per 16 elements: 64, or 0 for a 16-float splat
// of a scalar.
//
//go:noescape
func ewBinaryNEON(dst, a, b *float32, sa, sb, n int, op EwBinary)
