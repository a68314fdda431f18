package metal

import (
	"fmt"

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
		return emit(msl.ConcatOf, msl.EmitConcat, name, n)
	case graph.OpGather:
		return emit(msl.GatherOf, msl.EmitGather, name, n)
	case graph.OpPad:
		return emit(msl.PadOf, msl.EmitPad, name, n)
	case graph.OpMatMul, graph.OpFusedMatMul, graph.OpGemm:
		gm, err := msl.GemmOf(name, n)
		if err != nil {
			return nil, nil, err
		}
		gm.SimdGroup = o.SimdGroup
		k, err := msl.EmitGemm(gm)
		return k, n.Inputs, err
	case graph.OpFusedElementwise:
		return emit(msl.FusedOf, msl.EmitElementwise, name, n)
	case graph.OpConv2D, graph.OpFusedConv2D:
		return emit(msl.ConvOf, msl.EmitConv, name, n)
	case graph.OpCumSum:
		return emit(msl.CumSumOf, msl.EmitCumSum, name, n)
	case graph.OpArgMax, graph.OpArgMin:
		return emit(msl.ArgOf, msl.EmitArg, name, n)
	case graph.OpBatchNorm:
		return emit(msl.BatchNormOf, msl.EmitBatchNorm, name, n)
	case graph.OpMaxPool2D, graph.OpAvgPool2D:
		return emit(msl.PoolOf, msl.EmitPool, name, n)
	case graph.OpGlobalAvgPool:
		return emit(msl.GlobalPoolOf, msl.EmitReduce, name, n)
	case graph.OpRoPE:
		return emit(msl.RoPEOf, msl.EmitRoPE, name, n)
	case graph.OpAttention:
		return emit(msl.AttentionOf, msl.EmitAttention, name, n)
	}
	return nil, nil, fmt.Errorf("no Metal kernel for %v yet (the CPU backend has one)", n.Op)
}

// emit describes a node and writes its kernel, which reads every input
// in order.
func emit[D any](describe func(string, *graph.Node) (*D, error), write func(*D) (*msl.Kernel, error), name string, n *graph.Node) (*msl.Kernel, []*graph.Node, error) {
	d, err := describe(name, n)
	if err != nil {
		return nil, nil, err
	}
	k, err := write(d)
	return k, n.Inputs, err
}
