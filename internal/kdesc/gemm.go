package kdesc

import (
	"fmt"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Gemm describes out[b] = Alpha·A[b]·B[b] (+ Beta·C[b]), then Act, then
// + Res, with every operand addressed through element strides, which
// covers transposed operands, numpy-broadcast batches and a broadcast
// bias. out is contiguous [Batch..., M, N]. msl uses it as is; ptx
// embeds it in its own Gemm, which adds the tile.
type Gemm struct {
	Name    string
	A, B    tensor.DType
	Out     tensor.DType
	M, N, K int
	Batch   []int // batch dims of out
	// A(m, k) is a[Σ batch·ABatch + m·ASm + k·ASk]; likewise B(k, n).
	ASm, ASk, BSk, BSn int
	ABatch, BBatch     []int
	Alpha              float32
	// C, when HasC: Beta·C(m, n) added, C of dtype CType at
	// Σ batch·CBatch + m·CSm + n·CSn.
	HasC     bool
	CType    tensor.DType
	Beta     float32
	CSm, CSn int
	CBatch   []int
	// Act (graph.OpInvalid for none) is applied after C; then, when
	// HasRes, the residual (ResType, laid out like out) is added.
	Act     graph.Op
	HasRes  bool
	ResType tensor.DType
	// SimdGroup asks Metal for the simdgroup_matrix kernel (Apple7+
	// GPUs); a choice of variant, not of result, so other backends
	// ignore it.
	SimdGroup bool
}

// GemmOf describes a MatMul, FusedMatMul or Gemm node. Its operands are
// the node's inputs in order: a, b, then c / bias, then the residual.
func GemmOf(name string, n *graph.Node) (*Gemm, error) {
	switch n.Op {
	case graph.OpMatMul, graph.OpFusedMatMul:
		return matMul(name, n)
	case graph.OpGemm:
		return gemmOp(name, n)
	}
	return nil, fmt.Errorf("%v is not a GEMM", n.Op)
}

// matMul describes numpy matmul, or FusedMatMul (operands optionally
// transposed on their last two dims, then the epilogue): 1-D operands
// are promoted (and their dim dropped from the result), batch dims
// broadcast.
func matMul(name string, n *graph.Node) (*Gemm, error) {
	if len(n.Inputs) < 2 {
		return nil, fmt.Errorf("%s has %d inputs", n, len(n.Inputs))
	}
	a, b := n.Inputs[0].Shape, n.Inputs[1].Shape
	at := n.Attrs
	fused := n.Op == graph.OpFusedMatMul
	g := &Gemm{Name: name, A: n.Inputs[0].DType, B: n.Inputs[1].DType, Out: n.DType, Alpha: 1}
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

// gemmOp describes the 2-D Gemm op: alpha·op(A)·op(B) + beta·C.
func gemmOp(name string, n *graph.Node) (*Gemm, error) {
	if len(n.Inputs) < 2 {
		return nil, fmt.Errorf("%s has %d inputs", n, len(n.Inputs))
	}
	a, b := n.Inputs[0].Shape, n.Inputs[1].Shape
	at := n.Attrs
	if len(a) != 2 || len(b) != 2 {
		return nil, fmt.Errorf("Gemm operands %v, %v must be 2-D", a, b)
	}
	g := &Gemm{Name: name, A: n.Inputs[0].DType, B: n.Inputs[1].DType, Out: n.DType, Alpha: at.Alpha}
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
