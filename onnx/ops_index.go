package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func init() {
	register("GatherElements", 11, one(mapGatherElements))
	register("GatherND", 11, one(mapGatherND))
	register("ScatterElements", 11, one(mapScatterElements))
	// Scatter (opsets 9 and 11, deprecated) is ScatterElements without a
	// reduction; opset 11 only added negative indices, which kiln takes.
	register("Scatter", 9, one(mapScatterElements))
	register("ScatterND", 11, one(mapScatterND))
	register("Compress", 9, one(mapCompress))
	register("ReverseSequence", 10, one(mapReverseSequence))
	register("DepthToSpace", 1, one(mapDepthToSpace))
	register("SpaceToDepth", 1, one(mapSpaceToDepth))
}

// indexInputs returns inputs 0 and 1, checking that 1 is an I32 or I64
// index tensor.
func (c *ctx) indexInputs() (x, idx *graph.Node, err error) {
	if x, err = c.need(0); err != nil {
		return nil, nil, err
	}
	if idx, err = c.need(1); err != nil {
		return nil, nil, err
	}
	if idx.DType != tensor.I32 && idx.DType != tensor.I64 {
		return nil, nil, fmt.Errorf("indices must be int32 or int64, got %v", idx.DType)
	}
	return x, idx, nil
}

func mapGatherElements(c *ctx) (*graph.Node, error) {
	x, idx, err := c.indexInputs()
	if err != nil {
		return nil, err
	}
	a, err := c.attrInt("axis", 0)
	if err != nil {
		return nil, err
	}
	return c.apply(graph.OpGatherElements, graph.Attrs{Axis: int(a)}, x, idx)
}

func mapGatherND(c *ctx) (*graph.Node, error) {
	x, idx, err := c.indexInputs()
	if err != nil {
		return nil, err
	}
	b, err := c.attrInt("batch_dims", 0)
	if err != nil {
		return nil, err
	}
	return c.apply(graph.OpGatherND, graph.Attrs{BatchDims: int(b)}, x, idx)
}

// reduction reads a scatter's reduction attribute: add and mul from
// opset 16, max and min from 18.
func (c *ctx) reduction() (graph.ScatterReduction, error) {
	s, err := c.attrString("reduction", "none")
	if err != nil {
		return 0, err
	}
	r, ok := graph.ParseReduction(s)
	since := map[graph.ScatterReduction]int64{graph.ScatterAdd: 16, graph.ScatterMul: 16, graph.ScatterMax: 18, graph.ScatterMin: 18}[r]
	if !ok || c.opset < since {
		return 0, unsupportedf("reduction=%q (ONNX defines none, add and mul from opset 16, max and min from 18; this model is opset %d)", s, c.opset)
	}
	return r, nil
}

func mapScatterElements(c *ctx) (*graph.Node, error) {
	x, idx, err := c.indexInputs()
	if err != nil {
		return nil, err
	}
	upd, err := c.need(2)
	if err != nil {
		return nil, err
	}
	a, err := c.attrInt("axis", 0)
	if err != nil {
		return nil, err
	}
	r, err := c.reduction()
	if err != nil {
		return nil, err
	}
	return c.apply(graph.OpScatterElements, graph.Attrs{Axis: int(a), Reduction: r}, x, idx, upd)
}

func mapScatterND(c *ctx) (*graph.Node, error) {
	x, idx, err := c.indexInputs()
	if err != nil {
		return nil, err
	}
	upd, err := c.need(2)
	if err != nil {
		return nil, err
	}
	r, err := c.reduction()
	if err != nil {
		return nil, err
	}
	return c.apply(graph.OpScatterND, graph.Attrs{Reduction: r}, x, idx, upd)
}

// indexConst is a constant I64 index vector.
func (c *ctx) indexConst(idx []int64) *graph.Node {
	t, _ := tensor.FromI64(tensor.Shape{len(idx)}, idx)
	return c.g.Constant(t)
}

// mapCompress: with the condition known at import, Compress is a Gather
// of the positions where it holds (over the flattened input when there
// is no axis). A condition computed at run time would give the output a
// data-dependent length, which kiln's static shapes cannot hold.
func mapCompress(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	cond, ok := c.known(1)
	if !ok {
		return nil, unsupportedf("condition (input 1) is computed at run time: Compress's output length would depend on its values, and kiln's shapes are static (give the condition as an initializer or with WithInputValue)")
	}
	if cond.DType != tensor.Bool || cond.Shape.Rank() != 1 {
		return nil, fmt.Errorf("condition must be a 1-D bool tensor, got %v", cond)
	}
	ax := 0
	if _, has := c.attrs["axis"]; has {
		a, err := c.attrInt("axis", 0)
		if err != nil {
			return nil, err
		}
		if ax, err = axis(int(a), x.Shape.Rank()); err != nil {
			return nil, err
		}
	} else {
		x = c.g.Reshape(x, x.Shape.NumElements())
	}
	if cond.NumElements() > x.Shape[ax] {
		return nil, fmt.Errorf("condition has %d entries for an axis of size %d", cond.NumElements(), x.Shape[ax])
	}
	var idx []int64
	for i, b := range cond.Bool() {
		if b {
			idx = append(idx, int64(i))
		}
	}
	return c.g.Gather(x, c.indexConst(idx), ax), nil
}

// mapReverseSequence: batch and time are axes 0 and 1 (in either order).
// With the sequence lengths known at import, the input viewed as
// [dim0*dim1, rest...] is reversed by one Gather of whole rows with
// constant indices; with lengths computed at run time, the source
// positions are computed in the graph and one GatherND picks the rows,
// so a length past the time axis is GatherND's run-time index error.
func mapReverseSequence(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	ba, err := c.attrInt("batch_axis", 1)
	if err != nil {
		return nil, err
	}
	ta, err := c.attrInt("time_axis", 0)
	if err != nil {
		return nil, err
	}
	if !(ba == 0 && ta == 1 || ba == 1 && ta == 0) {
		return nil, fmt.Errorf("batch_axis %d and time_axis %d must be 0 and 1 in some order", ba, ta)
	}
	if x.Shape.Rank() < 2 {
		return nil, fmt.Errorf("input %v must have rank 2 or more", x.Shape)
	}
	B, T := x.Shape[ba], x.Shape[ta]
	if _, ok := c.known(1); !ok {
		return c.reverseRunTime(x, int(ba), B, T)
	}
	lens, err := c.ints(1, "sequence_lens")
	if err != nil {
		return nil, err
	}
	if len(lens) != B {
		return nil, fmt.Errorf("sequence_lens has %d entries for a batch of %d", len(lens), B)
	}
	idx := make([]int64, B*T)
	for b, l := range lens {
		if l < 0 || l > T {
			return nil, fmt.Errorf("sequence_lens[%d] = %d is outside [0, %d]", b, l, T)
		}
		for t := range T {
			src := t
			if t < l {
				src = l - 1 - t
			}
			if ba == 0 {
				idx[b*T+t] = int64(b*T + src)
			} else {
				idx[t*B+b] = int64(src*B + b)
			}
		}
	}
	rows := append(tensor.Shape{B * T}, x.Shape[2:]...)
	y := c.g.Gather(c.g.Reshape(x, rows...), c.indexConst(idx), 0)
	return c.g.Reshape(y, x.Shape...), nil
}

// reverseRunTime builds ReverseSequence over run-time lengths L: the
// source time of (b, t) is L[b]-1-t where t < L[b], else t, and GatherND
// takes those rows (batch first: one batch dim and the time index; time
// first: (time, batch) pairs).
func (c *ctx) reverseRunTime(x *graph.Node, ba, B, T int) (*graph.Node, error) {
	lens, err := c.need(1)
	if err != nil {
		return nil, err
	}
	if lens.DType != tensor.I64 || !lens.Shape.Equal(tensor.Shape{B}) {
		return nil, fmt.Errorf("sequence_lens must be int64 [%d], got %v%v", B, lens.DType, lens.Shape)
	}
	steps := make([]int64, T)
	for t := range steps {
		steps[t] = int64(t)
	}
	tShape, lAxis := tensor.Shape{1, T}, 1 // batch first: [B, T]
	if ba == 1 {
		tShape, lAxis = tensor.Shape{T, 1}, 0 // time first: [T, B]
	}
	t := i64Const(c, tShape, steps)
	l := c.g.Unsqueeze(lens, lAxis)
	one := i64Const(c, tensor.Shape{}, []int64{1})
	var ops []*graph.Node
	for _, step := range []struct {
		op   graph.Op
		args []*graph.Node
	}{{graph.OpLess, []*graph.Node{t, l}}, {graph.OpSub, []*graph.Node{l, one}}} {
		n, err := c.apply(step.op, graph.Attrs{}, step.args...)
		if err != nil {
			return nil, err
		}
		ops = append(ops, n)
	}
	rev, err := c.apply(graph.OpSub, graph.Attrs{}, ops[1], t)
	if err != nil {
		return nil, err
	}
	src, err := c.apply(graph.OpWhere, graph.Attrs{}, ops[0], rev, t)
	if err != nil {
		return nil, err
	}
	if ba == 0 {
		return c.apply(graph.OpGatherND, graph.Attrs{BatchDims: 1}, x, c.g.Unsqueeze(src, 2))
	}
	batch := make([]int64, T*B)
	for i := range batch {
		batch[i] = int64(i % B)
	}
	pairs := c.g.Concat(2, c.g.Unsqueeze(src, 2), i64Const(c, tensor.Shape{T, B, 1}, batch))
	return c.apply(graph.OpGatherND, graph.Attrs{}, x, pairs)
}

// blockInput reads DepthToSpace's and SpaceToDepth's input (NCHW) and
// blocksize.
func (c *ctx) blockInput() (*graph.Node, int, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, 0, err
	}
	if x.Shape.Rank() != 4 {
		return nil, 0, fmt.Errorf("input %v must be 4-D (NCHW)", x.Shape)
	}
	if _, ok := c.attrs["blocksize"]; !ok {
		return nil, 0, fmt.Errorf("missing blocksize")
	}
	b, err := c.attrInt("blocksize", 0)
	if err != nil {
		return nil, 0, err
	}
	if b < 1 || b > 1<<16 {
		return nil, 0, fmt.Errorf("blocksize %d must be positive", b)
	}
	return x, int(b), nil
}

// mapDepthToSpace is a reshape, one transpose and a reshape (the
// reshapes are views, so the transpose is the only copy, as a dedicated
// kernel's would be). DCR takes the block offsets from the channel's
// high part, CRD from its low part.
func mapDepthToSpace(c *ctx) (*graph.Node, error) {
	x, b, err := c.blockInput()
	if err != nil {
		return nil, err
	}
	mode, err := c.attrString("mode", "DCR")
	if err != nil {
		return nil, err
	}
	n, ch, h, w := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	if ch%(b*b) != 0 {
		return nil, fmt.Errorf("channels %d are not a multiple of blocksize² %d", ch, b*b)
	}
	var y *graph.Node
	switch mode {
	case "DCR":
		y = c.g.Transpose(c.g.Reshape(x, n, b, b, ch/(b*b), h, w), 0, 3, 4, 1, 5, 2)
	case "CRD":
		y = c.g.Transpose(c.g.Reshape(x, n, ch/(b*b), b, b, h, w), 0, 1, 4, 2, 5, 3)
	default:
		return nil, unsupportedf("mode=%q (ONNX defines DCR and CRD)", mode)
	}
	return c.g.Reshape(y, n, ch/(b*b), h*b, w*b), nil
}

// mapSpaceToDepth is DepthToSpace's DCR inverse, also as views around
// one transpose.
func mapSpaceToDepth(c *ctx) (*graph.Node, error) {
	x, b, err := c.blockInput()
	if err != nil {
		return nil, err
	}
	n, ch, h, w := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	if h%b != 0 || w%b != 0 {
		return nil, fmt.Errorf("height %d and width %d must be multiples of blocksize %d", h, w, b)
	}
	y := c.g.Transpose(c.g.Reshape(x, n, ch, h/b, b, w/b, b), 0, 3, 5, 1, 2, 4)
	return c.g.Reshape(y, n, ch*b*b, h/b, w/b), nil
}
