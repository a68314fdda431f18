package graph

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

func sameFloat(ins []*Node) error {
	for i, in := range ins {
		if !in.DType.IsFloat() {
			return fmt.Errorf("input %d: dtype %v not supported (float only)", i, in.DType)
		}
		if in.DType != ins[0].DType {
			return fmt.Errorf("input %d: dtype %v differs from %v", i, in.DType, ins[0].DType)
		}
	}
	return nil
}

// MatMulDims resolves numpy matmul shapes: a is [..., M, K] (or [K]), b is
// [..., K, N] (or [K]). It returns the broadcast batch shape, M, K, N and
// the result shape (with the promoted 1-D dims removed again).
func MatMulDims(a, b tensor.Shape) (batch tensor.Shape, m, k, n int, out tensor.Shape, err error) {
	if a.Rank() == 0 || b.Rank() == 0 {
		return nil, 0, 0, 0, nil, fmt.Errorf("operands must have rank >= 1, got %v and %v", a, b)
	}
	pa, pb := a, b
	if a.Rank() == 1 {
		pa = tensor.Shape{1, a[0]}
	}
	if b.Rank() == 1 {
		pb = tensor.Shape{b[0], 1}
	}
	m, k = pa[len(pa)-2], pa[len(pa)-1]
	k2 := pb[len(pb)-2]
	n = pb[len(pb)-1]
	if k != k2 {
		return nil, 0, 0, 0, nil, fmt.Errorf("inner dims differ: %v · %v (%d vs %d)", a, b, k, k2)
	}
	batch, err = tensor.Broadcast(pa[:len(pa)-2], pb[:len(pb)-2])
	if err != nil {
		return nil, 0, 0, 0, nil, fmt.Errorf("batch dims: %w", err)
	}
	out = batch.Clone()
	if a.Rank() > 1 {
		out = append(out, m)
	}
	if b.Rank() > 1 {
		out = append(out, n)
	}
	return batch, m, k, n, out, nil
}

func inferMatMul(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if err := sameFloat(ins); err != nil {
		return 0, nil, err
	}
	_, _, _, _, out, err := MatMulDims(ins[0].Shape, ins[1].Shape)
	return ins[0].DType, out, err
}

func inferGemm(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if err := sameFloat(ins); err != nil {
		return 0, nil, err
	}
	x, y := ins[0].Shape, ins[1].Shape
	if x.Rank() != 2 || y.Rank() != 2 {
		return 0, nil, fmt.Errorf("operands must be 2-D, got %v and %v", x, y)
	}
	m, k := x[0], x[1]
	if a.TransA {
		m, k = k, m
	}
	k2, n := y[0], y[1]
	if a.TransB {
		k2, n = n, k2
	}
	if k != k2 {
		return 0, nil, fmt.Errorf("inner dims differ (%d vs %d) for A %v transA=%v, B %v transB=%v", k, k2, x, a.TransA, y, a.TransB)
	}
	out := tensor.Shape{m, n}
	if len(ins) == 3 {
		if s, err := tensor.Broadcast(ins[2].Shape, out); err != nil || !s.Equal(out) {
			return 0, nil, fmt.Errorf("C %v does not broadcast to %v", ins[2].Shape, out)
		}
	}
	return ins[0].DType, out, nil
}

// inferNorm covers LayerNorm and RMSNorm: normalise over [Axis, rank);
// optional scale (and bias) have exactly the normalised shape.
func inferNorm(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if err := sameFloat(ins); err != nil {
		return 0, nil, err
	}
	x := ins[0]
	ax, err := tensor.NormAxis(a.Axis, x.Shape.Rank())
	if err != nil {
		return 0, nil, err
	}
	a.Axis = ax
	if a.Eps < 0 {
		return 0, nil, fmt.Errorf("negative epsilon %v", a.Eps)
	}
	for i, p := range ins[1:] {
		if !p.Shape.Equal(x.Shape[ax:]) {
			return 0, nil, fmt.Errorf("input %d has shape %v, want the normalised shape %v", i+1, p.Shape, x.Shape[ax:])
		}
	}
	return x.DType, x.Shape.Clone(), nil
}

func inferBatchNorm(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if err := sameFloat(ins); err != nil {
		return 0, nil, err
	}
	x := ins[0]
	if x.Shape.Rank() < 2 {
		return 0, nil, fmt.Errorf("input must have rank >= 2 (N, C, ...), got %v", x.Shape)
	}
	for i, p := range ins[1:] {
		if !p.Shape.Equal(tensor.Shape{x.Shape[1]}) {
			return 0, nil, fmt.Errorf("input %d has shape %v, want [%d] (channels)", i+1, p.Shape, x.Shape[1])
		}
	}
	return x.DType, x.Shape.Clone(), nil
}

// inferInstanceNorm: x is [N, C, spatial...] with at least one spatial
// axis (ONNX), scale and bias are [C].
func inferInstanceNorm(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if x := ins[0]; x.Shape.Rank() < 3 {
		return 0, nil, fmt.Errorf("input must have rank >= 3 (N, C, spatial...), got %v", x.Shape)
	}
	return inferBatchNorm(a, ins)
}

// pair fills a 2-vector attribute with a default and checks it.
func pair(name string, v []int, def, min int) ([]int, error) {
	if v == nil {
		return []int{def, def}, nil
	}
	if len(v) != 2 {
		return nil, fmt.Errorf("%s needs 2 values, got %v", name, v)
	}
	if v[0] < min || v[1] < min {
		return nil, fmt.Errorf("%s %v must be >= %d", name, v, min)
	}
	return v, nil
}

// windowAttrs normalises Strides, Pads and Dilations for conv and pooling.
func windowAttrs(a *Attrs) error {
	var err error
	if a.Strides, err = pair("strides", a.Strides, 1, 1); err != nil {
		return err
	}
	if a.Dilations, err = pair("dilations", a.Dilations, 1, 1); err != nil {
		return err
	}
	if a.Pads == nil {
		a.Pads = []int{0, 0, 0, 0}
	}
	if len(a.Pads) != 4 || min(a.Pads[0], a.Pads[1], a.Pads[2], a.Pads[3]) < 0 {
		return fmt.Errorf("pads must be 4 non-negative values [top left bottom right], got %v", a.Pads)
	}
	return nil
}

// windowOut is the output length of a sliding window (floor mode).
func windowOut(in, padLo, padHi, k, stride, dil int) (int, error) {
	span := dil*(k-1) + 1
	n := in + padLo + padHi - span
	if n < 0 {
		return 0, fmt.Errorf("window %d (dilated %d) larger than padded input %d", k, span, in+padLo+padHi)
	}
	return n/stride + 1, nil
}

func inferConv(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if err := sameFloat(ins); err != nil {
		return 0, nil, err
	}
	s, err := convShape(a, ins[0].Shape, ins[1].Shape)
	if err != nil {
		return 0, nil, err
	}
	if len(ins) == 3 && !ins[2].Shape.Equal(tensor.Shape{s[1]}) {
		return 0, nil, fmt.Errorf("bias %v must be [%d]", ins[2].Shape, s[1])
	}
	return ins[0].DType, s, nil
}

// convShape normalises a 2-D convolution's window attributes and groups
// and returns the result shape of x [N, C, H, W] convolved with w [M,
// C/groups, kh, kw] (Conv2D, ConvInteger).
func convShape(a *Attrs, x, w tensor.Shape) (tensor.Shape, error) {
	if x.Rank() != 4 || w.Rank() != 4 {
		return nil, fmt.Errorf("input %v and weight %v must be 4-D (NCHW, MCkk)", x, w)
	}
	if w[2] < 1 || w[3] < 1 { // an empty window has no output size
		return nil, fmt.Errorf("weight %v: kernel dims must be >= 1", w)
	}
	if err := windowAttrs(a); err != nil {
		return nil, err
	}
	if a.Groups == 0 {
		a.Groups = 1
	}
	g := a.Groups
	if g < 0 || x[1]%g != 0 || w[0]%g != 0 {
		return nil, fmt.Errorf("groups %d must divide input channels %d and output channels %d", g, x[1], w[0])
	}
	if w[1] != x[1]/g {
		return nil, fmt.Errorf("weight %v: dim 1 must be channels/groups = %d", w, x[1]/g)
	}
	oh, err := windowOut(x[2], a.Pads[0], a.Pads[2], w[2], a.Strides[0], a.Dilations[0])
	if err != nil {
		return nil, err
	}
	ow, err := windowOut(x[3], a.Pads[1], a.Pads[3], w[3], a.Strides[1], a.Dilations[1])
	if err != nil {
		return nil, err
	}
	return tensor.Shape{x[0], w[0], oh, ow}, nil
}

func inferPool(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if err := sameFloat(ins); err != nil {
		return 0, nil, err
	}
	x := ins[0].Shape
	if x.Rank() != 4 {
		return 0, nil, fmt.Errorf("input %v must be 4-D (NCHW)", x)
	}
	var err error
	if a.Kernel, err = pair("kernel", a.Kernel, -1, 1); err != nil || a.Kernel[0] < 1 {
		return 0, nil, fmt.Errorf("kernel must be 2 values >= 1, got %v", a.Kernel)
	}
	if err := windowAttrs(a); err != nil {
		return 0, nil, err
	}
	// Checked after windowAttrs has validated the length, so Apply with a
	// short slice is an error rather than an index panic.
	if a.Dilations[0] != 1 || a.Dilations[1] != 1 {
		return 0, nil, fmt.Errorf("pooling dilations are not supported")
	}
	if a.Pads[0] >= a.Kernel[0] || a.Pads[2] >= a.Kernel[0] || a.Pads[1] >= a.Kernel[1] || a.Pads[3] >= a.Kernel[1] {
		return 0, nil, fmt.Errorf("pads %v must be smaller than the kernel %v", a.Pads, a.Kernel)
	}
	oh, err := windowOut(x[2], a.Pads[0], a.Pads[2], a.Kernel[0], a.Strides[0], 1)
	if err != nil {
		return 0, nil, err
	}
	ow, err := windowOut(x[3], a.Pads[1], a.Pads[3], a.Kernel[1], a.Strides[1], 1)
	if err != nil {
		return 0, nil, err
	}
	return ins[0].DType, tensor.Shape{x[0], x[1], oh, ow}, nil
}

func inferGlobalPool(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if err := sameFloat(ins); err != nil {
		return 0, nil, err
	}
	x := ins[0].Shape
	if x.Rank() < 3 {
		return 0, nil, fmt.Errorf("input %v must have rank >= 3 (N, C, spatial...)", x)
	}
	out := tensor.Shape{x[0], x[1]}
	for range x[2:] {
		out = append(out, 1)
	}
	return ins[0].DType, out, nil
}

// inferAttention: q [B,H,Sq,D], k [B,Hk,Sk,D], v [B,Hk,Sk,Dv], H a
// multiple of Hk (grouped-query attention), optional mask broadcastable to
// [B,H,Sq,Sk]: additive (same float dtype) or Bool (true keeps).
func inferAttention(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if err := sameFloat(ins[:3]); err != nil {
		return 0, nil, err
	}
	q, k, v := ins[0].Shape, ins[1].Shape, ins[2].Shape
	if q.Rank() != 4 || k.Rank() != 4 || v.Rank() != 4 {
		return 0, nil, fmt.Errorf("q %v, k %v, v %v must be 4-D [batch, heads, seq, dim]", q, k, v)
	}
	if k[0] != q[0] || v[0] != q[0] || k[1] != v[1] || k[2] != v[2] || k[3] != q[3] {
		return 0, nil, fmt.Errorf("q %v, k %v, v %v disagree on batch, heads, key length or head dim", q, k, v)
	}
	if k[1] == 0 || q[1]%k[1] != 0 {
		return 0, nil, fmt.Errorf("query heads %d must be a multiple of key/value heads %d", q[1], k[1])
	}
	scores := tensor.Shape{q[0], q[1], q[2], k[2]}
	if a.KVLen {
		n := ins[len(ins)-1]
		if len(ins) < 4 || n.DType != tensor.I64 || !n.Shape.Equal(tensor.Shape{q[0]}) {
			return 0, nil, fmt.Errorf("KVLen: the last input must be I64 [%d] (keys in use per batch)", q[0])
		}
		ins = ins[:len(ins)-1]
	}
	if len(ins) > 4 {
		return 0, nil, fmt.Errorf("%d inputs: q, k, v and a mask at most (KVLen not set)", len(ins))
	}
	if len(ins) == 4 {
		m := ins[3]
		if m.DType != tensor.Bool && m.DType != ins[0].DType {
			return 0, nil, fmt.Errorf("mask dtype %v must be bool or %v", m.DType, ins[0].DType)
		}
		if s, err := tensor.Broadcast(m.Shape, scores); err != nil || !s.Equal(scores) {
			return 0, nil, fmt.Errorf("mask %v does not broadcast to scores %v", m.Shape, scores)
		}
	}
	return ins[0].DType, tensor.Shape{q[0], q[1], q[2], v[3]}, nil
}

// inferRoPE: x [..., S, D] with D even, cos and sin [S, D/2].
func inferRoPE(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	if err := sameFloat(ins); err != nil {
		return 0, nil, err
	}
	x := ins[0].Shape
	if x.Rank() < 2 || x[x.Rank()-1]%2 != 0 {
		return 0, nil, fmt.Errorf("input %v must be [..., seq, dim] with an even dim", x)
	}
	want := tensor.Shape{x[x.Rank()-2], x[x.Rank()-1] / 2}
	if !ins[1].Shape.Equal(want) || !ins[2].Shape.Equal(want) {
		return 0, nil, fmt.Errorf("cos %v and sin %v must be %v", ins[1].Shape, ins[2].Shape, want)
	}
	return ins[0].DType, x.Clone(), nil
}
