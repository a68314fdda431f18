package ops

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// The fast F32 MatMul and Gemm kernels run on asm.Gemm (packed panels,
// an AVX2+FMA micro-kernel or its pure-Go twin, a GEMV path for one-row
// products), over the executor's worker pool. A B operand that is a
// param or constant is packed once and packed again only when the
// weights version moves.

func init() {
	RegisterFast(graph.OpMatMul, func(n *graph.Node, env Env) (Kernel, string, error) {
		return prepareMatMulFast(n, env, asm.BestGemm())
	})
	RegisterFast(graph.OpGemm, func(n *graph.Node, env Env) (Kernel, string, error) {
		return prepareGemmFast(n, env, asm.BestGemm())
	})
}

// packedWeight is a B operand packed for one kernel, with the weights
// version and the buffer it was packed from: in float32 for the plan's
// variant, or in bf16 when bf is set and the weight was given as BF16.
type packedWeight struct {
	pb      asm.PackedB
	version *atomic.Uint64 // nil: the weights never change
	have    bool
	at      uint64
	src     *float32
	bf      *bf16Weight // nil: float32 only
	inBF16  bool        // the current packing is bf's
	cols    int         // pack only the first cols columns of op(B) (0: the plan's N)
}

// newPackedWeight makes the packed form of weight node b for plan g,
// able to hold it in bf16 when the CPU and the knob allow and b reads a
// param (through views) whose source dtype env can tell.
func newPackedWeight(b *graph.Node, g *asm.Gemm, env Env) *packedWeight {
	key := packedKey{b, g.Config(), g.Variant()}
	if w, ok := env.Shared[key].(*packedWeight); ok {
		return w
	}
	w := &packedWeight{version: env.WeightsVersion}
	if env.Shared != nil {
		env.Shared[key] = w
	}
	if p := weightParam(b); p != nil && env.ParamSource != nil && bf16WeightsOn() {
		if v := asm.BestGemmBF16(); v != nil {
			w.bf = &bf16Weight{param: p, source: env.ParamSource, v: v, cfg: g.Config(), par: asm.Par{For: env.For, Threads: env.Threads}}
		}
	}
	return w
}

// packedKey identifies a packed weight a program's products share: the
// weight node and the plan (shape, strides, transposes and variant fix
// the packing). The packing follows the node's buffer, which is the same
// for every product reading the node.
type packedKey struct {
	b   *graph.Node
	cfg asm.GemmConfig
	v   *asm.GemmVariant
}

// weightParam is the param n reads, through any views, or nil.
func weightParam(n *graph.Node) *graph.Node {
	for n.Op.IsView() {
		n = n.Inputs[0]
	}
	if n.Op == graph.OpParam {
		return n
	}
	return nil
}

// bf16Weight holds a weight given as BF16 in bf16 (asm.GemmBF16), the
// plan made on first use.
type bf16Weight struct {
	param  *graph.Node
	source func(*graph.Node) tensor.DType
	v      *asm.GemmBF16Variant
	cfg    asm.GemmConfig
	par    asm.Par
	g      *asm.GemmBF16
	pb     asm.PackedBF16
	args   asm.GemmBF16Args
}

// wanted reports whether the param's current value was given as BF16.
func (bw *bf16Weight) wanted() bool { return bw.source(bw.param) == tensor.BF16 }

// pack packs b in bf16, preparing the plan first if needed.
func (bw *bf16Weight) pack(b []float32) error {
	if bw.g == nil {
		g, err := asm.NewGemmBF16(bw.cfg, bw.v, bw.par)
		if err != nil {
			return err
		}
		bw.g = g
	}
	return bw.g.PackB(&bw.pb, b)
}

// run computes the product of args (A, C, Epilogue) with the bf16 B.
func (bw *bf16Weight) run(args *asm.GemmArgs) error {
	bw.args = asm.GemmBF16Args{A: args.A, C: args.C, B: &bw.pb, Epilogue: args.Epilogue}
	err := bw.g.Run(&bw.args)
	bw.args = asm.GemmBF16Args{} // keep no reference to the arena
	return err
}

// run binds B (b, or its packed copy when w is non-nil) and runs the
// product: on g, or in bf16 where w holds the weight so.
func (w *packedWeight) run(g *asm.Gemm, args *asm.GemmArgs, b []float32) error {
	if w == nil {
		args.B, args.PackedB = b, nil
		return g.Run(args)
	}
	if err := w.get(g, b); err != nil {
		return err
	}
	if w.inBF16 {
		args.B, args.PackedB = nil, nil
		return w.bf.run(args)
	}
	args.B, args.PackedB = nil, &w.pb
	err := g.Run(args)
	args.PackedB = nil
	return err
}

// get packs b if it never was, the weights version moved, or b is
// another buffer than last time: in bf16 when the weight was given so,
// else for g. Only the current packing keeps its buffer.
func (w *packedWeight) get(g *asm.Gemm, b []float32) error {
	var v uint64
	if w.version != nil {
		v = w.version.Load() // read before packing: a write during it repacks next run
	}
	src := unsafe.SliceData(b)
	if w.have && v == w.at && src == w.src {
		return nil
	}
	w.have = false
	if w.bf != nil && w.bf.wanted() {
		if err := w.bf.pack(b); err != nil {
			return err
		}
		w.pb, w.inBF16 = asm.PackedB{}, true
	} else {
		if err := g.PackBDims(&w.pb, b, 0, w.cols); err != nil {
			return err
		}
		w.inBF16 = false
		if w.bf != nil {
			w.bf.pb = asm.PackedBF16{}
		}
	}
	w.have, w.at, w.src = true, v, src
	return nil
}

// checkTensors verifies the count, dtype and size of a kernel's tensors
// against the node before any of them is read.
func checkTensors(n *graph.Node, ins []tensor.Tensor, out tensor.Tensor) error {
	if len(ins) != len(n.Inputs) {
		return fmt.Errorf("%d inputs, want %d", len(ins), len(n.Inputs))
	}
	for i, in := range n.Inputs {
		if ins[i].DType != in.DType || len(ins[i].Data) != in.Shape.NumElements()*in.DType.Size() {
			return fmt.Errorf("input %d is %v with %d bytes, want %v%v", i, ins[i].DType, len(ins[i].Data), in.DType, in.Shape)
		}
	}
	if out.DType != n.DType || len(out.Data) != n.Shape.NumElements()*n.DType.Size() {
		return fmt.Errorf("result is %v with %d bytes, want %v%v", out.DType, len(out.Data), n.DType, n.Shape)
	}
	return nil
}

// prepareMatMulFast handles F32 MatMul with any batch broadcast. When
// every batch entry uses the same B (B has no batch dims, or only 1s), the
// batch folds into the rows of one product; otherwise the batch runs as
// independent products at per-entry offsets.
func prepareMatMulFast(n *graph.Node, env Env, v *asm.GemmVariant) (Kernel, string, error) {
	if n.DType != tensor.F32 || len(n.Inputs) != 2 || n.Inputs[0].DType != tensor.F32 || n.Inputs[1].DType != tensor.F32 {
		return nil, "", nil
	}
	as, bs := n.Inputs[0].Shape, n.Inputs[1].Shape
	batch, m, k, nn, out, err := graph.MatMulDims(as, bs)
	if err != nil {
		return nil, "", err
	}
	if !out.Equal(n.Shape) {
		return nil, "", fmt.Errorf("result shape %v, want %v", n.Shape, out)
	}
	nb := batch.NumElements()
	empty := out.NumElements() == 0 // nothing to write (K = 0 is not empty: C is zeros)
	offA := batchOffsets(as[:max(as.Rank()-2, 0)], batch, m*k)
	offB := batchOffsets(bs[:max(bs.Rank()-2, 0)], batch, k*nn)
	// One B shared by the batch, and A's products back to back (not
	// broadcast): the batch is one product of nb·m rows.
	oneB := !empty
	for e, o := range offB {
		oneB = oneB && o == 0 && offA[e] == e*m*k
	}
	cfg := asm.GemmConfig{M: m, N: nn, K: k, Alpha: 1}
	var args asm.GemmArgs
	if oneB {
		// One B: A's batch is contiguous rows of one product, C's too.
		cfg.M, nb = nb*m, 1
	} else {
		args.Batch, args.OffA, args.OffB = nb, offA, offB
		args.OffC = make([]int, nb)
		for e := range args.OffC {
			args.OffC[e] = e * m * nn
		}
	}
	g, err := asm.NewGemm(cfg, v, asm.Par{For: env.For, Threads: env.Threads})
	if err != nil {
		return nil, "", err
	}
	var w *packedWeight
	if oneB && FromWeights(n.Inputs[1]) {
		w = newPackedWeight(n.Inputs[1], g, env)
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := checkTensors(n, ins, out); err != nil {
			return err
		}
		if empty {
			return nil
		}
		args.A, args.C = ins[0].F32(), out.F32()
		err := w.run(g, &args, ins[1].F32())
		args.A, args.B, args.C = nil, nil, nil // keep no reference to the arena
		return err
	}, v.Name, nil
}

// prepareGemmFast handles F32 Gemm: alpha scales the finished sums (as
// ONNX defines it; asm.GemmConfig.Alpha), transposes are resolved by
// packing, and beta·C is the epilogue's residual (broadcast through its
// strides), added as tiles are finished.
func prepareGemmFast(n *graph.Node, env Env, v *asm.GemmVariant) (Kernel, string, error) {
	if n.DType != tensor.F32 || len(n.Inputs) < 2 || len(n.Inputs) > 3 {
		return nil, "", nil
	}
	for _, in := range n.Inputs {
		if in.DType != tensor.F32 {
			return nil, "", nil
		}
	}
	at := n.Attrs
	as, bs := n.Inputs[0].Shape, n.Inputs[1].Shape
	if as.Rank() != 2 || bs.Rank() != 2 || n.Shape.Rank() != 2 {
		return nil, "", fmt.Errorf("operands %v and %v must be 2-D", as, bs)
	}
	m, k := as[0], as[1]
	if at.TransA {
		m, k = k, m
	}
	k2, nn := bs[0], bs[1]
	if at.TransB {
		k2, nn = nn, k2
	}
	if k2 != k || !n.Shape.Equal(tensor.Shape{m, nn}) {
		return nil, "", fmt.Errorf("A %v, B %v (transA=%v transB=%v) do not give %v", as, bs, at.TransA, at.TransB, n.Shape)
	}
	cfg := asm.GemmConfig{M: m, N: nn, K: k, TransA: at.TransA, TransB: at.TransB, Alpha: at.Alpha}
	g, err := asm.NewGemm(cfg, v, asm.Par{For: env.For, Threads: env.Threads})
	if err != nil {
		return nil, "", err
	}
	var ep *asm.Epilogue
	if len(n.Inputs) == 3 {
		cs := n.Inputs[2].Shape
		if s, err := tensor.Broadcast(cs, n.Shape); err != nil || !s.Equal(n.Shape) {
			return nil, "", fmt.Errorf("C %v does not broadcast to %v", cs, n.Shape)
		}
		st := tensor.BroadcastStrides(cs, n.Shape)
		ep = &asm.Epilogue{ResRowStride: st[0], ResColStride: st[1], ResScale: at.Beta}
	}
	args := asm.GemmArgs{Epilogue: ep}
	var w *packedWeight
	if FromWeights(n.Inputs[1]) {
		w = newPackedWeight(n.Inputs[1], g, env)
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if err := checkTensors(n, ins, out); err != nil {
			return err
		}
		args.A, args.C = ins[0].F32(), out.F32()
		if ep != nil {
			ep.Residual = ins[2].F32()
		}
		err := w.run(g, &args, ins[1].F32())
		args.A, args.B, args.C = nil, nil, nil
		if ep != nil {
			ep.Residual = nil
		}
		return err
	}, v.Name, nil
}
