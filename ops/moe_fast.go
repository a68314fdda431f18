package ops

import (
	"sync/atomic"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// MoE's fast F32 kernel computes only the routed work. Per run:
//
//  1. a counting sort of the T·k slots by expert id gives each expert a
//     contiguous block of rows (tokens in order within it);
//  2. the slots' token rows are gathered into that order;
//  3. the experts' gate and up products, cut into work items of at most
//     moeRowBlock rows × moeColBlock columns of one expert, run on
//     asm.Gemm with the expert's weights packed once per weights version
//     (per column block); an item ends with its block of the SwiGLU
//     hidden rows, silu(gate) ⊙ up, while it is in cache;
//  4. the down products, cut the same way;
//  5. each token sums its k rows scaled by its routing weights, in slot
//     order, as MoECombine does (Mul, then ReduceSum over the slots).
//
// The items of steps 3 and 4 are handed to the worker pool through a
// shared counter: each worker takes the next item when it is done with
// one, with a serial GEMM plan of its own, so both cores stay busy
// whatever the routing, a skewed one that piles most tokens on one
// expert included (that expert is many items). Step 5 is the experts'
// scatter-add back to their tokens written as a gather per token: a
// token's rows are found through the sort's positions, so tokens split
// across workers without two of them writing one row. Cost is the routed
// rows' products, k/E of the dense layer's, plus the sort, the gather and
// the combine (each linear in T·k·H).
//
// Scratch is sized at prepare for the worst case, all T·k rows on one
// expert, so a run allocates nothing.

func init() {
	RegisterFast(graph.OpMoE, prepareMoEFast)
}

// moeRowBlock and moeColBlock bound a work item: enough rows and
// columns for the GEMM's panels to pay (a 12×32 micro-kernel), few enough
// that a layer of 8 experts over 128 tokens makes dozens of items for the
// workers to balance.
const moeRowBlock, moeColBlock = 96, 256

// moeItem is one block of one expert's product: rows [lo, hi) of the
// sorted order, columns [c0, c0+n), of expert e.
type moeItem struct{ e, lo, hi, c0, n int }

// moeWorker is one worker's serial plans.
type moeWorker struct {
	gu, dn *asm.Gemm // gate and up: [rows, F] = [rows, H]·[H, F]; down: [rows, H] = [rows, F]·[F, H]
	args   asm.GemmArgs
	err    error     // the phase's first failure on this worker
	_      [128]byte // written during runs: kept out of the next worker's cache lines (asm's workerPad)
}

// moeFast is a prepared OpMoE kernel.
type moeFast struct {
	n    *graph.Node
	d    moeDims
	h, f int
	par  asm.Par
	ew   *asm.EwKernels
	// packed weights per expert and column block; nil entries when the
	// weights are run-time values
	gate, up, dw [][]*packedWeight
	workers      []moeWorker

	count []int // count[e]: where expert e's rows start (count[E]: all rows)
	next  []int // the next free row of each expert while placing
	pos   []int // slot j's row in the sorted order
	src   []int // sorted row r's token
	xs    []float32
	gs    []float32 // gate rows, then the hidden rows
	us    []float32 // up rows
	ys    []float32 // the down product's rows (xs's memory: xs is dead by then)

	// resident, when set, names the experts whose slots this kernel
	// leaves out (a device computes them: MoEHost); nil leaves none out.
	resident []bool

	items    []moeItem    // the current phase's work
	taken    atomic.Int64 // items handed out
	down     bool         // the phase runs the down products
	itemBody func(lo, hi int)

	gather, combine *asm.Chunks
	// the run's tensors, bound for the workers
	x, wts, out, gw, uw, dww []float32
}

func prepareMoEFast(n *graph.Node, env Env) (Kernel, string, error) {
	m, err := newMoEFast(n, env)
	if m == nil || err != nil {
		return nil, "", err
	}
	return sizeChecked(n, m.run), m.workers[0].gu.Variant().Name, nil
}

// newMoEFast prepares the routed kernel of an F32 OpMoE node, or nil
// (and no error) for one it does not take.
func newMoEFast(n *graph.Node, env Env) (*moeFast, error) {
	if n.DType != tensor.F32 {
		return nil, nil
	}
	d := moeDimsOf(n.Inputs[1], n.Inputs[3])
	h, f := n.Inputs[3].Shape[1], n.Inputs[3].Shape[2]
	rows := d.t * d.k
	if rows == 0 || h == 0 || f == 0 || d.e == 0 {
		return nil, nil // the reference writes the zeros
	}
	par := asmPar(env)
	m := &moeFast{n: n, d: d, h: h, f: f, par: par, ew: asm.BestEw()}
	mr := min(rows, moeRowBlock)
	m.workers = make([]moeWorker, max(par.Threads, 1))
	for i := range m.workers {
		w := &m.workers[i]
		var err error
		if w.gu, err = asm.NewGemm(asm.GemmConfig{M: mr, N: min(f, moeColBlock), K: h, LDB: f, LDC: f, Alpha: 1}, nil, asm.Par{}); err != nil {
			return nil, err
		}
		if w.dn, err = asm.NewGemm(asm.GemmConfig{M: mr, N: min(h, moeColBlock), K: f, LDB: h, LDC: h, Alpha: 1}, nil, asm.Par{}); err != nil {
			return nil, err
		}
	}
	m.gate, m.up, m.dw = m.packed(n.Inputs[3], f, env), m.packed(n.Inputs[4], f, env), m.packed(n.Inputs[5], h, env)
	m.count, m.next, m.pos, m.src = make([]int, d.e+1), make([]int, d.e), make([]int, rows), make([]int, rows)
	m.xs, m.gs, m.us = make([]float32, rows*h), make([]float32, rows*f), make([]float32, rows*f)
	m.ys = m.xs
	// At most one partial row block per expert beyond the full ones.
	rowBlocks := rows/moeRowBlock + d.e
	m.items = make([]moeItem, 0, rowBlocks*(max(f, h)+moeColBlock-1)/moeColBlock)
	m.itemBody = m.runItems
	m.gather = asm.NewChunks(par, rows, rowGrain(h), m.gatherRows)
	m.combine = asm.NewChunks(par, d.t, rowGrain(h*d.k), m.combineTokens)
	return m, nil
}

// packed makes one packedWeight per expert and column block of a stacked
// weight whose matrices have cols columns, or nils when w is computed at
// run time (then each run reads it unpacked).
func (m *moeFast) packed(w *graph.Node, cols int, env Env) [][]*packedWeight {
	ws := make([][]*packedWeight, m.d.e)
	for e := range ws {
		ws[e] = make([]*packedWeight, (cols+moeColBlock-1)/moeColBlock)
		if FromWeights(w) {
			for b := range ws[e] {
				ws[e][b] = &packedWeight{version: env.WeightsVersion, cols: min(moeColBlock, cols-b*moeColBlock)}
			}
		}
	}
	return ws
}

func (m *moeFast) run(ins []tensor.Tensor, out tensor.Tensor) error {
	if err := m.route(indicesOf(ins[1].DType, ins[1].Data)); err != nil {
		return err
	}
	m.x, m.wts, m.out = ins[0].F32(), ins[2].F32(), out.F32()
	m.gw, m.uw, m.dww = ins[3].F32(), ins[4].F32(), ins[5].F32()
	defer func() { m.x, m.wts, m.out, m.gw, m.uw, m.dww = nil, nil, nil, nil, nil, nil }() // keep no reference to the arena
	m.gather.Do()
	if err := m.phase(false, m.f); err != nil {
		return err
	}
	if err := m.phase(true, m.h); err != nil {
		return err
	}
	m.combine.Do()
	return nil
}

// phase runs the gate-and-up (down false) or the down products of every
// expert with rows, as items of at most moeRowBlock rows and moeColBlock
// of the product's cols columns, over the workers.
func (m *moeFast) phase(down bool, cols int) error {
	m.items = m.items[:0]
	for e := range m.d.e {
		for lo := m.count[e]; lo < m.count[e+1]; lo += moeRowBlock {
			hi := min(lo+moeRowBlock, m.count[e+1])
			for c0 := 0; c0 < cols; c0 += moeColBlock {
				m.items = append(m.items, moeItem{e: e, lo: lo, hi: hi, c0: c0, n: min(moeColBlock, cols-c0)})
			}
		}
	}
	m.down = down
	m.taken.Store(0)
	if len(m.workers) == 1 || len(m.items) == 1 {
		m.runItems(0, 1)
	} else {
		m.par.For(min(len(m.workers), len(m.items)), 1, m.itemBody)
	}
	var err error
	for i := range m.workers {
		w := &m.workers[i]
		if err == nil {
			err = w.err
		}
		w.err = nil
	}
	return err
}

// runItems is worker lo's loop: take the next item until none is left.
func (m *moeFast) runItems(lo, _ int) {
	w := &m.workers[lo]
	for {
		i := int(m.taken.Add(1) - 1)
		if i >= len(m.items) {
			return
		}
		if w.err = m.item(w, m.items[i]); w.err != nil {
			m.taken.Store(int64(len(m.items))) // the others stop too
			return
		}
	}
}

// item computes one block: for gate and up, both products of the block's
// columns and then silu(gate) ⊙ up over them; for down, the block of the
// down product.
func (m *moeFast) item(w *moeWorker, it moeItem) error {
	h, f, rows, b := m.h, m.f, it.hi-it.lo, it.c0/moeColBlock
	if m.down {
		return m.product(w, w.dn, m.dw[it.e][b], m.dww[it.e*f*h+it.c0:(it.e+1)*f*h], m.gs[it.lo*f:it.hi*f], m.ys[it.lo*h+it.c0:it.hi*h], rows, it.n)
	}
	a := m.xs[it.lo*h : it.hi*h]
	if err := m.product(w, w.gu, m.gate[it.e][b], m.gw[it.e*h*f+it.c0:(it.e+1)*h*f], a, m.gs[it.lo*f+it.c0:it.hi*f], rows, it.n); err != nil {
		return err
	}
	if err := m.product(w, w.gu, m.up[it.e][b], m.uw[it.e*h*f+it.c0:(it.e+1)*h*f], a, m.us[it.lo*f+it.c0:it.hi*f], rows, it.n); err != nil {
		return err
	}
	for r := it.lo; r < it.hi; r++ {
		g, u := m.gs[r*f+it.c0:r*f+it.c0+it.n], m.us[r*f+it.c0:r*f+it.c0+it.n]
		_ = m.ew.Unary(asm.EwSilu, g, g)
		_ = m.ew.Binary(asm.EwMul, g, g, u)
	}
	return nil
}

// product runs rows × n of one expert's product: A's rows, B from the
// block's first column (its row stride the plan's LDB), C from the
// block's first column (stride LDC).
func (m *moeFast) product(w *moeWorker, g *asm.Gemm, pw *packedWeight, b, a, c []float32, rows, n int) error {
	w.args = asm.GemmArgs{A: a, C: c, M: rows, N: n}
	err := pw.run(g, &w.args, b)
	w.args = asm.GemmArgs{}
	return err
}

// route sorts the slots by expert (counting sort, stable): count[e] is
// where expert e's rows start, pos[j] slot j's row (-1 for a slot of a
// resident expert, which this kernel leaves out), src[r] row r's token.
func (m *moeFast) route(ids indices) error {
	d := m.d
	clear(m.count)
	for j := range d.t * d.k {
		e, err := expertOf(m.n.Op, ids, j, d.k, d.e)
		if err != nil {
			return err
		}
		if m.resident != nil && m.resident[e] {
			continue
		}
		m.count[e+1]++
	}
	for e := 1; e <= d.e; e++ {
		m.count[e] += m.count[e-1]
	}
	copy(m.next, m.count[:d.e])
	for j := range d.t * d.k {
		e := ids.at(j) // checked above
		if m.resident != nil && m.resident[e] {
			m.pos[j] = -1 // no row: the device's slot
			continue
		}
		r := m.next[e]
		m.next[e]++
		m.pos[j], m.src[r] = r, j/d.k
	}
	return nil
}

func (m *moeFast) gatherRows(_, lo, hi int) {
	h := m.h
	for r := lo; r < hi; r++ {
		t := m.src[r]
		copy(m.xs[r*h:(r+1)*h], m.x[t*h:(t+1)*h])
	}
}

// combineTokens writes tokens [lo, hi): the first slot's row times its
// weight, then each further row scaled in place and added, in slot order
// (slots left out have no row; a token with none gets zeros).
func (m *moeFast) combineTokens(_, lo, hi int) {
	h, k := m.h, m.d.k
	for t := lo; t < hi; t++ {
		o := m.out[t*h : (t+1)*h]
		first := true
		for s := range k {
			j := t*k + s
			r := m.pos[j]
			if r < 0 {
				continue
			}
			y := m.ys[r*h : (r+1)*h]
			if first {
				_ = m.ew.BinaryScalar(asm.EwMul, o, y, m.wts[j])
				first = false
				continue
			}
			_ = m.ew.BinaryScalar(asm.EwMul, y, y, m.wts[j])
			_ = m.ew.Binary(asm.EwAdd, o, o, y)
		}
		if first {
			clear(o)
		}
	}
}
