package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Lines views a contiguous shape as [Outer, Size, Inner] around one axis:
// line l (of Outer·Inner) holds the Size elements Base(l) + k·Inner.
type Lines struct {
	Outer, Size, Inner int
}

// LinesOf splits shape around axis.
func LinesOf(shape tensor.Shape, axis int) (Lines, error) {
	if axis < 0 || axis >= shape.Rank() {
		return Lines{}, fmt.Errorf("axis %d out of range for rank %d", axis, shape.Rank())
	}
	return Lines{Outer: shape[:axis].NumElements(), Size: shape[axis], Inner: shape[axis+1:].NumElements()}, nil
}

// Count is the number of lines.
func (l Lines) Count() int { return l.Outer * l.Inner }

// Base is the element offset of line i's first element.
func (l Lines) Base(i int) int { return i/l.Inner*l.Size*l.Inner + i%l.Inner }

// Elem is the element offset of element k of line i.
func (l Lines) Elem(i, k int) int { return l.Base(i) + k*l.Inner }

// CumSum is the running sum along an axis (Exclusive leaves out the
// current element, Reverse runs from the end). Operands: out, x.
type CumSum struct {
	Name  string
	DType tensor.DType
	Lines
	Exclusive, Reverse bool
}

// CumSumOf describes a CumSum node.
func CumSumOf(name string, n *graph.Node) (*CumSum, error) {
	if n.Op != graph.OpCumSum || len(n.Inputs) != 1 || n.Inputs[0].DType != n.DType || !n.Inputs[0].Shape.Equal(n.Shape) {
		return nil, fmt.Errorf("%s: %v is not a CumSum of its own dtype and shape", name, n.Op)
	}
	l, err := LinesOf(n.Inputs[0].Shape, n.Attrs.Axis)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &CumSum{Name: name, DType: n.DType, Lines: l, Exclusive: n.Attrs.Exclusive, Reverse: n.Attrs.Reverse}, nil
}

// Arg is ArgMax (Max) or ArgMin along an axis: the I64 index of the first
// extreme element of each line, where the first NaN counts as the
// extreme (numpy). Operands: out (I64, one per line), x of DType.
type Arg struct {
	Name  string
	DType tensor.DType // of x
	Lines
	Max bool
}

// ArgOf describes an ArgMax or ArgMin node.
func ArgOf(name string, n *graph.Node) (*Arg, error) {
	if n.Op != graph.OpArgMax && n.Op != graph.OpArgMin || len(n.Inputs) != 1 || n.DType != tensor.I64 {
		return nil, fmt.Errorf("%s: %v is not an ArgMax/ArgMin giving I64", name, n.Op)
	}
	l, err := LinesOf(n.Inputs[0].Shape, n.Attrs.Axis)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if l.Size == 0 && l.Count() > 0 {
		return nil, fmt.Errorf("%s: %v over an empty axis", name, n.Op)
	}
	return &Arg{Name: name, DType: n.Inputs[0].DType, Lines: l, Max: n.Op == graph.OpArgMax}, nil
}

// BatchNorm is inference batch normalisation of x viewed as [N, C,
// Spatial]: (x − mean[c]) / sqrt(var[c] + Eps) · scale[c] + bias[c].
// Operands: out, x, scale, bias, mean, var.
type BatchNorm struct {
	Name          string
	DType         tensor.DType
	N, C, Spatial int
	Eps           float32
}

// BatchNormOf describes a BatchNorm node.
func BatchNormOf(name string, n *graph.Node) (*BatchNorm, error) {
	if n.Op != graph.OpBatchNorm || len(n.Inputs) != 5 {
		return nil, fmt.Errorf("%s: %v is not a BatchNorm", name, n.Op)
	}
	x := n.Inputs[0].Shape
	if x.Rank() < 2 || !n.Shape.Equal(x) {
		return nil, fmt.Errorf("%s: input %v has no channel axis or differs from the result %v", name, x, n.Shape)
	}
	for _, in := range n.Inputs {
		if in.DType != n.DType || (in != n.Inputs[0] && in.Shape.NumElements() != x[1]) {
			return nil, fmt.Errorf("%s: parameter %s must be %v[%d]", name, in, n.DType, x[1])
		}
	}
	return &BatchNorm{Name: name, DType: n.DType, N: x[0], C: x[1], Spatial: x[2:].NumElements(), Eps: n.Attrs.Eps}, nil
}

// Channel is the channel of element i.
func (b *BatchNorm) Channel(i int) int { return i / b.Spatial % b.C }

// RoPE rotates each of Rows rows of 2·Half elements (position row %
// Seq) pair by pair: (a, b) → (a·cos − b·sin, b·cos + a·sin) with cos and
// sin [Seq, Half]. Operands: out, x, cos, sin.
type RoPE struct {
	Name            string
	DType           tensor.DType
	Rows, Seq, Half int
	Interleaved     bool
}

// RoPEOf describes a RoPE node.
func RoPEOf(name string, n *graph.Node) (*RoPE, error) {
	if n.Op != graph.OpRoPE || len(n.Inputs) != 3 {
		return nil, fmt.Errorf("%s: %v is not a RoPE", name, n.Op)
	}
	x := n.Inputs[0].Shape
	r := x.Rank()
	if r < 2 || x[r-1]%2 != 0 || !n.Shape.Equal(x) {
		return nil, fmt.Errorf("%s: input %v must be [..., seq, even dim] like the result %v", name, x, n.Shape)
	}
	p := &RoPE{Name: name, DType: n.DType, Rows: x[:r-1].NumElements(), Seq: x[r-2], Half: x[r-1] / 2, Interleaved: n.Attrs.Interleaved}
	for _, in := range n.Inputs {
		if in.DType != n.DType {
			return nil, fmt.Errorf("%s: input %s is not %v", name, in, n.DType)
		}
	}
	if n.Inputs[1].Shape.NumElements() != p.Seq*p.Half || n.Inputs[2].Shape.NumElements() != p.Seq*p.Half {
		return nil, fmt.Errorf("%s: cos %v and sin %v must be [%d, %d]", name, n.Inputs[1].Shape, n.Inputs[2].Shape, p.Seq, p.Half)
	}
	return p, nil
}

// Pair is the offsets within a row of pair i's two elements.
func (p *RoPE) Pair(i int) (a, b int) {
	if p.Interleaved {
		return 2 * i, 2*i + 1
	}
	return i, i + p.Half
}

// TopK writes, for each line, its K first elements in TopK's order: the
// larger first (the smaller with Smallest), NaN above every number, the
// lower position first on ties (ONNX). Operands: out (K per line, in
// the line's layout: x's DType for values, I64 positions with Indices),
// x of DType.
type TopK struct {
	Name  string
	DType tensor.DType // of x
	Lines
	K                 int
	Smallest, Indices bool
}

// TopKOf describes a TopK node (either of its outputs).
func TopKOf(name string, n *graph.Node) (*TopK, error) {
	if n.Op != graph.OpTopK || len(n.Inputs) != 1 {
		return nil, fmt.Errorf("%s: %v is not a TopK", name, n.Op)
	}
	l, err := LinesOf(n.Inputs[0].Shape, n.Attrs.Axis)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if n.Attrs.K < 0 || n.Attrs.K > l.Size {
		return nil, fmt.Errorf("%s: k = %d out of range [0, %d]", name, n.Attrs.K, l.Size)
	}
	return &TopK{Name: name, DType: n.Inputs[0].DType, Lines: l, K: n.Attrs.K, Smallest: n.Attrs.Smallest, Indices: n.Attrs.Index == 1}, nil
}
