package cuda

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ptx"
)

// emitModelOp lowers the ops emitNode's core switch leaves out: the
// convolution, pooling and batch-norm ops of CNNs, RoPE, ArgMax/ArgMin
// and CumSum. Every kernel reads the node's inputs in order.
func emitModelOp(name string, n *graph.Node) (*ptx.Kernel, []*graph.Node, error) {
	var k *ptx.Kernel
	var err error
	switch n.Op {
	case graph.OpConv2D, graph.OpFusedConv2D:
		var c *ptx.Conv
		if c, err = ptx.ConvOf(name, n); err == nil {
			k, err = ptx.EmitConv(c)
		}
	case graph.OpMaxPool2D, graph.OpAvgPool2D:
		var p *ptx.Pool
		if p, err = ptx.PoolOf(name, n); err == nil {
			k, err = ptx.EmitPool(p)
		}
	case graph.OpGlobalAvgPool:
		var r *ptx.Reduce
		if r, err = ptx.GlobalAvgPoolOf(name, n); err == nil {
			k, err = ptx.EmitReduce(r)
		}
	case graph.OpBatchNorm:
		var b *ptx.BatchNorm
		if b, err = ptx.BatchNormOf(name, n); err == nil {
			k, err = ptx.EmitBatchNorm(b)
		}
	case graph.OpRoPE:
		var r *ptx.RoPE
		if r, err = ptx.RoPEOf(name, n); err == nil {
			k, err = ptx.EmitRoPE(r)
		}
	case graph.OpArgMax, graph.OpArgMin:
		var a *ptx.Arg
		if a, err = ptx.ArgOf(name, n); err == nil {
			k, err = ptx.EmitArg(a)
		}
	case graph.OpCumSum:
		var c *ptx.CumSum
		if c, err = ptx.CumSumOf(name, n); err == nil {
			k, err = ptx.EmitCumSum(c)
		}
	default:
		return nil, nil, fmt.Errorf("no CUDA kernel for %v yet (the CPU backend has one)", n.Op)
	}
	return k, n.Inputs, err
}
