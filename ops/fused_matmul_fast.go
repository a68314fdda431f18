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
	act, ok := epilogueAct(p.ep.Act)
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
	if nb == 0 || p.m == 0 || p.n == 0 {
		// An empty result (a batch dim of 0, say): nothing to compute, and
		// one unbatched product would ask A for an M×K it does not have
		// (cmd/fuzz seed 4605).
		return sizeChecked(nd, func([]tensor.Tensor, tensor.Tensor) error { return nil }), "empty", nil
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
	var rows *epilogueRows
	if p.bias >= 0 || p.residual >= 0 || act != asm.ActNone {
		if epilogueInTiles {
			ep = &asm.Epilogue{Act: act, ResRowStride: p.n, ResColStride: 1, ResBatchStride: p.m * p.n, ResScale: 1}
			if op, ok := epilogueEw(p.ep.Act); ok {
				ew := asm.BestEw()
				ep.ActFunc = func(seg []float32) { _ = ew.Unary(op, seg, seg) } // lengths agree: no error
			}
		} else {
			rows = newEpilogueRows(p, env)
		}
	}
	var w *packedWeight // B packed once per weights version (in bf16 where it was given so)
	if nb == 1 && FromWeights(nd.Inputs[1]) {
		w = newPackedWeight(nd.Inputs[1], g, env)
	}
	k := func(ins []tensor.Tensor, out tensor.Tensor) error {
		args.A, args.C = ins[0].F32(), out.F32()
		if ep != nil {
			if p.bias >= 0 {
				ep.Bias = ins[p.bias].F32()
			}
			if p.residual >= 0 {
				ep.Residual = ins[p.residual].F32()
			}
			args.Epilogue = ep
		}
		err := w.run(g, args, ins[1].F32())
		args.A, args.B, args.C, args.PackedB = nil, nil, nil, nil // keep no arena references
		if ep != nil {
			ep.Bias, ep.Residual = nil, nil
		}
		if err == nil && rows != nil {
			rows.run(ins, out)
		}
		return err
	}
	return sizeChecked(nd, k), "asm-" + g.Variant().Name, nil
}

// epilogueInTiles selects where FusedMatMul applies its epilogue: inside
// the GEMM on each finished micro-tile (asm.Epilogue), or in a vectorised
// pass over rows of C right after the product. Measured on the MiniLM
// encoder (ops/asm as of this writing), the per-tile form costs about 12
// ms per run in per-segment calls and slows the micro-kernel by about a
// fifth through cache traffic, while the row pass over a C that is still
// in L2 costs a few milliseconds; so rows, until the asm epilogue runs on
// whole cache blocks.
var epilogueInTiles = false

// epilogueRows applies bias, activation and residual to rows of C with
// the vectorised elementwise kernels (+ exactly as Add; activations within
// a few ulp), rows split over the workers.
type epilogueRows struct {
	n         int // row length
	rows      int
	bias, res int // input index, or -1
	act       asm.EwUnary
	hasAct    bool
	ew        *asm.EwKernels
	env       Env
	body      func(lo, hi int)
	c, b, r   []float32
	grain     int
}

func newEpilogueRows(p *fusedMatMulPlan, env Env) *epilogueRows {
	e := &epilogueRows{n: p.n, rows: len(p.aOff) * p.m, bias: p.bias, res: p.residual, ew: asm.BestEw(), env: env}
	e.act, e.hasAct = epilogueEw(p.ep.Act)
	e.grain = max(1, (1<<14)/max(p.n, 1))
	e.body = e.apply
	return e
}

func (e *epilogueRows) run(ins []tensor.Tensor, out tensor.Tensor) {
	if e.n == 0 || e.rows == 0 {
		return
	}
	e.c = out.F32()
	if e.bias >= 0 {
		e.b = ins[e.bias].F32()
	}
	if e.res >= 0 {
		e.r = ins[e.res].F32()
	}
	e.env.For(e.rows, e.grain, e.body)
	e.c, e.b, e.r = nil, nil, nil
}

// apply runs the epilogue on rows [lo, hi); every slice has the length
// the kernels expect, so they cannot fail.
func (e *epilogueRows) apply(lo, hi int) {
	if e.b == nil { // no broadcast: the whole range at once
		c := e.c[lo*e.n : hi*e.n]
		if e.hasAct {
			_ = e.ew.Unary(e.act, c, c)
		}
		if e.r != nil {
			_ = e.ew.Binary(asm.EwAdd, c, c, e.r[lo*e.n:hi*e.n])
		}
		return
	}
	for i := lo; i < hi; i++ {
		row := e.c[i*e.n : (i+1)*e.n]
		_ = e.ew.Binary(asm.EwAdd, row, row, e.b)
		if e.hasAct {
			_ = e.ew.Unary(e.act, row, row)
		}
		if e.r != nil {
			_ = e.ew.Binary(asm.EwAdd, row, row, e.r[i*e.n:(i+1)*e.n])
		}
	}
}
