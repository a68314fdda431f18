package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Shape and data-movement ops move bytes without reading them, so each has
// one reference kernel for every dtype: elements are moved as unsigned
// words of the dtype's size (F16 and BF16 natively, never widened), and
// results are exact.

func init() {
	copies := map[graph.Op]bool{graph.OpReshape: true, graph.OpSqueeze: true, graph.OpUnsqueeze: true, graph.OpFlatten: true}
	for _, r := range []struct {
		op   graph.Op
		prep Prepare
	}{
		{graph.OpReshape, prepReshapeCopy},
		{graph.OpSqueeze, prepReshapeCopy},
		{graph.OpUnsqueeze, prepReshapeCopy},
		{graph.OpFlatten, prepReshapeCopy},
		{graph.OpTranspose, prepTranspose},
		{graph.OpConcat, prepConcat},
		{graph.OpSplit, prepSplit},
		{graph.OpSlice, prepSlice},
		{graph.OpGather, prepGather},
		{graph.OpExpand, prepExpand},
		{graph.OpPad, prepPad},
		{graph.OpTile, prepTile},
	} {
		// The reshape family keeps the bytes as they are, so writing the
		// output over input 0 is a no-op copy.
		Register(Entry{Op: r.op, DTypes: tensor.DTypes(), Reference: r.prep, InPlace: copies[r.op]})
	}
}

// moveIO holds the byte lengths a movement kernel expects, so that a
// tensor of the wrong size is an error rather than an index panic.
type moveIO struct {
	in  []int
	out int
}

// movePrep checks what every movement node shares (a dtype whose element
// is a machine word, input 0 of the same dtype, valid shapes) and returns
// the element size and the expected byte lengths.
func movePrep(n *graph.Node, inputs int) (int, moveIO, error) {
	if len(n.Inputs) != inputs && !(inputs < 0 && len(n.Inputs) > 0) {
		return 0, moveIO{}, fmt.Errorf("%v: %d inputs", n.Op, len(n.Inputs))
	}
	es := n.DType.Size()
	if es != 1 && es != 2 && es != 4 && es != 8 {
		return 0, moveIO{}, fmt.Errorf("%v: unsupported dtype %v", n.Op, n.DType)
	}
	if n.Inputs[0].DType != n.DType {
		return 0, moveIO{}, fmt.Errorf("%v: input dtype %v differs from output %v", n.Op, n.Inputs[0].DType, n.DType)
	}
	if err := n.Shape.Validate(); err != nil {
		return 0, moveIO{}, err
	}
	io := moveIO{in: make([]int, len(n.Inputs)), out: n.Shape.NumElements() * es}
	for i, in := range n.Inputs {
		if err := in.Shape.Validate(); err != nil {
			return 0, moveIO{}, fmt.Errorf("input %d: %w", i, err)
		}
		io.in[i] = in.Shape.NumElements() * in.DType.Size()
	}
	return es, io, nil
}

// check compares the tensors' byte lengths with the prepared ones.
func (c moveIO) check(ins []tensor.Tensor, out tensor.Tensor) error {
	if len(ins) != len(c.in) {
		return fmt.Errorf("got %d inputs, want %d", len(ins), len(c.in))
	}
	for i, want := range c.in {
		if len(ins[i].Data) != want {
			return fmt.Errorf("input %d has %d bytes, want %d", i, len(ins[i].Data), want)
		}
	}
	if len(out.Data) != c.out {
		return fmt.Errorf("output has %d bytes, want %d", len(out.Data), c.out)
	}
	return nil
}

// moveShapeCheck reports a node whose output shape is not the one the
// kernel derived from its inputs and attributes.
func moveShapeCheck(n *graph.Node, want tensor.Shape) error {
	if !n.Shape.Equal(want) {
		return fmt.Errorf("%v: output shape %v, attributes give %v", n.Op, n.Shape, want)
	}
	return nil
}

// prepReshapeCopy serves Reshape, Squeeze, Unsqueeze and Flatten: row-major
// order is unchanged, so the bytes are copied as they are (the planner may
// later alias the output instead).
func prepReshapeCopy(n *graph.Node) (Kernel, error) {
	_, io, err := movePrep(n, 1)
	if err != nil {
		return nil, err
	}
	if io.in[0] != io.out {
		return nil, fmt.Errorf("%v: %v and %v differ in size", n.Op, n.Inputs[0].Shape, n.Shape)
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := io.check(ins, out); err != nil {
			return err
		}
		copy(out.Data, ins[0].Data)
		return nil
	}, nil
}
