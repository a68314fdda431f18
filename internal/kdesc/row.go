package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Reduce is ReduceSum/Mean/Max/Min/Prod of a contiguous tensor over Axes
// (sorted, non-negative; all when empty); out holds the kept dims in
// order (KeepDims only changes the shape, not the layout). Operands:
// out, x.
type Reduce struct {
	Name  string
	Op    graph.Op
	DType tensor.DType
	Shape []int // of the input
	Axes  []int
}

// ReduceOf describes a reduction node, or GlobalAvgPool as the
// ReduceMean over its spatial axes (GlobalPoolAxes), which gives NaN
// (0/0) for an empty plane, as the reference does.
func ReduceOf(name string, n *graph.Node) (*Reduce, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("%s: %v has %d inputs", name, n.Op, len(n.Inputs))
	}
	r := &Reduce{Name: name, Op: n.Op, DType: n.DType, Shape: n.Inputs[0].Shape, Axes: n.Attrs.Axes}
	switch {
	case n.Op.IsReduce():
		return r, nil
	case n.Op == graph.OpGlobalAvgPool:
		axes, err := GlobalPoolAxes(n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r.Op, r.Axes = graph.OpReduceMean, axes
		return r, nil
	}
	return nil, fmt.Errorf("%s: %v is not a reduction", name, n.Op)
}

// GlobalPoolAxes are the spatial axes GlobalAvgPool averages over: a
// ReduceMean over them of the contiguous input gives its result.
func GlobalPoolAxes(n *graph.Node) ([]int, error) {
	r := n.Inputs[0].Shape.Rank()
	if n.Op != graph.OpGlobalAvgPool || r < 3 {
		return nil, fmt.Errorf("%v of rank %d is not a global pool", n.Op, r)
	}
	axes := make([]int, 0, r-2)
	for d := 2; d < r; d++ {
		axes = append(axes, d)
	}
	return axes, nil
}

// Softmax is Softmax, or LogSoftmax (Log), of a contiguous tensor over
// one axis. Operands: out, x.
type Softmax struct {
	Name  string
	DType tensor.DType
	Shape []int
	Axis  int
	Log   bool
}

// SoftmaxOf describes a Softmax or LogSoftmax node.
func SoftmaxOf(name string, n *graph.Node) (*Softmax, error) {
	if n.Op != graph.OpSoftmax && n.Op != graph.OpLogSoftmax || len(n.Inputs) != 1 {
		return nil, fmt.Errorf("%s: %v is not a softmax", name, n.Op)
	}
	return &Softmax{Name: name, DType: n.DType, Shape: n.Shape, Axis: n.Attrs.Axis, Log: n.Op == graph.OpLogSoftmax}, nil
}

// Norm is LayerNorm ((x−mean)/√(var+Eps)·scale + bias, biased variance)
// or RMSNorm (x/√(mean(x²)+Eps)·scale) of a contiguous x over its dims
// from Axis on; with Residual, of x + r (AddLayerNorm, AddRMSNorm), r
// read at element strides ResStrides over Shape (0 broadcasts). With
// Channels (InstanceNorm: Axis 2 of [N, C, spatial...]), scale and bias
// hold one value per channel, row r's at r % Channels.
// Operands: out, x, then r, scale and bias when present (scale and bias
// hold the normalised dims' elements, or Channels elements).
type Norm struct {
	Name       string
	DType      tensor.DType
	Shape      []int // of x
	Axis       int
	Eps        float32
	RMS        bool
	Scale      bool
	Bias       bool // LayerNorm only
	Residual   bool
	ResStrides []int
	Channels   int
}

// instanceNormOf describes InstanceNorm as the LayerNorm of each [n, c]
// plane with the channel's scale and bias.
func instanceNormOf(name string, n *graph.Node) (*Norm, error) {
	if len(n.Inputs) != 3 || n.Inputs[0].Shape.Rank() < 3 {
		return nil, fmt.Errorf("%s: %v needs x of rank >= 3, scale and bias", name, n.Op)
	}
	x := n.Inputs[0]
	for _, in := range n.Inputs {
		if in.DType != n.DType || (in != x && in.Shape.NumElements() != x.Shape[1]) {
			return nil, fmt.Errorf("%s: scale/bias %s must be %v[%d]", name, in, n.DType, x.Shape[1])
		}
	}
	return &Norm{Name: name, DType: n.DType, Shape: x.Shape, Axis: 2, Eps: n.Attrs.Eps, Scale: true, Bias: true, Channels: x.Shape[1]}, nil
}

// NormOf describes a LayerNorm, RMSNorm, AddLayerNorm or AddRMSNorm
// node, checking that its scale and bias have the normalised dims'
// element count and every operand the node's dtype.
func NormOf(name string, n *graph.Node) (*Norm, error) {
	var res bool
	switch n.Op {
	case graph.OpInstanceNorm:
		return instanceNormOf(name, n)
	case graph.OpLayerNorm, graph.OpRMSNorm:
	case graph.OpAddLayerNorm, graph.OpAddRMSNorm:
		res = true
	default:
		return nil, fmt.Errorf("%s: %v is not a norm", name, n.Op)
	}
	first := 1 // the first of scale and bias
	if res {
		first = 2
	}
	if len(n.Inputs) < first {
		return nil, fmt.Errorf("%s: %v has %d inputs", name, n.Op, len(n.Inputs))
	}
	x, a := n.Inputs[0], n.Attrs
	if a.Axis < 0 || a.Axis > x.Shape.Rank() {
		return nil, fmt.Errorf("%s: axis %d of rank %d", name, a.Axis, x.Shape.Rank())
	}
	l := x.Shape[a.Axis:].NumElements()
	for _, in := range n.Inputs[first:] {
		if in.Shape.NumElements() != l || in.DType != n.DType {
			return nil, fmt.Errorf("scale/bias %s must have the %d elements and dtype of the normalised dims", in, l)
		}
	}
	d := &Norm{Name: name, DType: n.DType, Shape: x.Shape, Axis: a.Axis, Eps: a.Eps,
		RMS: n.Op == graph.OpRMSNorm || n.Op == graph.OpAddRMSNorm, Scale: len(n.Inputs) > first, Bias: len(n.Inputs) > first+1}
	if res {
		r := n.Inputs[1]
		if r.DType != n.DType {
			return nil, fmt.Errorf("residual %s must be %v", r, n.DType)
		}
		d.Residual, d.ResStrides = true, tensor.BroadcastStrides(r.Shape, x.Shape)
	}
	return d, nil
}
