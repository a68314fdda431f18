package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// MatMulInteger and ConvInteger: the zero points are subtracted into
// int32 copies of the operands (a zero point broadcasts like a binary
// op's operand), then the float ops' direct loops run with int32 elements
// and an int32 accumulator. Every product of two 9-bit differences fits
// in int32; the sum wraps past it, as ONNX allows. These are the
// reference and the CPU path; an int8 GEMM takes the products once a
// fusion routes them there (the zero points then become row and column
// corrections, which is why inference keeps them constant along K).

var quant8 = []tensor.DType{tensor.I8, tensor.U8}

func init() {
	Register(Entry{Op: graph.OpMatMulInteger, DTypes: quant8, Reference: prepareMatMulInteger})
	Register(Entry{Op: graph.OpConvInteger, DTypes: quant8, Reference: prepareConvInteger})
}

// centred holds an operand minus its zero point as int32: the plan that
// broadcasts the zero point over the operand, and the scratch.
type centred struct {
	p   *bcastPlan
	dst []int32
	sub func(p *bcastPlan, dst []int32, x, z []byte)
}

// newCentred prepares x - zero for an I8 or U8 operand of shape x whose
// zero point, of the same dtype, has shape z (broadcast to x).
func newCentred(dt tensor.DType, x, z tensor.Shape) (*centred, error) {
	p, err := newBcastPlan(x, x, z)
	if err != nil {
		return nil, err
	}
	c := &centred{p: p, dst: make([]int32, x.NumElements())}
	switch dt {
	case tensor.I8:
		c.sub = subZero[int8]
	case tensor.U8:
		c.sub = subZero[uint8]
	default:
		return nil, fmt.Errorf("operand dtype %v, want i8 or u8", dt)
	}
	return c, nil
}

func subZero[Q int8 | uint8](p *bcastPlan, dst []int32, x, z []byte) {
	bcastLoop2(p, dst, tensor.Elems[Q](x), tensor.Elems[Q](z), func(v, zp Q) int32 { return int32(v) - int32(zp) })
}

// run fills the scratch from the operand and its zero point and returns
// it as an I32 tensor.
func (c *centred) run(x, z tensor.Tensor) tensor.Tensor {
	c.sub(c.p, c.dst, x.Data, z.Data)
	return tensor.Tensor{DType: tensor.I32, Shape: x.Shape, Data: tensor.Bytes(c.dst)}
}

// integerOperands checks a MatMulInteger or ConvInteger node's four
// inputs and I32 result and prepares both centred operands; zeroShape
// gives the shape each zero point broadcasts as.
func integerOperands(n *graph.Node, zeroShape func(i int) tensor.Shape) (*centred, *centred, error) {
	if len(n.Inputs) != 4 || n.DType != tensor.I32 {
		return nil, nil, fmt.Errorf("%d inputs and result %v, want 4 and i32", len(n.Inputs), n.DType)
	}
	var cs [2]*centred
	for i := range cs {
		x, z := n.Inputs[i], n.Inputs[2+i]
		if z.DType != x.DType {
			return nil, nil, fmt.Errorf("zero point %d is %v, its operand %v", i, z.DType, x.DType)
		}
		c, err := newCentred(x.DType, x.Shape, zeroShape(i))
		if err != nil {
			return nil, nil, fmt.Errorf("operand %d: %w", i, err)
		}
		cs[i] = c
	}
	return cs[0], cs[1], nil
}

func prepareMatMulInteger(n *graph.Node) (Kernel, error) {
	a, b, err := integerOperands(n, func(i int) tensor.Shape { return n.Inputs[2+i].Shape })
	if err != nil {
		return nil, err
	}
	p, err := newMatMulPlan(n)
	if err != nil {
		return nil, err
	}
	args := make([]tensor.Tensor, 2)
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		args[0], args[1] = a.run(ins[0], ins[2]), b.run(ins[1], ins[3])
		runMatMul[int32, int32](p, args, out)
		return nil
	}), nil
}

func prepareConvInteger(n *graph.Node) (Kernel, error) {
	if len(n.Inputs) != 4 {
		return nil, fmt.Errorf("%d inputs, want 4", len(n.Inputs))
	}
	p, err := newConvPlan(n)
	if err != nil {
		return nil, err
	}
	xz, wz := n.Inputs[2].Shape.NumElements(), n.Inputs[3].Shape.NumElements()
	if xz != 1 || (wz != 1 && wz != p.m) {
		return nil, fmt.Errorf("zero points of %d and %d values, want 1 and 1 or %d", xz, wz, p.m)
	}
	// x's zero point is a scalar; w's is one per output channel (dim 0).
	x, w, err := integerOperands(n, func(i int) tensor.Shape {
		if i == 1 && wz == p.m {
			return tensor.Shape{p.m, 1, 1, 1}
		}
		return tensor.Shape{}
	})
	if err != nil {
		return nil, err
	}
	args := make([]tensor.Tensor, 2)
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		args[0], args[1] = x.run(ins[0], ins[2]), w.run(ins[1], ins[3])
		runConv2D[int32, int32](p, args, out)
		return nil
	}), nil
}
