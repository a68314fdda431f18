package graph

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// indexDType checks an index tensor's dtype.
func indexDType(idx *Node) error {
	if idx.DType != tensor.I32 && idx.DType != tensor.I64 {
		return fmt.Errorf("indices must be i32 or i64, got %v", idx.DType)
	}
	return nil
}

// checkReduction rejects a reduction the data's dtype has no arithmetic
// for, and an unknown one.
func checkReduction(r ScatterReduction, dt tensor.DType) error {
	switch {
	case r > ScatterMin:
		return fmt.Errorf("unknown reduction %d", r)
	case r != ScatterNone && dt == tensor.Bool:
		return fmt.Errorf("reduction %v needs numbers, got %v", r, dt)
	}
	return nil
}

// inferElements covers GatherElements (2 inputs) and ScatterElements (3):
// indices (and updates) have x's rank and dims no larger than x's off the
// axis.
func inferElements(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x, idx := ins[0], ins[1]
	if err := indexDType(idx); err != nil {
		return 0, nil, err
	}
	r := x.Shape.Rank()
	if r == 0 {
		return 0, nil, fmt.Errorf("data must have rank 1 or more")
	}
	ax, err := tensor.NormAxis(a.Axis, r)
	if err != nil {
		return 0, nil, err
	}
	a.Axis = ax
	if idx.Shape.Rank() != r {
		return 0, nil, fmt.Errorf("indices %v must have the rank of data %v", idx.Shape, x.Shape)
	}
	for d := range r {
		if d != ax && idx.Shape[d] > x.Shape[d] {
			return 0, nil, fmt.Errorf("indices %v exceed data %v on axis %d", idx.Shape, x.Shape, d)
		}
	}
	if len(ins) == 2 {
		return x.DType, idx.Shape.Clone(), nil
	}
	upd := ins[2]
	if upd.DType != x.DType {
		return 0, nil, fmt.Errorf("updates dtype %v differs from data %v", upd.DType, x.DType)
	}
	if !upd.Shape.Equal(idx.Shape) {
		return 0, nil, fmt.Errorf("updates %v and indices %v differ in shape", upd.Shape, idx.Shape)
	}
	if err := checkReduction(a.Reduction, x.DType); err != nil {
		return 0, nil, err
	}
	return x.DType, x.Shape.Clone(), nil
}

func inferGatherND(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x, idx := ins[0], ins[1]
	if err := indexDType(idx); err != nil {
		return 0, nil, err
	}
	r, q, b := x.Shape.Rank(), idx.Shape.Rank(), a.BatchDims
	if r < 1 || q < 1 {
		return 0, nil, fmt.Errorf("data %v and indices %v must have rank 1 or more", x.Shape, idx.Shape)
	}
	if b < 0 || b >= min(r, q) {
		return 0, nil, fmt.Errorf("batch dims %d out of range for data %v and indices %v", b, x.Shape, idx.Shape)
	}
	if !idx.Shape[:b].Equal(x.Shape[:b]) {
		return 0, nil, fmt.Errorf("indices %v and data %v differ in their %d batch dims", idx.Shape, x.Shape, b)
	}
	k := idx.Shape[q-1]
	if k < 1 || k > r-b {
		return 0, nil, fmt.Errorf("index tuples of length %d for data %v with %d batch dims", k, x.Shape, b)
	}
	out := append(idx.Shape[:q-1].Clone(), x.Shape[b+k:]...)
	return x.DType, out, nil
}

func inferScatterND(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x, idx, upd := ins[0], ins[1], ins[2]
	if err := indexDType(idx); err != nil {
		return 0, nil, err
	}
	r, q := x.Shape.Rank(), idx.Shape.Rank()
	if r < 1 || q < 1 {
		return 0, nil, fmt.Errorf("data %v and indices %v must have rank 1 or more", x.Shape, idx.Shape)
	}
	k := idx.Shape[q-1]
	if k < 1 || k > r {
		return 0, nil, fmt.Errorf("index tuples of length %d for data %v", k, x.Shape)
	}
	if upd.DType != x.DType {
		return 0, nil, fmt.Errorf("updates dtype %v differs from data %v", upd.DType, x.DType)
	}
	if want := append(idx.Shape[:q-1].Clone(), x.Shape[k:]...); !upd.Shape.Equal(want) {
		return 0, nil, fmt.Errorf("updates %v, want %v for indices %v and data %v", upd.Shape, want, idx.Shape, x.Shape)
	}
	if err := checkReduction(a.Reduction, x.DType); err != nil {
		return 0, nil, err
	}
	return x.DType, x.Shape.Clone(), nil
}
