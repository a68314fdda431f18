package graph

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// elemArity is the operand count of an op a FusedElementwise program may
// hold, or 0 for an op it may not.
func elemArity(op Op) int {
	switch {
	case op.IsUnary(), op == OpCast:
		return 1
	case op.IsBinary():
		return 2
	case op == OpWhere:
		return 3
	}
	return 0
}

// inferFusedElementwise checks the program instruction by instruction
// with the inference of each op (at the broadcast output shape) and
// records every result dtype.
func inferFusedElementwise(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if len(ins) == 0 || len(a.Program) == 0 {
		return 0, nil, fmt.Errorf("needs inputs (%d) and a program (%d instructions)", len(ins), len(a.Program))
	}
	shapes := make([]tensor.Shape, len(ins))
	for i, in := range ins {
		shapes[i] = in.Shape
	}
	out, err := tensor.Broadcast(shapes...)
	if err != nil {
		return 0, nil, err
	}
	vals := make([]*Node, len(a.Program)) // each result as a node of the output shape
	for i := range a.Program {
		in := &a.Program[i]
		if k := elemArity(in.Op); k == 0 || len(in.Args) != k {
			return 0, nil, fmt.Errorf("instruction %d: %v with %d operands is not an elementwise op", i, in.Op, len(in.Args))
		}
		args := make([]*Node, len(in.Args))
		for j, r := range in.Args {
			switch {
			case r.Instr && r.Index >= 0 && r.Index < i:
				args[j] = vals[r.Index]
			case !r.Instr && r.Index >= 0 && r.Index < len(ins):
				args[j] = &Node{DType: ins[r.Index].DType, Shape: out}
			default:
				return 0, nil, fmt.Errorf("instruction %d: operand %d %+v does not refer to an input or an earlier result", i, j, r)
			}
		}
		at := in.Attrs()
		var dt tensor.DType
		switch {
		case in.Op.IsUnary():
			dt, _, err = inferUnary(in.Op, &at, args[0])
		case in.Op.IsBinary():
			dt, _, err = inferBinary(in.Op, args[0], args[1])
		case in.Op == OpWhere:
			dt, _, err = inferWhere(&at, args)
		default:
			dt, _, err = inferCast(&at, args)
		}
		if err != nil {
			return 0, nil, fmt.Errorf("instruction %d (%v): %v", i, in.Op, err)
		}
		in.DType = dt
		vals[i] = &Node{DType: dt, Shape: out}
	}
	return a.Program[len(a.Program)-1].DType, out, nil
}

// swapLast is s with its last two dims exchanged.
func swapLast(s tensor.Shape) tensor.Shape {
	t := s.Clone()
	t[len(t)-1], t[len(t)-2] = t[len(t)-2], t[len(t)-1]
	return t
}

// checkEpilogue validates the activation and the residual input (the
// last of extra when Residual is set) against the output shape.
func checkEpilogue(e Epilogue, out tensor.Shape, extra []*Node) error {
	if e.Act != OpInvalid && !IsConvEpilogueAct(e.Act) {
		return fmt.Errorf("epilogue activation %v is not one of %v or Clip", e.Act, EpilogueActs)
	}
	if e.Act == OpClip && !(e.Min <= e.Max) {
		return fmt.Errorf("epilogue Clip bounds [%v, %v] are not ordered", e.Min, e.Max)
	}
	if e.Act != OpClip && (e.Min != 0 || e.Max != 0) {
		return fmt.Errorf("epilogue bounds [%v, %v] without a Clip", e.Min, e.Max)
	}
	if e.PostAct != OpInvalid && (!IsEpilogueAct(e.PostAct) || !e.Residual) {
		return fmt.Errorf("epilogue post-residual activation %v needs a residual and one of %v", e.PostAct, EpilogueActs)
	}
	if len(extra) != e.Inputs() {
		return fmt.Errorf("epilogue %+v needs %d extra inputs, got %d", e, e.Inputs(), len(extra))
	}
	if e.Residual {
		if r := extra[len(extra)-1]; !r.Shape.Equal(out) {
			return fmt.Errorf("residual %v must have the output shape %v", r.Shape, out)
		}
	}
	return nil
}

func inferFusedMatMul(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if len(ins) < 2 {
		return 0, nil, fmt.Errorf("wrong number of inputs (%d)", len(ins))
	}
	if err := sameFloat(ins); err != nil {
		return 0, nil, err
	}
	as, bs := ins[0].Shape, ins[1].Shape
	if (a.TransA && as.Rank() < 2) || (a.TransB && bs.Rank() < 2) {
		return 0, nil, fmt.Errorf("a transposed operand must have rank >= 2, got %v and %v", as, bs)
	}
	if a.TransA {
		as = swapLast(as)
	}
	if a.TransB {
		bs = swapLast(bs)
	}
	_, _, _, _, out, err := MatMulDims(as, bs)
	if err != nil {
		return 0, nil, err
	}
	e := a.Epilogue
	if e.Pool2x2 || e.PostAct != OpInvalid || e.Act == OpClip {
		return 0, nil, fmt.Errorf("epilogue %+v: only FusedConv2D pools, clips or has a post-residual activation", e)
	}
	if err := checkEpilogue(e, out, ins[2:]); err != nil {
		return 0, nil, err
	}
	if e.Bias {
		if err := checkLastAxisBias(ins[2].Shape, out); err != nil {
			return 0, nil, err
		}
	}
	return ins[0].DType, out, nil
}

// checkLastAxisBias accepts [N] or [1, ..., 1, N] (no more dims than out),
// N being out's last dim.
func checkLastAxisBias(b, out tensor.Shape) error {
	ok := out.Rank() > 0 && b.Rank() > 0 && b.Rank() <= out.Rank() && b[b.Rank()-1] == out[out.Rank()-1]
	for _, d := range b[:max(b.Rank()-1, 0)] {
		ok = ok && d == 1
	}
	if !ok {
		return fmt.Errorf("bias %v must be [N] or [1, ..., N] along the last axis of %v", b, out)
	}
	return nil
}

// inferAddNorm covers AddLayerNorm and AddRMSNorm: x and r, then the
// scale (and bias) of the plain norm, which takes at most maxNorm inputs.
func inferAddNorm(maxNorm int) inferFunc {
	return func(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
		if len(ins) < 2 || len(ins) > maxNorm+1 {
			return 0, nil, fmt.Errorf("wrong number of inputs (%d)", len(ins))
		}
		if err := sameFloat(ins); err != nil {
			return 0, nil, err
		}
		x, r := ins[0], ins[1]
		if s, err := tensor.Broadcast(x.Shape, r.Shape); err != nil || !s.Equal(x.Shape) {
			return 0, nil, fmt.Errorf("residual %v does not broadcast to %v", r.Shape, x.Shape)
		}
		return inferNorm(a, append([]*Node{x}, ins[2:]...))
	}
}

func inferFusedConv(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	e := a.Epilogue
	conv := 2 + b2i(e.Bias)
	if len(ins) != conv+b2i(e.Residual) {
		return 0, nil, fmt.Errorf("wrong number of inputs (%d) for epilogue %+v", len(ins), e)
	}
	dt, out, err := inferConv(a, ins[:conv])
	if err != nil {
		return 0, nil, err
	}
	if err := sameFloat(ins); err != nil {
		return 0, nil, err
	}
	if err := checkEpilogue(e, out, ins[2:]); err != nil {
		return 0, nil, err
	}
	if e.Pool2x2 {
		if e.Residual {
			return 0, nil, fmt.Errorf("epilogue %+v: a pooled epilogue takes no residual", e)
		}
		if out[2] < 2 || out[3] < 2 {
			return 0, nil, fmt.Errorf("conv output %v is too small for a 2×2 pool", out)
		}
		out = tensor.Shape{out[0], out[1], out[2] / 2, out[3] / 2}
	}
	return dt, out, nil
}

// ConvShape is the shape of the convolution of a Conv2D or FusedConv2D
// node, bias and activation included: the node's own shape, but for a
// pooled epilogue (Epilogue.Pool2x2), whose spatial dims it gives before
// the pooling halves them. Kernels that pool a tile of it need it, and
// floor mode makes it unrecoverable from the pooled shape.
func ConvShape(n *Node) (tensor.Shape, error) {
	if n.Op != OpConv2D && n.Op != OpFusedConv2D {
		return nil, fmt.Errorf("graph: ConvShape of %v", n.Op)
	}
	e := n.Attrs.Epilogue
	if n.Op == OpConv2D || !e.Pool2x2 {
		return n.Shape, nil
	}
	conv := 2 + b2i(e.Bias)
	if len(n.Inputs) < conv {
		return nil, fmt.Errorf("graph: ConvShape: %d inputs for epilogue %+v", len(n.Inputs), e)
	}
	a := n.Attrs.clone()
	_, s, err := inferConv(&a, n.Inputs[:conv])
	if err != nil {
		return nil, fmt.Errorf("graph: ConvShape: %w", err)
	}
	return s, nil
}
