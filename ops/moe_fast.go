package ops

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// MoE's fast F32 kernel computes only the routed work. Per run:
//
//  1. a counting sort of the T·k slots by expert id gives each expert a
//     contiguous block of rows (tokens in order within it);
//  2. the slots' token rows are gathered into that order;
//  3. per expert with rows, two products on asm.Gemm with the expert's
//     gate and up weights, packed once per weights version: silu as the
//     gate product's epilogue, while its tiles are in cache;
//  4. one pass multiplies gate by up (the SwiGLU hidden rows);
//  5. per expert, the down product;
//  6. each token sums its k rows scaled by its routing weights, slot
//     order, as MoECombine does (Mul, then ReduceSum over the slots).
//
// Step 6 is the scatter-add of the experts' rows back to their tokens
// written as a gather per token: a token's rows are found through the
// sort's positions, so tokens split across workers without two of them
// writing one row. The products run one expert at a time, each split
// across the workers by asm.Gemm (by rows and columns of that expert's
// product): when the routing is skewed and one expert takes most tokens,
// both cores still share its product, which handing whole experts to
// workers would leave to one. Cost is the routed rows' products, k/E of
// the dense layer's, plus the sort, the gather and the combine (each
// linear in T·k·H).
//
// Scratch is sized at prepare for the worst case, all T·k rows on one
// expert, so a run allocates nothing.

func init() {
	RegisterFast(graph.OpMoE, prepareMoEFast)
}

// moeFast is a prepared OpMoE kernel.
type moeFast struct {
	n            *graph.Node
	d            moeDims
	h, f         int
	gu, dn       *asm.Gemm       // gate and up: [rows, F] = [rows, H]·[H, F]; down: [rows, H] = [rows, F]·[F, H]
	gate, up, dw []*packedWeight // per expert; nil entries when the weights are run-time values
	silu         asm.Epilogue    // the gate product's epilogue
	args         asm.GemmArgs
	ew           *asm.EwKernels

	count []int // count[e]: where expert e's rows start (count[E]: all rows)
	next  []int // the next free row of each expert while placing
	pos   []int // slot j's row in the sorted order
	src   []int // sorted row r's token
	xs    []float32
	gs    []float32 // gate rows, then the hidden rows
	us    []float32 // up rows
	ys    []float32 // the down product's rows (xs's memory: xs is dead by then)

	gather, mul, combine *asm.Chunks
	// the run's tensors, bound for the chunk bodies
	x, wts, out []float32
}

func prepareMoEFast(n *graph.Node, env Env) (Kernel, string, error) {
	if n.DType != tensor.F32 {
		return nil, "", nil
	}
	d := moeDimsOf(n.Inputs[1], n.Inputs[3])
	h, f := n.Inputs[3].Shape[1], n.Inputs[3].Shape[2]
	rows := d.t * d.k
	if rows == 0 || h == 0 || f == 0 || d.e == 0 {
		return nil, "", nil // the reference writes the zeros
	}
	par := asmPar(env)
	m := &moeFast{n: n, d: d, h: h, f: f, ew: asm.BestEw()}
	var err error
	if m.gu, err = asm.NewGemm(asm.GemmConfig{M: rows, N: f, K: h, Alpha: 1}, nil, par); err != nil {
		return nil, "", err
	}
	if m.dn, err = asm.NewGemm(asm.GemmConfig{M: rows, N: h, K: f, Alpha: 1}, nil, par); err != nil {
		return nil, "", err
	}
	m.gate, m.up, m.dw = m.packed(n.Inputs[3], env), m.packed(n.Inputs[4], env), m.packed(n.Inputs[5], env)
	m.silu.ActFunc = func(seg []float32) { _ = m.ew.Unary(asm.EwSilu, seg, seg) }
	m.count, m.next, m.pos, m.src = make([]int, d.e+1), make([]int, d.e), make([]int, rows), make([]int, rows)
	m.xs, m.gs, m.us = make([]float32, rows*h), make([]float32, rows*f), make([]float32, rows*f)
	m.ys = m.xs
	m.gather = asm.NewChunks(par, rows, rowGrain(h), m.gatherRows)
	m.mul = asm.NewChunks(par, rows, rowGrain(f), m.mulRows)
	m.combine = asm.NewChunks(par, d.t, rowGrain(h*d.k), m.combineTokens)
	return sizeChecked(n, m.run), m.gu.Variant().Name, nil
}

// packed makes one packedWeight per expert of a stacked weight, or nils
// when w is computed at run time (then each run reads it unpacked).
func (m *moeFast) packed(w *graph.Node, env Env) []*packedWeight {
	ws := make([]*packedWeight, m.d.e)
	if FromWeights(w) {
		for e := range ws {
			ws[e] = &packedWeight{version: env.WeightsVersion}
		}
	}
	return ws
}

func (m *moeFast) run(ins []tensor.Tensor, out tensor.Tensor) error {
	if err := m.route(indicesOf(ins[1].DType, ins[1].Data)); err != nil {
		return err
	}
	m.x, m.wts, m.out = ins[0].F32(), ins[2].F32(), out.F32()
	defer func() { m.x, m.wts, m.out = nil, nil, nil }() // keep no reference to the arena
	m.gather.Do()
	gate, up, down := ins[3].F32(), ins[4].F32(), ins[5].F32()
	hf := m.h * m.f
	for e := range m.d.e {
		lo, hi := m.count[e], m.count[e+1]
		if lo == hi {
			continue
		}
		if err := m.product(m.gu, m.gate[e], gate[e*hf:(e+1)*hf], m.xs[lo*m.h:hi*m.h], m.gs[lo*m.f:hi*m.f], hi-lo, &m.silu); err != nil {
			return err
		}
		if err := m.product(m.gu, m.up[e], up[e*hf:(e+1)*hf], m.xs[lo*m.h:hi*m.h], m.us[lo*m.f:hi*m.f], hi-lo, nil); err != nil {
			return err
		}
	}
	m.mul.Do()
	for e := range m.d.e {
		lo, hi := m.count[e], m.count[e+1]
		if lo == hi {
			continue
		}
		if err := m.product(m.dn, m.dw[e], down[e*hf:(e+1)*hf], m.gs[lo*m.f:hi*m.f], m.ys[lo*m.h:hi*m.h], hi-lo, nil); err != nil {
			return err
		}
	}
	m.combine.Do()
	return nil
}

// route sorts the slots by expert (counting sort, stable): count[e] is
// where expert e's rows start, pos[j] slot j's row, src[r] row r's token.
func (m *moeFast) route(ids indices) error {
	d := m.d
	clear(m.count)
	for j := range d.t * d.k {
		e, err := expertOf(m.n.Op, ids, j, d.k, d.e)
		if err != nil {
			return err
		}
		m.count[e+1]++
	}
	for e := 1; e <= d.e; e++ {
		m.count[e] += m.count[e-1]
	}
	copy(m.next, m.count[:d.e])
	for j := range d.t * d.k {
		e := ids.at(j) // checked above
		r := m.next[e]
		m.next[e]++
		m.pos[j], m.src[r] = r, j/d.k
	}
	return nil
}

// product runs one expert's product over rows of A into C.
func (m *moeFast) product(g *asm.Gemm, w *packedWeight, b, a, c []float32, rows int, ep *asm.Epilogue) error {
	m.args = asm.GemmArgs{A: a, C: c, M: rows, Epilogue: ep}
	err := w.run(g, &m.args, b)
	m.args = asm.GemmArgs{}
	return err
}

func (m *moeFast) gatherRows(_, lo, hi int) {
	h := m.h
	for r := lo; r < hi; r++ {
		t := m.src[r]
		copy(m.xs[r*h:(r+1)*h], m.x[t*h:(t+1)*h])
	}
}

func (m *moeFast) mulRows(_, lo, hi int) {
	_ = m.ew.Binary(asm.EwMul, m.gs[lo*m.f:hi*m.f], m.gs[lo*m.f:hi*m.f], m.us[lo*m.f:hi*m.f])
}

// combineTokens writes tokens [lo, hi): the first slot's row times its
// weight, then each further row scaled in place and added, in slot order.
func (m *moeFast) combineTokens(_, lo, hi int) {
	h, k := m.h, m.d.k
	for t := lo; t < hi; t++ {
		o := m.out[t*h : (t+1)*h]
		for s := range k {
			j := t*k + s
			r := m.pos[j]
			y := m.ys[r*h : (r+1)*h]
			if s == 0 {
				_ = m.ew.BinaryScalar(asm.EwMul, o, y, m.wts[j])
				continue
			}
			_ = m.ew.BinaryScalar(asm.EwMul, y, y, m.wts[j])
			_ = m.ew.Binary(asm.EwAdd, o, o, y)
		}
	}
}
