package asm

import (
	"fmt"

	"github.com/kilnml/kiln/ops/cpuid"
)

// QuantizeU8 writes DynamicQuantizeLinear's map of x into q:
//
//	q[i] = saturate(roundHalfEven(x[i]/s) + z) to [0, 255]
//
// with a NaN quotient giving z (ONNX's formula, as ops' reference rounds
// it in float64). The quotient is the float32 division; rounding is
// exact in float32 (VRNDSCALEPS, or adding and subtracting 1.5·2²³ in the
// twin for quotients below 512 in magnitude, past which the result
// saturates whatever z is). k's variant picks the kernel (KILN_CPU
// honoured); variants without one run the Go twin. q must hold len(x)
// bytes.
func QuantizeU8(k *RowKernels, q []uint8, x []float32, s float32, z uint8) error {
	if len(q) < len(x) {
		return fmt.Errorf("asm: quantize: %d bytes for %d values", len(q), len(x))
	}
	QuantKernelsFor(k).quantizeU8(q, x, s, z)
	return nil
}

// QuantKernels are QuantizeU8 and DequantRow resolved for one row
// variant, so that a kernel calling them per row looks nothing up.
type QuantKernels struct {
	quantize func(q *uint8, x *float32, n int, s, z float32)
	dequant  func(y *float32, acc, ct, cz *int32, ra int32, sc, b *float32, n int)
}

// QuantKernelsFor resolves the quantization kernels of k's variant (nil:
// BestRows); variants without assembly get the Go twins.
func QuantKernelsFor(k *RowKernels) *QuantKernels {
	if k == nil {
		k = BestRows()
	}
	return &QuantKernels{quantize: quantizeU8For[k.Feature], dequant: dequantRowFor[k.Feature]}
}

// QuantizeU8 is the package's QuantizeU8 on qk's variant.
func (qk *QuantKernels) QuantizeU8(q []uint8, x []float32, s float32, z uint8) error {
	if len(q) < len(x) {
		return fmt.Errorf("asm: quantize: %d bytes for %d values", len(q), len(x))
	}
	qk.quantizeU8(q, x, s, z)
	return nil
}

// quantizeU8 runs the kernel, or the twin, over checked operands.
func (qk *QuantKernels) quantizeU8(q []uint8, x []float32, s float32, z uint8) {
	switch {
	case len(x) == 0:
	case qk.quantize != nil:
		qk.quantize(&q[0], &x[0], len(x), s, float32(z))
	default:
		quantizeU8Go(q, x, s, z)
	}
}

// quantizeU8For holds the assembly kernels by feature (set by the
// architecture's init).
var quantizeU8For = map[cpuid.Variant]func(q *uint8, x *float32, n int, s, z float32){}

// quantizeU8Go is the twin of the kernels.
func quantizeU8Go(q []uint8, x []float32, s float32, z uint8) {
	const magic = 1.5 * (1 << 23)
	zf := float32(z)
	for i, v := range x {
		r := v / s
		switch {
		case r != r:
			q[i] = z
		case r >= 512:
			q[i] = 255
		case r <= -512:
			q[i] = 0
		default:
			// The conversions keep each step rounded to float32.
			f := float32(float32(float32(r+magic)-magic) + zf)
			q[i] = uint8(min(max(f, 0), 255))
		}
	}
}

// DequantRow finishes one row of an int8 product's sums:
//
//	y[j] = float32(acc[j] + colTerm[j] − colZero[j]·rowTerm) · colScale[j]  (+ bias[j])
//
// in int32 arithmetic modulo 2³², then one float32 rounding per step, as
// the unfused Cast, Mul and Add round it (no fused multiply-add). y may be
// acc's memory (the row finished in place); every other slice holds at
// least len(y) elements, bias none when nil. k's variant picks the kernel.
func DequantRow(k *RowKernels, y []float32, acc, colTerm, colZero []int32, rowTerm int32, colScale, bias []float32) error {
	return QuantKernelsFor(k).DequantRow(y, acc, colTerm, colZero, rowTerm, colScale, bias)
}

// DequantRow is the package's DequantRow on qk's variant.
func (qk *QuantKernels) DequantRow(y []float32, acc, colTerm, colZero []int32, rowTerm int32, colScale, bias []float32) error {
	n := len(y)
	if len(acc) < n || len(colTerm) < n || len(colZero) < n || len(colScale) < n || (bias != nil && len(bias) < n) {
		return fmt.Errorf("asm: dequantize: operands of %d, %d, %d, %d, %d elements for a row of %d",
			len(acc), len(colTerm), len(colZero), len(colScale), len(bias), n)
	}
	switch {
	case n == 0:
	case qk.dequant != nil:
		var b *float32
		if bias != nil {
			b = &bias[0]
		}
		qk.dequant(&y[0], &acc[0], &colTerm[0], &colZero[0], rowTerm, &colScale[0], b, n)
	default:
		dequantRowGo(y, acc, colTerm, colZero, rowTerm, colScale, bias)
	}
	return nil
}

// dequantRowFor holds the assembly kernels by feature; b is nil without
// a bias.
var dequantRowFor = map[cpuid.Variant]func(y *float32, acc, ct, cz *int32, ra int32, sc, b *float32, n int){}

// dequantRowGo is the twin of the kernels.
func dequantRowGo(y []float32, acc, colTerm, colZero []int32, rowTerm int32, colScale, bias []float32) {
	n := len(y)
	acc, colTerm, colZero, colScale = acc[:n], colTerm[:n], colZero[:n], colScale[:n]
	if bias != nil {
		bias = bias[:n]
		for j, v := range acc {
			y[j] = float32(float32(v+colTerm[j]-colZero[j]*rowTerm)*colScale[j]) + bias[j] // rounded before the add: no FMA
		}
		return
	}
	for j, v := range acc {
		y[j] = float32(v+colTerm[j]-colZero[j]*rowTerm) * colScale[j]
	}
}
