package ops

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// The fast FusedMatMul runs on ops/asm's GEMM, whose epilogue adds the
// bias, applies the activation and adds the residual to each tile of C
// while it is still in cache. A B operand computed from weights only is
// packed once per weights version.

func init() {
	RegisterFast(graph.OpFusedMatMul, prepareFusedMatMulAsm)
}

// epilogueEw are the vectorised forms of the activations (within a few
// ulp of the reference formulas), applied to each finished row segment.
var epilogueEw = map[graph.Op]asm.EwUnary{
	graph.OpRelu: asm.EwRelu, graph.OpGelu: asm.EwGelu, graph.OpGeluTanh: asm.EwGeluTanh,
	graph.OpSilu: asm.EwSilu, graph.OpSigmoid: asm.EwSigmoid, graph.OpTanh: asm.EwTanh,
}

var epilogueActs = map[graph.Op]asm.Activation{
	graph.OpInvalid: asm.ActNone, graph.OpRelu: asm.ActRelu, graph.OpGelu: asm.ActGelu,
	graph.OpGeluTanh: asm.ActGeluTanh, graph.OpSilu: asm.ActSilu, graph.OpSigmoid: asm.ActSigmoid,
	graph.OpTanh: asm.ActTanh,
}

// FromWeights reports whether n's value depends on params and constants
// only, so it changes only when the weights do.
func FromWeights(n *graph.Node) bool {
	return fromWeights(n, map[*graph.Node]bool{})
}

func fromWeights(n *graph.Node, memo map[*graph.Node]bool) bool {
	if v, ok := memo[n]; ok {
		return v
	}
	v := n.Op == graph.OpParam || n.Op == graph.OpConstant
	if !n.Op.IsSource() {
		v = true
		for _, in := range n.Inputs {
			v = v && fromWeights(in, memo)
		}
	}
	memo[n] = v
	return v
}

func prepareFusedMatMulAsm(nd *graph.Node, env Env) (Kernel, string, error) {
	if nd.DType != tensor.F32 {
		return nil, "", nil
	}
	p, err := matmulGeometry(nd)
	if err != nil {
		return nil, "", nil // the reference kernel reports it
	}
	act, ok := epilogueActs[p.ep.Act]
	if !ok {
		return nil, "", nil
	}
	at := nd.Attrs
	cfg := asm.GemmConfig{M: p.m, N: p.n, K: p.k, TransA: at.TransA, TransB: at.TransB, Alpha: 1}
	nb := len(p.aOff)
	// Products sharing one B over consecutive A matrices are one tall
	// product: better blocking and one packed B.
	tall := nb > 1 && !at.TransA
	for e := range nb {
		tall = tall && p.bOff[e] == 0 && p.aOff[e] == e*p.m*p.k
	}
	if tall {
		cfg.M, nb = nb*p.m, 1
	}
	g, err := asm.NewGemm(cfg, nil, asm.Par{For: env.For, Threads: env.Threads})
	if err != nil {
		return nil, "", nil
	}
	args := &asm.GemmArgs{}
	if nb > 1 {
		args.Batch, args.OffA, args.OffB = nb, p.aOff, p.bOff
		args.OffC = make([]int, nb)
		for e := range args.OffC {
			args.OffC[e] = e * p.m * p.n
		}
	}
	var ep *asm.Epilogue
	if p.bias >= 0 || p.residual >= 0 || act != asm.ActNone {
		ep = &asm.Epilogue{Act: act, ResRowStride: p.n, ResColStride: 1, ResBatchStride: p.m * p.n, ResScale: 1}
		if op, ok := epilogueEw[p.ep.Act]; ok {
			ew := asm.BestEw()
			ep.ActFunc = func(seg []float32) { _ = ew.Unary(op, seg, seg) } // lengths agree: no error
		}
	}
	var packed *asm.PackedB
	if nb == 1 && FromWeights(nd.Inputs[1]) {
		packed = &asm.PackedB{}
	}
	packedOnce := false
	k := func(ins []tensor.Tensor, out tensor.Tensor) error {
		args.A, args.B, args.C = ins[0].F32(), ins[1].F32(), out.F32()
		if packed != nil {
			var v uint64
			if env.WeightsVersion != nil {
				v = env.WeightsVersion.Load()
			}
			if !packedOnce || packed.Version != v {
				if err := g.PackB(packed, args.B); err != nil {
					return err
				}
				packed.Version, packedOnce = v, true
			}
			args.PackedB = packed
		}
		if ep != nil {
			if p.bias >= 0 {
				ep.Bias = ins[p.bias].F32()
			}
			if p.residual >= 0 {
				ep.Residual = ins[p.residual].F32()
			}
			args.Epilogue = ep
		}
		err := g.Run(args)
		args.A, args.B, args.C, args.PackedB = nil, nil, nil, nil // keep no arena references
		if ep != nil {
			ep.Bias, ep.Residual = nil, nil
		}
		return err
	}
	return sizeChecked(nd, k), "asm-" + g.Variant().Name, nil
}
