package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Indexing is a kdesc.Indexing with the kernel's block. CUDA lowers the
// gathers (GatherElements, GatherND), one thread per output element; as
// with Gather, an index out of range yields zeros (a kernel cannot
// return an error; the CPU's run-time error is the check). The scatters
// have their own kernel (scatter.go). Parameters: out, x, indices.
type Indexing struct {
	kdesc.Indexing
	Block int
}

// loadIndex loads index pos of idx (I32 or I64) as s64, adds d to a
// negative one and returns it with a predicate set when it is outside
// [0, d) after that.
func (f *fn) loadIndex(x ix, idx, pos string, wideIdx bool, d int) (k, bad string) {
	k = f.reg(cB64)
	if wideIdx {
		f.op("ld.global.s64 %s, [%s]", k, x.addr(idx, pos, 8))
	} else {
		k32 := f.reg(cB32)
		f.op("ld.global.s32 %s, [%s]", k32, x.addr(idx, pos, 4))
		f.op("cvt.s64.s32 %s, %s", k, k32)
	}
	neg, kk := f.reg(cPred), f.reg(cB64)
	bad = f.reg(cPred)
	f.op("add.s64 %s, %s, %d", kk, k, d)
	f.op("setp.lt.s64 %s, %s, 0", neg, k)
	f.op("selp.b64 %s, %s, %s, %s", k, kk, k, neg)
	// One unsigned compare catches both k < 0 and k ≥ d.
	f.op("setp.ge.u64 %s, %s, %d", bad, k, d)
	f.op("selp.b64 %s, 0, %s, %s", k, k, bad)
	if x.wide {
		return k, bad
	}
	k32 := f.reg(cB32)
	f.op("cvt.u32.u64 %s, %s", k32, k)
	return k32, bad
}

// moveOrZero copies element src of in to element dst of out, or stores
// zero where bad holds.
func (f *fn) moveOrZero(x ix, dt tensor.DType, out, dst, in, src, bad string) {
	t, cl := f.moveType(dt)
	v := f.reg(cl)
	es := dt.Size()
	f.op("ld.global.%s %s, [%s]", t, v, x.addr(in, src, es))
	if cl == cB16 {
		f.op("selp.b16 %s, 0, %s, %s", v, v, bad)
	} else {
		f.op("selp.b%d %s, 0, %s, %s", map[class]int{cB32: 32, cB64: 64}[cl], v, v, bad)
	}
	f.op("st.global.%s [%s], %s", t, x.addr(out, dst, es), v)
}

// EmitIndexing writes a GatherElements or GatherND kernel.
func EmitIndexing(g *Indexing) (*Kernel, error) {
	if err := checkMove(g.DType); err != nil {
		return nil, err
	}
	if g.Index != tensor.I32 && g.Index != tensor.I64 {
		return nil, fmt.Errorf("ptx: %s: indices must be I32 or I64, not %v", g.Name, g.Index)
	}
	q := len(g.Indices)
	var outDims []int
	if g.Op == graph.OpGatherElements {
		outDims = g.Indices
	} else {
		outDims = append(append([]int(nil), g.Indices[:q-1]...), g.Data[g.BatchDims+g.Indices[q-1]:]...)
	}
	n := product(outDims)
	f := newFn(g.Name)
	out, in, idx := f.ptrParam("out"), f.ptrParam("x"), f.ptrParam("indices")
	x := ix{f: f, wide: max(n, product(g.Data), product(g.Indices)) > math.MaxInt32/2}
	wideIdx := g.Index == tensor.I64
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		var src, bad string
		if g.Op == graph.OpGatherElements {
			src, bad = gatherElementsSource(x, g, idx, i, wideIdx)
		} else {
			src, bad = gatherNDSource(x, g, idx, i, wideIdx)
		}
		f.moveOrZero(x, g.DType, out, i, in, src, bad)
	})
	return f.kernel(GridStride(n, blockOr(g.Block), maxGridStrideBlocks)), nil
}

// gatherElementsSource: output element i has the indices' coordinates;
// its source has the same ones with the axis coordinate replaced by
// indices[i].
func gatherElementsSource(x ix, g *Indexing, idx, i string, wideIdx bool) (string, string) {
	k, bad := x.f.loadIndex(x, idx, i, wideIdx, g.Data[g.Axis])
	coords := x.coords(i, g.Indices)
	coords[g.Axis] = k
	xs := contiguous(g.Data)
	src := x.imm(0)
	for d, c := range coords {
		src = x.mad(c, xs[d], src)
	}
	return src, bad
}

// gatherNDSource: output element i is element r of the block tuple t
// selects (i = t·block + r), in batch entry t / tuples.
func gatherNDSource(x ix, g *Indexing, idx, i string, wideIdx bool) (string, string) {
	q, b := len(g.Indices), g.BatchDims
	k := g.Indices[q-1]
	dims := g.Data[b : b+k]
	block, tuples := product(g.Data[b+k:]), product(g.Indices[b:q-1])
	t, r := x.divmod(i, block)
	be, _ := x.divmod(t, tuples)
	src := x.mad(be, product(g.Data[b:]), r)
	st := contiguous(dims)
	var bad string
	for j, d := range dims {
		pos := x.mad(t, k, x.imm(j))
		c, bj := x.f.loadIndex(x, idx, pos, wideIdx, d)
		src = x.mad(c, st[j]*block, src)
		if bad == "" {
			bad = bj
		} else {
			x.f.op("or.pred %s, %s, %s", bad, bad, bj)
		}
	}
	return src, bad
}
