package cuda

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// ref locates a value in device memory: a plan region and byte offset.
type ref struct {
	region plan.Region
	offset int
}

// stepPlan is one step of a lowered program before any device exists:
// a kernel launch (kernel non-nil) with its pointer arguments, or a
// device-to-device copy of bytes (a view the planner did not alias).
type stepPlan struct {
	node   *graph.Node
	kernel *ptx.Kernel
	ptrs   []ref // the kernel's parameters, all device pointers, in order
	copyTo ref   // for copies
	copyFr ref
	bytes  int
	custom *customStep // a user's kernel (custom.go); nil for kiln's own
}

// lowered is a program's device-independent part: the steps and the PTX
// module holding every kernel.
type lowered struct {
	steps  []stepPlan
	module string
}

// lowerGraph picks and emits a kernel for every node in schedule order.
func lowerGraph(g *graph.Graph, p *plan.Plan) (*lowered, error) {
	if len(p.Slots) != len(g.Nodes) {
		return nil, fmt.Errorf("cuda: plan has %d slots for %d nodes", len(p.Slots), len(g.Nodes))
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	at := func(n *graph.Node) ref { s := p.Slots[n.ID]; return ref{s.Region, s.Offset} }
	lw := &lowered{}
	var ks []*ptx.Kernel
	for _, n := range p.Order {
		if n.Op.IsSource() {
			continue
		}
		if n.Op.IsView() {
			s, ps := p.Slots[n.ID], p.Slots[n.Inputs[0].ID]
			if s.Alias == n.Inputs[0] && s.Region == ps.Region && s.Offset == ps.Offset {
				continue // shares its parent's bytes
			}
			lw.steps = append(lw.steps, stepPlan{node: n, copyTo: at(n), copyFr: at(n.Inputs[0]), bytes: s.Bytes})
			continue
		}
		if n.Shape.NumElements() == 0 {
			continue // nothing to compute
		}
		if n.Op == graph.OpCustom { // the user's kernel, in its own module
			st, err := lowerCustom(n, at)
			if err != nil {
				return nil, err
			}
			lw.steps = append(lw.steps, st)
			continue
		}
		name := fmt.Sprintf("k%d_%s", len(ks), n.Op)
		k, ins, err := emitNode(name, n)
		if err != nil {
			return nil, fmt.Errorf("cuda: lowering %s: %w", n, err)
		}
		ptrs := []ref{at(n)}
		for _, in := range ins {
			ptrs = append(ptrs, at(in))
		}
		if len(ptrs) != len(k.Params) {
			return nil, fmt.Errorf("cuda: lowering %s: kernel has %d parameters for %d pointers", n, len(k.Params), len(ptrs))
		}
		ks = append(ks, k)
		lw.steps = append(lw.steps, stepPlan{node: n, kernel: k, ptrs: ptrs})
	}
	lw.module = ptx.Module(ks...)
	return lw, nil
}

// emitNode writes the kernel of one node and names the nodes whose values
// its input pointers read, in parameter order (after out).
func emitNode(name string, n *graph.Node) (*ptx.Kernel, []*graph.Node, error) {
	a := n.Attrs
	switch {
	case n.Op.IsElementwise():
		e, ext, err := ptx.FromNodes(name, []*graph.Node{n})
		if err != nil {
			return nil, nil, err
		}
		k, err := ptx.EmitElementwise(e)
		return k, ext, err
	case n.Op.IsReduce():
		k, err := ptx.EmitReduce(&ptx.Reduce{Name: name, Op: n.Op, DType: n.DType, Shape: n.Inputs[0].Shape, Axes: a.Axes})
		return k, n.Inputs, err
	}
	x := n.Inputs[0]
	switch n.Op {
	case graph.OpSoftmax, graph.OpLogSoftmax:
		k, err := ptx.EmitSoftmax(&ptx.Softmax{Name: name, DType: n.DType, Shape: n.Shape, Axis: a.Axis, Log: n.Op == graph.OpLogSoftmax})
		return k, n.Inputs, err
	case graph.OpLayerNorm, graph.OpRMSNorm:
		l := x.Shape[a.Axis:].NumElements()
		for _, in := range n.Inputs[1:] {
			if in.Shape.NumElements() != l || in.DType != n.DType {
				return nil, nil, fmt.Errorf("scale/bias %s must have the %d elements and dtype of the normalised dims", in, l)
			}
		}
		k, err := ptx.EmitNorm(&ptx.Norm{Name: name, DType: n.DType, Shape: x.Shape, Axis: a.Axis, Eps: a.Eps,
			RMS: n.Op == graph.OpRMSNorm, Scale: len(n.Inputs) > 1, Bias: len(n.Inputs) > 2})
		return k, n.Inputs, err
	case graph.OpTranspose, graph.OpSlice, graph.OpSplit, graph.OpExpand, graph.OpTile:
		c, err := ptx.CopyOf(name, n)
		if err != nil {
			return nil, nil, err
		}
		k, err := ptx.EmitCopy(c)
		return k, n.Inputs[:1], err
	case graph.OpConcat:
		c, err := ptx.ConcatOf(name, n)
		if err != nil {
			return nil, nil, err
		}
		k, err := ptx.EmitConcat(c)
		return k, n.Inputs, err
	case graph.OpGather:
		gd, err := ptx.GatherOf(name, n)
		if err != nil {
			return nil, nil, err
		}
		k, err := ptx.EmitGather(gd)
		return k, n.Inputs, err
	case graph.OpPad:
		pd, err := ptx.PadOf(name, n)
		if err != nil {
			return nil, nil, err
		}
		k, err := ptx.EmitPad(pd)
		return k, n.Inputs, err
	case graph.OpMatMul, graph.OpFusedMatMul, graph.OpGemm:
		gm, err := ptx.GemmOf(name, n)
		if err != nil {
			return nil, nil, err
		}
		if ptx.UseMMA(gm) { // F16/BF16 pairs: the tensor-core kernel
			k, err := ptx.EmitGemmMMA(gm, ptx.MmaTile{})
			return k, n.Inputs, err
		}
		k, err := ptx.EmitGemm(gm)
		return k, n.Inputs, err
	case graph.OpFusedElementwise:
		e, err := ptx.FusedOf(name, n)
		if err != nil {
			return nil, nil, err
		}
		k, err := ptx.EmitElementwise(e)
		return k, n.Inputs, err
	case graph.OpAddLayerNorm, graph.OpAddRMSNorm:
		l := x.Shape[a.Axis:].NumElements()
		for _, in := range n.Inputs[2:] {
			if in.Shape.NumElements() != l || in.DType != n.DType {
				return nil, nil, fmt.Errorf("scale/bias %s must have the %d elements and dtype of the normalised dims", in, l)
			}
		}
		if n.Inputs[1].DType != n.DType {
			return nil, nil, fmt.Errorf("residual %s must be %v", n.Inputs[1], n.DType)
		}
		k, err := ptx.EmitNorm(&ptx.Norm{Name: name, DType: n.DType, Shape: x.Shape, Axis: a.Axis, Eps: a.Eps,
			RMS: n.Op == graph.OpAddRMSNorm, Scale: len(n.Inputs) > 2, Bias: len(n.Inputs) > 3,
			Residual: true, ResStrides: tensor.BroadcastStrides(n.Inputs[1].Shape, x.Shape)})
		return k, n.Inputs, err
	case graph.OpAttention:
		at, err := ptx.AttentionOf(name, n)
		if err != nil {
			return nil, nil, err
		}
		k, err := ptx.EmitAttention(at)
		return k, n.Inputs, err
	}
	return emitModelOp(name, n) // conv, pooling, BatchNorm, RoPE, ArgMax/ArgMin, CumSum (lower_cnn.go)
}
