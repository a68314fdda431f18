package graph

// PoolNDOpts are the window attributes of the N-D pools, one value per
// spatial axis (Pads: begins, then ends). Nil Strides and Dilations mean
// 1, nil Pads none.
type PoolNDOpts struct {
	Kernel    []int
	Strides   []int
	Pads      []int
	Dilations []int
	CountPad  bool // AvgPoolND: padding counts in the divisor
	ColMajor  bool // MaxPoolND indices: spatial offsets column-major (ONNX storage_order 1)
}

func (o PoolNDOpts) attrs() Attrs {
	return Attrs{Kernel: o.Kernel, Strides: o.Strides, Pads: o.Pads, Dilations: o.Dilations, CountPad: o.CountPad, ColMajor: o.ColMajor}
}

// MaxPoolND takes the maximum of each window of x [N, C, s...] (1 to 3
// spatial axes) and its I64 position, flattened over the whole of x
// (((n·C + c)·S + offset), the offset row-major over the spatial axes, or
// column-major with ColMajor), as ONNX's MaxPool returns it. The first
// maximum in row-major window order wins a tie; NaN wins over numbers.
// Padding is never a candidate. The two results are separate nodes
// (Attrs.Index 0 and 1), as TopK's; a graph that reads one only computes
// that one. MaxPool2D is the fast form of the values for 2-D windows
// without dilation.
func (g *Graph) MaxPoolND(x *Node, o PoolNDOpts) (values, indices *Node) {
	a := o.attrs()
	values = g.add(OpMaxPoolND, a, x)
	a.Index = 1
	return values, g.add(OpMaxPoolND, a, x)
}

// AvgPoolND averages each window of x [N, C, s...] (1 to 3 spatial
// axes): over its real cells, or over the whole window with CountPad.
func (g *Graph) AvgPoolND(x *Node, o PoolNDOpts) *Node {
	return g.add(OpAvgPoolND, o.attrs(), x)
}

// MaxUnpool is a partial inverse of MaxPoolND: an output of shape out
// (x's N and C, any spatial extent) filled with zeros, then x's elements
// written at their I64 flat positions indices (shaped like x; a later
// element wins where two share a position). An index outside the output
// is a run-time error.
func (g *Graph) MaxUnpool(x, indices *Node, out []int) *Node {
	return g.add(OpMaxUnpool, Attrs{Shape: append([]int(nil), out...)}, x, indices)
}
