package asm

import (
	"fmt"
	"math"
)

// Activation is an elementwise function an Epilogue applies.
type Activation uint8

// The activations. Their float64 formulas (act_formula.go) are kiln's
// reference formulas of the ops of the same names; Apply evaluates them
// and rounds once.
const (
	ActNone     Activation = iota
	ActRelu                // x < 0 ? 0 : x (NaN stays NaN)
	ActGelu                // x·Φ(x) = x/2 · erfc(-x/√2)
	ActGeluTanh            // x/2 · (1 + tanh(√(2/π)·(x + 0.044715·x³))), as x / (1 + e^(-2·√(2/π)·(x + 0.044715·x³)))
	ActSilu                // x / (1 + e^-x)
	ActSigmoid             // 1 / (1 + e^-x)
	ActTanh                // tanh x
	numActs
)

var actNames = [numActs]string{"none", "relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh"}

func (a Activation) String() string {
	if a < numActs {
		return actNames[a]
	}
	return fmt.Sprintf("Activation(%d)", uint8(a))
}

// Apply applies the activation to seg in place: its Formula in float64,
// rounded once to float32, as the reference kernels compute it.
func (a Activation) Apply(seg []float32) {
	if a == ActRelu {
		// A mask rather than a branch (signs of real data are random);
		// x < 0 is false for -0 and NaN, which pass through as in the
		// formula: the same bits.
		for i, x := range seg {
			keep := uint32(0xffffffff)
			if x < 0 {
				keep = 0
			}
			seg[i] = math.Float32frombits(math.Float32bits(x) & keep)
		}
		return
	}
	f := a.Formula()
	if f == nil {
		return
	}
	for i, x := range seg {
		seg[i] = float32(f(float64(x)))
	}
}

// Epilogue is what a product does to C once tiles are final, while they
// are still in cache (blocks of up to 128 columns of finished tiles), in
// this order:
//
//	C[i,j] += Bias[j]
//	C[i,j]  = act(C[i,j])                  (ActFunc if set, else Act)
//	C[i,j] += ResScale · Residual[e·ResBatchStride + i·ResRowStride + j·ResColStride]
//
// (e is the product's index in a batch). It is applied after any
// accumulation, to row segments of finished tiles, exactly once per
// element.
type Epilogue struct {
	// Bias, if set, holds at least N values, one per column.
	Bias []float32
	// Act is a built-in activation.
	Act Activation
	// ActFunc, if set, replaces Act: it transforms a finished row segment
	// in place (e.g. a vectorised kernel). It is called concurrently on
	// disjoint segments and must not keep them.
	ActFunc func(seg []float32)
	// Residual, if set, is added after the activation, scaled by
	// ResScale (1 for a plain residual add), with non-negative strides
	// (0 broadcasts). It must not overlap C.
	Residual                                   []float32
	ResRowStride, ResColStride, ResBatchStride int
	ResScale                                   float32
}

// check validates the epilogue for nb products of m×n.
func (ep *Epilogue) check(m, n, nb int) error {
	if ep.Act >= numActs {
		return fmt.Errorf("asm: gemm epilogue: unknown %v", ep.Act)
	}
	if ep.Bias != nil && len(ep.Bias) < n {
		return fmt.Errorf("asm: gemm epilogue: bias has %d values for %d columns", len(ep.Bias), n)
	}
	if ep.Residual != nil && m > 0 && n > 0 {
		rs, cs, bs := ep.ResRowStride, ep.ResColStride, ep.ResBatchStride
		const maxStride = 1 << 40
		if rs < 0 || cs < 0 || bs < 0 || rs > maxStride || cs > maxStride || bs > maxStride {
			return fmt.Errorf("asm: gemm epilogue: residual strides %d, %d, %d", rs, cs, bs)
		}
		if need := (nb-1)*bs + (m-1)*rs + (n-1)*cs + 1; len(ep.Residual) < need {
			return fmt.Errorf("asm: gemm epilogue: residual has %d elements, needs %d", len(ep.Residual), need)
		}
	}
	return nil
}

// apply runs the epilogue on rows [i0, i0+rows) × columns [j0, j0+cols)
// of product e, whose C starts at co. The bias and a plain residual are
// added with the vector kernels (the same bits as a scalar float32 add);
// a scaled or strided residual, or one that overlaps C against the
// contract, takes the scalar loops.
func (ep *Epilogue) apply(c []float32, co, ldc, e, i0, rows, j0, cols int) {
	ew := BestEw()
	for i := i0; i < i0+rows; i++ {
		seg := c[co+i*ldc+j0 : co+i*ldc+j0+cols]
		if ep.Bias != nil {
			if bias := ep.Bias[j0 : j0+cols]; ew.Binary(EwAdd, seg, seg, bias) != nil {
				for j, b := range bias {
					seg[j] += b
				}
			}
		}
		if ep.ActFunc != nil {
			ep.ActFunc(seg)
		} else if ep.Act != ActNone {
			ep.Act.Apply(seg)
		}
		if ep.Residual == nil {
			continue
		}
		base := e*ep.ResBatchStride + i*ep.ResRowStride + j0*ep.ResColStride
		s := ep.ResScale
		if cs := ep.ResColStride; cs == 1 {
			res := ep.Residual[base : base+cols]
			if s == 1 && ew.Binary(EwAdd, seg, seg, res) == nil {
				continue
			}
			for j, r := range res {
				seg[j] += float32(s * r) // the conversion forbids fusing into an FMA: same result everywhere
			}
		} else {
			for j := range seg {
				seg[j] += float32(s * ep.Residual[base+j*cs])
			}
		}
	}
}
