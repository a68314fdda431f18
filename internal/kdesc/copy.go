package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Copy is a gather through an affine index map: out[c] = in[Base +
// Σ f_d(c_d)·Strides[d]], f_d(c) = c mod Mods[d] when Mods[d] > 0, else c.
// Transpose, Slice, Split, Expand and Tile are all copies.
type Copy struct {
	Name    string
	DType   tensor.DType
	Shape   []int // of the output
	Strides []int // input element strides per output dim (may be negative or 0)
	Mods    []int // nil, or per dim: 0, or the input size to wrap at (Tile)
	Base    int   // element offset of out[0...0] in the input
}

// CopySource is the input element the Copy reads for output linear
// index lin: the arithmetic the emitted copy kernels perform.
func (c *Copy) CopySource(lin int) int {
	off := c.Base
	for d := len(c.Shape) - 1; d >= 0; d-- {
		x := lin % c.Shape[d]
		lin /= c.Shape[d]
		if c.Mods != nil && c.Mods[d] > 0 {
			x %= c.Mods[d]
		}
		off += x * c.Strides[d]
	}
	return off
}

// CopyOf describes a Transpose, Slice, Split, Expand or Tile node as a
// Copy from its (contiguous) input.
func CopyOf(name string, n *graph.Node) (*Copy, error) {
	if len(n.Inputs) == 0 {
		return nil, fmt.Errorf("%s has no input", n)
	}
	in := n.Inputs[0].Shape
	ist := Contiguous(in)
	c := &Copy{Name: name, DType: n.DType, Shape: n.Shape}
	a := n.Attrs
	switch n.Op {
	case graph.OpTranspose:
		if len(a.Perm) != len(in) {
			return nil, fmt.Errorf("%s: perm %v for rank %d", n, a.Perm, len(in))
		}
		for _, p := range a.Perm {
			c.Strides = append(c.Strides, ist[p])
		}
	case graph.OpSlice:
		c.Strides = append([]int(nil), ist...)
		for k, ax := range a.Axes {
			c.Base += a.Starts[k] * ist[ax]
			c.Strides[ax] = ist[ax] * a.Steps[k]
		}
	case graph.OpSplit:
		c.Strides = append([]int(nil), ist...)
		for k := range a.Index {
			c.Base += a.Sizes[k] * ist[a.Axis]
		}
	case graph.OpExpand:
		c.Strides = tensor.BroadcastStrides(in, n.Shape)
	case graph.OpTile:
		c.Strides = ist
		c.Mods = append([]int(nil), in...)
	default:
		return nil, fmt.Errorf("%v is not a copy", n.Op)
	}
	if len(c.Strides) != len(c.Shape) {
		return nil, fmt.Errorf("%s: input rank %d, output rank %d", n, len(in), len(c.Shape))
	}
	return c, nil
}
