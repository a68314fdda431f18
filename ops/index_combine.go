package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// combiner folds n elements of src from element si into dst from element
// di, both the node's dtype as bytes: a scatter's reduction.
type combiner func(dst []byte, di int, src []byte, si, n int)

// combinerOf is the combiner of a reduction in dtype dt. Replacing copies
// bytes (every dtype); the reductions compute in dt's own arithmetic,
// which for one operation is the correctly rounded float64 result (F16
// and BF16 go through F32, whose one rounding of the exact sum or
// product is exact enough for the second rounding to be correct);
// integers wrap as Go's do. max and min propagate NaN, as numpy's
// maximum and minimum.
func combinerOf(dt tensor.DType, red graph.ScatterReduction) (combiner, error) {
	if red == graph.ScatterNone {
		es := dt.Size()
		return func(dst []byte, di int, src []byte, si, n int) {
			copy(dst[di*es:(di+n)*es], src[si*es:(si+n)*es])
		}, nil
	}
	if red > graph.ScatterMin {
		return nil, fmt.Errorf("unknown reduction %d", red)
	}
	switch dt {
	case tensor.F32:
		return combineNum[float32](red), nil
	case tensor.F64:
		return combineNum[float64](red), nil
	case tensor.I8:
		return combineNum[int8](red), nil
	case tensor.U8:
		return combineNum[uint8](red), nil
	case tensor.I32:
		return combineNum[int32](red), nil
	case tensor.I64:
		return combineNum[int64](red), nil
	case tensor.F16:
		return combineHalf(red, tensor.F16ToF32, tensor.F32ToF16), nil
	case tensor.BF16:
		return combineHalf(red, tensor.BF16ToF32, tensor.F32ToBF16), nil
	}
	return nil, fmt.Errorf("reduction %v has no arithmetic for %v", red, dt)
}

type number interface {
	int8 | uint8 | int32 | int64 | float32 | float64
}

// reduceOf is the binary operation of a reduction other than none.
func reduceOf[T number](red graph.ScatterReduction) func(a, b T) T {
	switch red {
	case graph.ScatterAdd:
		return func(a, b T) T { return a + b }
	case graph.ScatterMul:
		return func(a, b T) T { return a * b }
	case graph.ScatterMax:
		return func(a, b T) T { return max(a, b) }
	}
	return func(a, b T) T { return min(a, b) }
}

func combineNum[T number](red graph.ScatterReduction) combiner {
	f := reduceOf[T](red)
	return func(dst []byte, di int, src []byte, si, n int) {
		d, s := tensor.Elems[T](dst)[di:di+n], tensor.Elems[T](src)[si:si+n]
		for i := range d {
			d[i] = f(d[i], s[i])
		}
	}
}

func combineHalf(red graph.ScatterReduction, widen func(uint16) float32, narrow func(float32) uint16) combiner {
	f := reduceOf[float32](red)
	return func(dst []byte, di int, src []byte, si, n int) {
		d, s := tensor.Elems[uint16](dst)[di:di+n], tensor.Elems[uint16](src)[si:si+n]
		for i := range d {
			d[i] = narrow(f(widen(d[i]), widen(s[i])))
		}
	}
}
