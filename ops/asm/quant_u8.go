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
	if len(x) == 0 {
		return nil
	}
	if k == nil {
		k = BestRows()
	}
	if f := quantizeU8For[k.Feature]; f != nil {
		f(&q[0], &x[0], len(x), s, float32(z))
		return nil
	}
	quantizeU8Go(q, x, s, z)
	return nil
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
