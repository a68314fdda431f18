package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Routed is a kdesc.Routed with the kernel's block (GroupedMatMul; MoE
// sizes its block from the token width).
type Routed struct {
	kdesc.Routed
	Block int // threads per block (0: 256)
	// Resident > 0 asks for MoE's residency split: the weights hold only
	// Resident experts ([Resident, ...]), and two more parameters follow
	// down: remap ([E] I32: each expert's row in the weights, or -1 for
	// an expert that is not on the device) and addend ([T, H] F32: the
	// non-resident slots' weighted sum, computed on the host). The kernel
	// skips the non-resident slots and adds addend to each token's sum of
	// its resident ones.
	Resident int
}

// moeMaxPerThread bounds the output columns one MoE thread accumulates in
// registers (H ≤ 1024·moeMaxPerThread).
const moeMaxPerThread = 16

// nanBits is the f32 quiet NaN a token gets for an expert id outside
// [0, E).
const nanBits = "0f7FC00000"

// EmitRouted writes a GroupedMatMul or MoE kernel. An expert id outside
// [0, E) reads no weights: the outputs it feeds (its slot's row for
// GroupedMatMul, its token's row for MoE) are NaN, where the CPU kernels
// return an error. Parameters: out, then the node's inputs (GroupedMatMul:
// x, w, ids; MoE: x, ids, weights, gate, up, down).
func EmitRouted(d *Routed) (*Kernel, error) {
	if _, err := kindOf(d.DType); err != nil || d.DType == tensor.F64 {
		return nil, fmt.Errorf("ptx: %s: dtype %v is not supported on the GPU (routed kernels compute in f32)", d.Name, d.DType)
	}
	if d.IDs != tensor.I32 && d.IDs != tensor.I64 {
		return nil, fmt.Errorf("ptx: %s: expert ids of %v, want I32 or I64", d.Name, d.IDs)
	}
	if d.Resident > 0 && (d.Op != graph.OpMoE || d.Resident > d.E) {
		return nil, fmt.Errorf("ptx: %s: a residency split of %d experts needs an MoE of at least as many (%v of %d)", d.Name, d.Resident, d.Op, d.E)
	}
	switch d.Op {
	case graph.OpGroupedMatMul:
		return emitGroupedMatMul(d), nil
	case graph.OpMoE:
		return emitMoE(d)
	}
	return nil, fmt.Errorf("ptx: %s: %v is not a routed op", d.Name, d.Op)
}

// routedIx is the index arithmetic for a routed kernel: 64-bit when any
// tensor's element count can pass 2³⁰.
func routedIx(f *fn, d *Routed) ix {
	big := max(d.T*d.K*max(d.In, d.Out, d.Hidden), d.E*d.In*max(d.Out, d.Hidden), d.E*d.Hidden*d.Out)
	return ix{f: f, wide: big > math.MaxInt32/2}
}

// expertID loads the id of slot s and reports whether it is in [0, E),
// with the id as an index register (meaningful only when in range): the
// unsigned compare takes negative ids as huge ones.
func expertID(x ix, ids, s string, d *Routed) (id, ok string) {
	f := x.f
	ok, id = f.reg(cPred), x.reg()
	if d.IDs == tensor.I64 {
		v := f.load(tensor.I64, x.addr(ids, s, 8))
		f.op("setp.lt.u64 %s, %s, %d", ok, v, d.E)
		if x.wide {
			f.op("mov.u64 %s, %s", id, v)
		} else {
			f.op("cvt.u32.u64 %s, %s", id, v)
		}
		return id, ok
	}
	v := f.load(tensor.I32, x.addr(ids, s, 4))
	f.op("setp.lt.u32 %s, %s, %d", ok, v, d.E)
	if x.wide {
		f.op("cvt.u64.u32 %s, %s", id, v)
	} else {
		f.op("mov.u32 %s, %s", id, v)
	}
	return id, ok
}

// dot accumulates Σ_k a[ai + k]·b[bi + k·bstep] for k < n into acc (f32
// fma in k order); ai and bi are consumed.
func dot(x ix, dt tensor.DType, acc, a, ai, b, bi string, bstep, n int) {
	f, es := x.f, dt.Size()
	f.count(x, n, func(string) {
		f.op("fma.rn.f32 %s, %s, %s, %s", acc, f.load(dt, x.addr(a, ai, es)), f.load(dt, x.addr(b, bi, es)), acc)
		f.op("add.%s %s, %s, 1", x.t(), ai, ai)
		f.op("add.%s %s, %s, %d", x.t(), bi, bi, bstep)
	})
}

// emitGroupedMatMul: one thread per output element (t, j, o), a dot over
// In of the slot's row and column o of its expert's matrix.
func emitGroupedMatMul(d *Routed) *Kernel {
	f := newFn(d.Name)
	out, xp, wp, ids := f.ptrParam("out"), f.ptrParam("x"), f.ptrParam("w"), f.ptrParam("ids")
	x := routedIx(f, d)
	n := d.T * d.K * d.Out
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		s, o := x.divmod(i, d.Out) // s: the slot t·K + j
		id, ok := expertID(x, ids, s, d)
		row := s
		if !d.PerSlot {
			row, _ = x.divmod(s, d.K)
		}
		acc := f.f32(0)
		skip := f.label("skip")
		f.op("@!%s bra %s", ok, skip)
		ai, bi := x.mad(row, d.In, x.imm(0)), x.mad(id, d.In*d.Out, o)
		dot(x, d.DType, acc, xp, ai, wp, bi, d.Out, d.In)
		f.place(skip)
		f.op("selp.f32 %s, %s, %s, %s", acc, acc, nanBits, ok)
		f.store(d.DType, x.addr(out, i, d.DType.Size()), acc)
	})
	return f.kernel(GridStride(n, blockOr(d.Block), maxGridStrideBlocks))
}

// emitMoE: one block per token (grid-stride over tokens). Each thread
// owns the output columns h ≡ tid (mod block), at most moeMaxPerThread,
// in registers. For each slot in order, the block computes the expert's
// hidden activations silu(x·gate)·(x·up) a chunk of `block` columns at a
// time (one per thread, into shared memory), and each thread adds the
// chunk's share of the down product to its columns; the slot's result,
// times its routing weight, then joins the token's sum. Everything a
// thread adds is in a fixed order, so runs are bit-identical.
func emitMoE(d *Routed) (*Kernel, error) {
	h, hid := d.Out, d.Hidden
	block := min(MaxThreads, CeilDiv(h, 32)*32)
	per := CeilDiv(h, block)
	if per > moeMaxPerThread {
		return nil, fmt.Errorf("ptx: %s: token width %d is past the MoE kernel's %d", d.Name, h, MaxThreads*moeMaxPerThread)
	}
	f := newFn(d.Name)
	out, xp, ids, wts := f.ptrParam("out"), f.ptrParam("x"), f.ptrParam("ids"), f.ptrParam("weights")
	gate, up, down := f.ptrParam("gate"), f.ptrParam("up"), f.ptrParam("down")
	var remap, addend string
	if d.Resident > 0 {
		remap, addend = f.ptrParam("remap"), f.ptrParam("addend")
	}
	x := routedIx(f, d)
	es := d.DType.Size()
	sh := f.shared("hid", ".f32", block, 4)
	shBase := f.reg(cB32)
	f.op("mov.u32 %s, %s", shBase, sh)
	tid32, cta32, ncta32 := f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("mov.u32 %s, %%tid.x", tid32)
	f.op("mov.u32 %s, %%ctaid.x", cta32)
	f.op("mov.u32 %s, %%nctaid.x", ncta32)
	widen := func(r string) string {
		if !x.wide {
			return r
		}
		w := f.reg(cB64)
		f.op("cvt.u64.u32 %s, %s", w, r)
		return w
	}
	tid, t, nt := widen(tid32), widen(cta32), widen(ncta32)
	mine := f.reg(cB32) // this thread's shared slot's address
	f.op("mad.lo.u32 %s, %s, 4, %s", mine, tid32, shBase)
	f.gridLoop(x, t, nt, d.T, func() {
		tot := make([]string, per)
		for r := range tot {
			tot[r] = f.f32(0)
		}
		bad := f.reg(cPred)
		f.op("setp.ne.u32 %s, %s, %s", bad, tid32, tid32) // false
		xRow := x.mad(t, h, x.imm(0))
		f.count(x, d.K, func(j string) {
			s := x.mad(t, d.K, j)
			id, ok := expertID(x, ids, s, d)
			notOK := f.reg(cPred)
			f.op("not.pred %s, %s", notOK, ok)
			f.op("or.pred %s, %s, %s", bad, bad, notOK)
			skip := f.label("skip")
			// ok is the same in every thread of the block (one token), so
			// the branch is uniform and the barriers below are safe.
			f.op("@%s bra.uni %s", notOK, skip)
			if d.Resident > 0 {
				// The expert's row among the resident ones; -1: the host
				// computed this slot (addend). Uniform like ok.
				rid := f.load(tensor.I32, x.addr(remap, id, 4))
				host := f.reg(cPred)
				f.op("setp.lt.s32 %s, %s, 0", host, rid)
				f.op("@%s bra.uni %s", host, skip)
				id = x.reg()
				if x.wide {
					f.op("cvt.u64.u32 %s, %s", id, rid)
				} else {
					f.op("mov.u32 %s, %s", id, rid)
				}
			}
			wt := f.load(d.DType, x.addr(wts, s, es))
			y := make([]string, per)
			for r := range y {
				y[r] = f.f32(0)
			}
			c0 := x.imm(0)
			f.gridLoop(x, c0, x.imm(block), hid, func() {
				// This thread's hidden column c0 + tid (0 past the end).
				col := x.reg()
				f.op("add.%s %s, %s, %s", x.t(), col, c0, tid)
				in := f.reg(cPred)
				f.op("setp.lt.%s %s, %s, %d", x.t(), in, col, hid)
				g, u := f.f32(0), f.f32(0)
				act := f.f32(0)
				noCol := f.label("nocol")
				f.op("@!%s bra %s", in, noCol)
				wBase := x.mad(id, h*hid, col)
				ai, bi := x.reg(), x.reg()
				f.op("mov.%s %s, %s", x.t(), ai, xRow)
				f.op("mov.%s %s, %s", x.t(), bi, wBase)
				dot(x, d.DType, g, xp, ai, gate, bi, hid, h)
				f.op("mov.%s %s, %s", x.t(), ai, xRow)
				f.op("mov.%s %s, %s", x.t(), bi, wBase)
				dot(x, d.DType, u, xp, ai, up, bi, hid, h)
				f.op("mul.f32 %s, %s, %s", act, f.silu(g), u)
				f.place(noCol)
				f.op("bar.sync 0") // the previous chunk's readers are done
				f.op("st.shared.f32 [%s], %s", mine, act)
				f.op("bar.sync 0")
				// n = min(block, hid − c0) columns of this chunk.
				n := x.imm(hid)
				f.op("sub.%s %s, %s, %s", x.t(), n, n, c0)
				f.op("min.%s %s, %s, %d", x.t(), n, n, block)
				for r := range per {
					oc := x.reg() // output column tid + r·block
					f.op("add.%s %s, %s, %d", x.t(), oc, tid, r*block)
					has := f.reg(cPred)
					f.op("setp.lt.%s %s, %s, %d", x.t(), has, oc, h)
					done := f.label("done")
					f.op("@!%s bra %s", has, done)
					// down[id, c0 + ff, oc] for ff < n.
					di := x.mad(id, hid*h, oc)
					di = x.mad(c0, h, di)
					sa := f.reg(cB32)
					f.op("mov.u32 %s, %s", sa, shBase)
					ff := x.imm(0)
					loop := f.label("ff")
					f.place(loop)
					end := f.reg(cPred)
					f.op("setp.ge.%s %s, %s, %s", x.t(), end, ff, n)
					f.op("@%s bra %s", end, done)
					a := f.reg(cF32)
					f.op("ld.shared.f32 %s, [%s]", a, sa)
					f.op("fma.rn.f32 %s, %s, %s, %s", y[r], a, f.load(d.DType, x.addr(down, di, es)), y[r])
					f.op("add.u32 %s, %s, 4", sa, sa)
					f.op("add.%s %s, %s, %d", x.t(), di, di, h)
					f.op("add.%s %s, %s, 1", x.t(), ff, ff)
					f.op("bra %s", loop)
					f.place(done)
				}
			})
			for r := range per {
				f.op("fma.rn.f32 %s, %s, %s, %s", tot[r], wt, y[r], tot[r])
			}
			f.place(skip)
		})
		for r := range per {
			oc := x.reg()
			f.op("add.%s %s, %s, %d", x.t(), oc, tid, r*block)
			has := f.reg(cPred)
			f.op("setp.lt.%s %s, %s, %d", x.t(), has, oc, h)
			skip := f.label("nostore")
			f.op("@!%s bra %s", has, skip)
			o := x.mad(t, h, oc)
			if d.Resident > 0 {
				f.op("add.f32 %s, %s, %s", tot[r], tot[r], f.load(tensor.F32, x.addr(addend, o, 4)))
			}
			f.op("selp.f32 %s, %s, %s, %s", tot[r], nanBits, tot[r], bad)
			f.store(d.DType, x.addr(out, o, es), tot[r])
			f.place(skip)
		}
	})
	grid := min(d.T, maxGridStrideBlocks)
	return f.kernel(Launch{Grid: [3]int{max(grid, 1), 1, 1}, Block: [3]int{block, 1, 1}}), nil
}
