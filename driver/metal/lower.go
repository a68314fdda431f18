package metal

import (
	"fmt"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/msl"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// Location is a place in a program's memory: a plan region (the arena or
// the weights) and a byte offset into it.
type Location struct {
	Region plan.Region
	Offset int
}

// Step is one dispatch of a lowered program: Kernel with its buffer
// arguments, in [[buffer(i)]] order.
type Step struct {
	Node   *graph.Node
	Kernel *msl.Kernel
	Args   []Location
}

// LowerOptions choose kernel variants.
type LowerOptions struct {
	SimdGroup bool // simdgroup_matrix GEMM (Apple7+ GPUs)
}

// Lower is the device-independent half of the backend's Lower: the MSL
// library and the dispatches, in order, for a fused and planned graph. It
// needs no Metal, so it runs (and is tested) on every OS.
func Lower(g *graph.Graph, p *plan.Plan, o LowerOptions) (library string, steps []Step, err error) {
	if len(p.Slots) != len(g.Nodes) {
		return "", nil, fmt.Errorf("metal: plan has %d slots for %d nodes", len(p.Slots), len(g.Nodes))
	}
	if err := p.Check(); err != nil {
		return "", nil, fmt.Errorf("metal: %w", err)
	}
	at := func(n *graph.Node) Location { s := p.Slots[n.ID]; return Location{s.Region, s.Offset} }
	var ks []*msl.Kernel
	for _, n := range p.Order {
		if n.Op.IsSource() || n.Shape.NumElements() == 0 {
			continue
		}
		name := fmt.Sprintf("k%d_%s", len(ks), n.Op)
		var k *msl.Kernel
		var ins []*graph.Node
		if n.Op.IsView() {
			s, ps := p.Slots[n.ID], p.Slots[n.Inputs[0].ID]
			if s.Alias == n.Inputs[0] && s.Region == ps.Region && s.Offset == ps.Offset {
				continue // shares its parent's bytes
			}
			k, err = msl.EmitCopy(&msl.Copy{Name: name, DType: tensor.U8, Shape: []int{s.Bytes}, Strides: []int{1}})
			ins = n.Inputs[:1]
		} else {
			k, ins, err = emitNode(name, n, o)
		}
		if err != nil {
			return "", nil, fmt.Errorf("metal: lowering %s: %w", n, err)
		}
		args := []Location{at(n)}
		for _, in := range ins {
			args = append(args, at(in))
		}
		if len(args) != len(k.Buffers) {
			return "", nil, fmt.Errorf("metal: lowering %s: kernel has %d buffers for %d values", n, len(k.Buffers), len(args))
		}
		ks = append(ks, k)
		steps = append(steps, Step{Node: n, Kernel: k, Args: args})
	}
	return msl.Library(ks...), steps, nil
}

// emitNode writes the kernel of one node and names the nodes its input
// buffers read, in order (after out).
func emitNode(name string, n *graph.Node, o LowerOptions) (*msl.Kernel, []*graph.Node, error) {
	a := n.Attrs
	switch {
	case n.Op.IsElementwise():
		e, err := msl.FromNode(name, n)
		if err != nil {
			return nil, nil, err
		}
		k, err := msl.EmitElementwise(e)
		return k, n.Inputs, err
	case n.Op.IsReduce():
		k, err := msl.EmitReduce(&msl.Reduce{Name: name, Op: n.Op, DType: n.DType, Shape: n.Inputs[0].Shape, Axes: a.Axes})
		return k, n.Inputs, err
	}
	x := n.Inputs[0]
	switch n.Op {
	case graph.OpSoftmax, graph.OpLogSoftmax:
		k, err := msl.EmitSoftmax(&msl.Softmax{Name: name, DType: n.DType, Shape: n.Shape, Axis: a.Axis, Log: n.Op == graph.OpLogSoftmax})
		return k, n.Inputs, err
	case graph.OpLayerNorm, graph.OpRMSNorm, graph.OpAddLayerNorm, graph.OpAddRMSNorm:
		res := n.Op == graph.OpAddLayerNorm || n.Op == graph.OpAddRMSNorm
		first := 1
		if res {
			first = 2
		}
		l := x.Shape[a.Axis:].NumElements()
		for _, in := range n.Inputs[first:] {
			if in.Shape.NumElements() != l || in.DType != n.DType {
				return nil, nil, fmt.Errorf("scale/bias %s must have the %d elements and dtype of the normalised dims", in, l)
			}
		}
		nm := &msl.Norm{Name: name, DType: n.DType, Shape: x.Shape, Axis: a.Axis, Eps: a.Eps,
			RMS: n.Op == graph.OpRMSNorm || n.Op == graph.OpAddRMSNorm, Scale: len(n.Inputs) > first, Bias: len(n.Inputs) > first+1}
		if res {
			if n.Inputs[1].DType != n.DType {
				return nil, nil, fmt.Errorf("residual %s must be %v", n.Inputs[1], n.DType)
			}
			nm.Residual, nm.ResStrides = true, tensor.BroadcastStrides(n.Inputs[1].Shape, x.Shape)
		}
		k, err := msl.EmitNorm(nm)
		return k, n.Inputs, err
	case graph.OpTranspose, graph.OpSlice, graph.OpSplit, graph.OpExpand, graph.OpTile:
		c, err := msl.CopyOf(name, n)
		if err != nil {
			return nil, nil, err
		}
		k, err := msl.EmitCopy(c)
		return k, n.Inputs[:1], err
	case graph.OpConcat:
		sizes := make([]int, len(n.Inputs))
		for i, in := range n.Inputs {
			sizes[i] = in.Shape[a.Axis]
		}
		k, err := msl.EmitConcat(&msl.Concat{Name: name, DType: n.DType, Shape: n.Shape, Axis: a.Axis, Sizes: sizes})
		return k, n.Inputs, err
	case graph.OpGather:
		s := x.Shape
		k, err := msl.EmitGather(&msl.Gather{Name: name, DType: n.DType, Outer: s[:a.Axis].NumElements(), D: s[a.Axis],
			N: n.Inputs[1].Shape.NumElements(), Inner: s[a.Axis+1:].NumElements(), Index: n.Inputs[1].DType})
		return k, n.Inputs, err
	case graph.OpPad:
		r := x.Shape.Rank()
		if len(a.Pads) != 2*r {
			return nil, nil, fmt.Errorf("pads %v for rank %d", a.Pads, r)
		}
		k, err := msl.EmitPad(&msl.Pad{Name: name, DType: n.DType, In: x.Shape, Begins: a.Pads[:r], Mode: a.Mode, Value: a.Value, Out: n.Shape})
		return k, n.Inputs, err
	case graph.OpMatMul, graph.OpFusedMatMul, graph.OpGemm:
		var gm *msl.Gemm
		var err error
		if n.Op == graph.OpGemm {
			gm, err = gemmGemm(name, n)
		} else {
			gm, err = matMulGemm(name, n)
		}
		if err != nil {
			return nil, nil, err
		}
		gm.SimdGroup = o.SimdGroup
		k, err := msl.EmitGemm(gm)
		return k, n.Inputs, err
	case graph.OpFusedElementwise:
		e, err := fusedElementwise(name, n)
		if err != nil {
			return nil, nil, err
		}
		k, err := msl.EmitElementwise(e)
		return k, n.Inputs, err
	case graph.OpConv2D, graph.OpFusedConv2D:
		c, err := msl.ConvOf(name, n)
		if err != nil {
			return nil, nil, err
		}
		k, err := msl.EmitConv(c)
		return k, n.Inputs, err
	case graph.OpAttention:
		at, err := attention(name, n)
		if err != nil {
			return nil, nil, err
		}
		k, err := msl.EmitAttention(at)
		return k, n.Inputs, err
	}
	return nil, nil, fmt.Errorf("no Metal kernel for %v yet (the CPU backend has one)", n.Op)
}

// batchStrides are an operand's element strides over the output's batch
// dims (right-aligned numpy broadcasting; 0 where it broadcasts).
func batchStrides(own tensor.Shape, batch []int) []int {
	full := own.Strides()
	st := make([]int, len(batch))
	off := len(batch) - len(own)
	for d := range own {
		if bd := off + d; bd >= 0 && own[d] != 1 {
			st[bd] = full[d]
		}
	}
	return st
}

// matMulGemm describes numpy matmul, or FusedMatMul (operands optionally
// transposed on their last two dims, then the epilogue): 1-D operands
// are promoted (and their dim dropped from the result), batch dims
// broadcast.
func matMulGemm(name string, n *graph.Node) (*msl.Gemm, error) {
	a, b := n.Inputs[0].Shape, n.Inputs[1].Shape
	at := n.Attrs
	fused := n.Op == graph.OpFusedMatMul
	g := &msl.Gemm{Name: name, A: n.Inputs[0].DType, B: n.Inputs[1].DType, Out: n.DType, Alpha: 1}
	var aBatch, bBatch tensor.Shape
	kept := 0
	switch {
	case len(a) == 1:
		g.M, g.K, g.ASm, g.ASk = 1, a[0], 0, 1
	case fused && at.TransA: // stored [..., K, M]
		g.M, g.K, g.ASm, g.ASk = a[len(a)-1], a[len(a)-2], 1, a[len(a)-1]
	default:
		g.M, g.K, g.ASm, g.ASk = a[len(a)-2], a[len(a)-1], a[len(a)-1], 1
	}
	if len(a) > 1 {
		aBatch = a[:len(a)-2]
		kept++
	}
	kb := 0
	switch {
	case len(b) == 1:
		kb, g.N, g.BSk, g.BSn = b[0], 1, 1, 0
	case fused && at.TransB: // stored [..., N, K]
		kb, g.N, g.BSk, g.BSn = b[len(b)-1], b[len(b)-2], 1, b[len(b)-1]
	default:
		kb, g.N, g.BSk, g.BSn = b[len(b)-2], b[len(b)-1], b[len(b)-1], 1
	}
	if len(b) > 1 {
		bBatch = b[:len(b)-2]
		kept++
	}
	if kb != g.K {
		return nil, fmt.Errorf("inner dims %d and %d", g.K, kb)
	}
	if len(n.Shape) < kept {
		return nil, fmt.Errorf("result %v too small", n.Shape)
	}
	g.Batch = slices.Clone(n.Shape[:len(n.Shape)-kept])
	// The operands' batch strides are over their own batch dims only.
	sa, sb := batchStrides(aBatch, g.Batch), batchStrides(bBatch, g.Batch)
	for d := range g.Batch {
		sa[d] *= g.M * g.K
		sb[d] *= g.K * g.N
	}
	g.ABatch, g.BBatch = sa, sb
	if got := tensor.Shape(append(slices.Clone(g.Batch), g.M, g.N)).NumElements(); got != n.Shape.NumElements() {
		return nil, fmt.Errorf("result %v does not hold %v batches of %d×%d", n.Shape, g.Batch, g.M, g.N)
	}
	if fused {
		e, extra := at.Epilogue, n.Inputs[2:]
		if len(extra) != e.Inputs() {
			return nil, fmt.Errorf("epilogue %+v with %d extra inputs", e, len(extra))
		}
		if e.Bias { // along the last axis: [N] or [1, ..., 1, N]
			bias := extra[0]
			if bias.Shape.NumElements() != g.N {
				return nil, fmt.Errorf("bias %v for %d columns", bias.Shape, g.N)
			}
			g.HasC, g.CType, g.Beta, g.CSn, g.CBatch = true, bias.DType, 1, 1, make([]int, len(g.Batch))
		}
		g.Act = e.Act
		if e.Residual {
			r := extra[len(extra)-1]
			g.HasRes, g.ResType = true, r.DType
		}
	}
	return g, nil
}

// fusedElementwise turns a FusedElementwise node's program into an msl
// chain: node inputs are values 0..k-1, instruction j is value k+j.
func fusedElementwise(name string, n *graph.Node) (*msl.Elementwise, error) {
	e := &msl.Elementwise{Name: name, Shape: n.Shape, Out: n.DType}
	for _, in := range n.Inputs {
		if s, err := tensor.Broadcast(in.Shape, n.Shape); err != nil || !s.Equal(n.Shape) {
			return nil, fmt.Errorf("input %s does not broadcast to %v", in, n.Shape)
		}
		e.Inputs = append(e.Inputs, msl.Operand{DType: in.DType, Strides: tensor.BroadcastStrides(in.Shape, n.Shape)})
	}
	k := len(n.Inputs)
	for _, in := range n.Attrs.Program {
		args := make([]int, len(in.Args))
		for i, r := range in.Args {
			args[i] = r.Index
			if r.Instr {
				args[i] += k
			}
		}
		dt := in.DType
		if in.Op == graph.OpCast {
			dt = in.To
		}
		e.Body = append(e.Body, msl.Instr{Op: in.Op, Args: args, DType: dt, Attrs: in.Attrs()})
	}
	return e, nil
}

// gemmGemm describes the 2-D Gemm op: alpha·op(A)·op(B) + beta·C.
func gemmGemm(name string, n *graph.Node) (*msl.Gemm, error) {
	a, b := n.Inputs[0].Shape, n.Inputs[1].Shape
	at := n.Attrs
	if len(a) != 2 || len(b) != 2 {
		return nil, fmt.Errorf("Gemm operands %v, %v must be 2-D", a, b)
	}
	g := &msl.Gemm{Name: name, A: n.Inputs[0].DType, B: n.Inputs[1].DType, Out: n.DType, Alpha: at.Alpha}
	if at.TransA {
		g.M, g.K, g.ASm, g.ASk = a[1], a[0], 1, a[1]
	} else {
		g.M, g.K, g.ASm, g.ASk = a[0], a[1], a[1], 1
	}
	kb := b[0]
	if at.TransB {
		g.N, kb, g.BSk, g.BSn = b[0], b[1], 1, b[1]
	} else {
		g.N, g.BSk, g.BSn = b[1], b[1], 1
	}
	if kb != g.K {
		return nil, fmt.Errorf("inner dims %d and %d", g.K, kb)
	}
	if len(n.Inputs) > 2 {
		c := n.Inputs[2]
		st := tensor.BroadcastStrides(c.Shape, tensor.Shape{g.M, g.N})
		g.HasC, g.CType, g.Beta, g.CSm, g.CSn = true, c.DType, at.Beta, st[0], st[1]
	}
	return g, nil
}

// attention maps the Attention op onto the row-at-a-time kernel.
func attention(name string, n *graph.Node) (*msl.Attention, error) {
	q, k, v := n.Inputs[0].Shape, n.Inputs[1].Shape, n.Inputs[2].Shape
	if q.Rank() != 4 || k.Rank() != 4 || v.Rank() != 4 {
		return nil, fmt.Errorf("q %v, k %v, v %v must be 4-D", q, k, v)
	}
	at := &msl.Attention{Name: name, DType: n.DType, B: q[0], H: q[1], HK: k[1], SQ: q[2], SK: k[2], D: q[3], DV: v[3],
		Scale: n.Attrs.Scale, Causal: n.Attrs.Causal}
	if len(n.Inputs) > 3 {
		m := n.Inputs[3]
		switch m.DType {
		case tensor.Bool:
			at.Mask = msl.MaskBool
		case n.DType:
			at.Mask = msl.MaskAdd
		default:
			return nil, fmt.Errorf("mask dtype %v", m.DType)
		}
		at.MaskStrides = tensor.BroadcastStrides(m.Shape, tensor.Shape{at.B, at.H, at.SQ, at.SK})
	}
	return at, nil
}
