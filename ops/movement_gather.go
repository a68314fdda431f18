package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// prepGather: x viewed as [outer, d, inner] and the output as
// [outer, len(indices), inner]; each index selects one contiguous block of
// inner elements.
func prepGather(n *graph.Node) (Kernel, error) {
	es, io, err := movePrep(n, 2)
	if err != nil {
		return nil, err
	}
	x, idx, ax := n.Inputs[0].Shape, n.Inputs[1], n.Attrs.Axis
	if idx.DType != tensor.I32 && idx.DType != tensor.I64 {
		return nil, fmt.Errorf("gather: indices must be i32 or i64, got %v", idx.DType)
	}
	if ax < 0 || ax >= len(x) {
		return nil, fmt.Errorf("gather: axis %d out of range for rank %d", ax, len(x))
	}
	want := append(append(x[:ax].Clone(), idx.Shape...), x[ax+1:]...)
	if err := moveShapeCheck(n, want); err != nil {
		return nil, err
	}
	outer, d, inner := x[:ax].NumElements(), x[ax], x[ax+1:].NumElements()
	nIdx := idx.Shape.NumElements()
	block := inner * es
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := io.check(ins, out); err != nil {
			return err
		}
		ix := indicesOf(idx.DType, ins[1].Data)
		// Check every index before writing, so a bad one leaves the
		// output untouched (and is reported even when the output is empty).
		for j := range nIdx {
			if k := ix.at(j); k < -d || k >= d {
				return fmt.Errorf("gather: index %d (position %d) is out of range [%d, %d) for axis %d of size %d",
					k, j, -d, d, ax, d)
			}
		}
		src, dst := ins[0].Data, out.Data
		o := 0
		for b := range outer {
			base := b * d
			for j := range nIdx {
				k := ix.at(j)
				if k < 0 {
					k += d
				}
				s := (base + k) * block
				copy(dst[o:o+block], src[s:s+block])
				o += block
			}
		}
		return nil
	}, nil
}
