package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Quantize is a per-tensor or per-axis affine map between floats and
// integers: QuantizeLinear (x, scale, zero → saturate(round(x/scale) +
// zero)), DequantizeLinear ((q - zero)·scale) or DynamicQuantizeLinear
// (its scale and zero point from x's range first; Output 0 q, 1 scale, 2
// zero point). x is [Outer, Ch, Inner] with one scale and zero point per
// Ch index (Ch 1 per tensor).
type Quantize struct {
	Name             string
	Op               graph.Op
	In, Out          tensor.DType // x's and the result's dtypes
	Outer, Ch, Inner int
	Output           int // DynamicQuantizeLinear's output
	ScaleDT, ZeroDT  tensor.DType
}

// QuantizeOf describes a QuantizeLinear, DequantizeLinear or
// DynamicQuantizeLinear node.
func QuantizeOf(name string, n *graph.Node) (*Quantize, error) {
	x := n.Inputs[0]
	d := &Quantize{Name: name, Op: n.Op, In: x.DType, Out: n.DType, Outer: 1, Ch: 1, Inner: x.Shape.NumElements()}
	switch n.Op {
	case graph.OpDynamicQuantizeLinear:
		d.Output, d.ScaleDT, d.ZeroDT = n.Attrs.Index, tensor.F32, tensor.U8
		return d, nil
	case graph.OpQuantizeLinear, graph.OpDequantizeLinear:
	default:
		return nil, fmt.Errorf("%s: %v is not a quantization", name, n.Op)
	}
	d.ScaleDT, d.ZeroDT = n.Inputs[1].DType, n.Inputs[2].DType
	if c := n.Inputs[1].Shape.NumElements(); c > 1 {
		ax := n.Attrs.Axis
		d.Outer, d.Ch, d.Inner = x.Shape[:ax].NumElements(), c, x.Shape[ax+1:].NumElements()
	}
	return d, nil
}

// IntProduct is an integer matmul or 2-D convolution with I32
// accumulation: MatMulInteger (Gemm's geometry) or ConvInteger (Conv's),
// each operand minus its zero point (per tensor, or per row of A, per
// column of B, per output channel of W).
type IntProduct struct {
	Name   string
	Op     graph.Op
	A, B   tensor.DType // the operands' dtypes (I8 or U8)
	AShape []int
	BShape []int
	AZero  []int // the zero points' shapes
	BZero  []int
	Out    []int
	// Conv is ConvInteger's geometry (nil for the others): x [N, C, H, W]
	// of dtype A (Conv.DType), w [M, C/Groups, KH, KW] of dtype B.
	Conv *Conv
	// Gemm is the product's geometry for MatMulInteger and
	// DynQuantMatMul (nil for ConvInteger): A(m, k) and B(k, n) through
	// its strides, out [Batch..., M, N] (DynQuantMatMul: x as M×K, w
	// K×N, no batch).
	Gemm *Gemm
	// A's zero point for row m sits at Σ batch·AZBatch + m·AZSm, B's for
	// column n at Σ batch·BZBatch + n·BZSn (zero points are constant
	// along K). DynQuantMatMul has no A zero point (its kernel derives
	// x's); its w scale is per column when WScaleSn is 1, and Bias says
	// whether it adds a bias of N.
	AZBatch, BZBatch []int
	AZSm, BZSn       int
	WScaleSn         int
	Bias             bool
}

// IntProductOf describes a MatMulInteger, ConvInteger, DynQuantMatMul,
// QDQMatMul or QDQConv node (for the last three, A is the F32 x its
// kernel quantizes; AZero is empty for DynQuantMatMul, x's zero point for
// the QDQ ops; BZero is w's zero point).
func IntProductOf(name string, n *graph.Node) (*IntProduct, error) {
	switch n.Op {
	case graph.OpMatMulInteger, graph.OpConvInteger, graph.OpDynQuantMatMul, graph.OpQDQMatMul, graph.OpQDQConv:
	default:
		return nil, fmt.Errorf("%s: %v is not an integer product", name, n.Op)
	}
	in := n.Inputs
	if n.Op == graph.OpQDQMatMul || n.Op == graph.OpQDQConv {
		return &IntProduct{Name: name, Op: n.Op, A: in[0].DType, B: in[3].DType, AShape: in[0].Shape, BShape: in[3].Shape,
			AZero: in[2].Shape, BZero: in[4].Shape, Out: n.Shape}, nil
	}
	if n.Op == graph.OpDynQuantMatMul {
		if len(in) < 4 || in[1].Shape.Rank() != 2 {
			return nil, fmt.Errorf("%s: %d inputs, w %v: want 4 or 5 and a 2-D w", name, len(in), in[1].Shape)
		}
		k, cols := in[1].Shape[0], in[1].Shape[1]
		g := &Gemm{Name: name, A: in[0].DType, B: in[1].DType, Out: n.DType, M: in[0].Shape.NumElements() / max(k, 1), N: cols, K: k,
			ASm: k, ASk: 1, BSk: cols, BSn: 1, Alpha: 1}
		d := &IntProduct{Name: name, Op: n.Op, A: in[0].DType, B: in[1].DType, AShape: in[0].Shape, BShape: in[1].Shape,
			BZero: in[2].Shape, Out: n.Shape, Gemm: g, Bias: len(in) == 5}
		if in[2].Shape.NumElements() > 1 {
			d.BZSn = 1
		}
		if in[3].Shape.NumElements() > 1 {
			d.WScaleSn = 1
		}
		return d, nil
	}
	if len(in) != 4 {
		return nil, fmt.Errorf("%s: %d inputs, want 4", name, len(in))
	}
	d := &IntProduct{Name: name, Op: n.Op, A: in[0].DType, B: in[1].DType, AShape: in[0].Shape, BShape: in[1].Shape,
		AZero: in[2].Shape, BZero: in[3].Shape, Out: n.Shape}
	if n.Op == graph.OpConvInteger {
		wt := in[1].Shape
		if wt.Rank() != 4 {
			return nil, fmt.Errorf("%s: weight %v must be 4-D", name, wt)
		}
		win, err := windowOf(name, n, wt[2], wt[3])
		if err != nil {
			return nil, err
		}
		c := &Conv{Name: name, DType: in[0].DType, Window: win, M: wt[0], Groups: max(n.Attrs.Groups, 1)}
		if c.C%c.Groups != 0 || c.M%c.Groups != 0 || wt[1] != c.C/c.Groups || n.Shape[1] != c.M {
			return nil, fmt.Errorf("%s: groups %d do not fit input %v, weight %v, result %v", name, c.Groups, in[0].Shape, wt, n.Shape)
		}
		d.Conv = c
		return d, nil
	}
	g, err := matMul(name, n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d.Gemm = g
	// Each zero point's strides over its operand's shape, then its batch
	// dims mapped onto out's (a batch dim of 1 in the operand is
	// broadcast: the zero point stays put along it).
	zeroStrides := func(op, z tensor.Shape) (batch []int, last2 [2]int) {
		st := tensor.BroadcastStrides(z, op)
		batch = make([]int, len(g.Batch))
		if len(op) < 2 {
			return batch, last2
		}
		off := len(g.Batch) - (len(op) - 2)
		for d := range len(op) - 2 {
			if op[d] != 1 {
				batch[off+d] = st[d]
			}
		}
		if op[len(op)-2] != 1 {
			last2[0] = st[len(op)-2]
		}
		if op[len(op)-1] != 1 {
			last2[1] = st[len(op)-1]
		}
		return batch, last2
	}
	var az, bz [2]int
	d.AZBatch, az = zeroStrides(in[0].Shape, in[2].Shape)
	d.BZBatch, bz = zeroStrides(in[1].Shape, in[3].Shape)
	d.AZSm, d.BZSn = az[0], bz[1]
	if len(in[0].Shape) == 1 {
		d.AZSm = 0 // a vector: one row
	}
	if len(in[1].Shape) == 1 {
		d.BZSn = 0 // a vector: one column
	}
	return d, nil
}
