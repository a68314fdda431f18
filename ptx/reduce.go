package ptx

import (
	"fmt"
	"math"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
)

// Reduce is a kdesc.Reduce (integers too, but for Mean: reduce_int.go)
// with the kernel's block.
type Reduce struct {
	kdesc.Reduce
	Block int // threads per output (0: from the reduced count)
}

var reduceOps = map[graph.Op]struct {
	ins      string
	identity float32
}{
	graph.OpReduceSum:  {"add.f32", 0},
	graph.OpReduceMean: {"add.f32", 0},
	graph.OpReduceProd: {"mul.f32", 1},
	graph.OpReduceMax:  {"max.NaN.f32", float32(math.Inf(-1))},
	graph.OpReduceMin:  {"min.NaN.f32", float32(math.Inf(1))},
}

// EmitReduce writes a reduction: one block per output element, its
// threads striding over the reduced elements. Parameters: out, in.
func EmitReduce(r *Reduce) (*Kernel, error) {
	rt, ins, ident, err := reduceSpec(r.Name, r.Op, r.DType)
	if err != nil {
		return nil, err
	}
	axes := r.Axes
	if len(axes) == 0 {
		for d := range r.Shape {
			axes = append(axes, d)
		}
	}
	strides := contiguous(r.Shape)
	var keptDims, keptSt, redDims, redSt []int
	for d, n := range r.Shape {
		if slices.Contains(axes, d) {
			redDims, redSt = append(redDims, n), append(redSt, strides[d])
		} else {
			keptDims, keptSt = append(keptDims, n), append(keptSt, strides[d])
		}
	}
	for _, a := range axes {
		if a < 0 || a >= len(r.Shape) {
			return nil, fmt.Errorf("ptx: %s: axis %d of rank %d", r.Name, a, len(r.Shape))
		}
	}
	outs, count := product(keptDims), product(redDims)
	kd, ks := collapse(keptDims, [][]int{keptSt})
	rd, rs := collapse(redDims, [][]int{redSt})
	block := r.Block
	if block == 0 {
		block = min(max(32, CeilDiv(count, 32*4)*32), 256)
	}
	if block%32 != 0 || block > MaxThreads {
		return nil, fmt.Errorf("ptx: %s: block of %d threads", r.Name, block)
	}
	f := newFn(r.Name)
	out, in := f.ptrParam("out"), f.ptrParam("in")
	x := ix{f: f, wide: product(r.Shape) > math.MaxInt32/2}
	o := f.reg(cB32)
	f.op("mov.u32 %s, %%ctaid.x", o)
	tid := f.reg(cB32)
	f.op("mov.u32 %s, %%tid.x", tid)
	exit := f.label("exit")
	g := f.reg(cPred)
	f.op("setp.ge.u32 %s, %s, %d", g, o, outs) // an empty output launches one idle block
	f.op("@%s bra %s", g, exit)
	oo, jj := o, x.reg()
	if x.wide {
		oo = f.reg(cB64)
		f.op("cvt.u64.u32 %s, %s", oo, o)
		f.op("cvt.u64.u32 %s, %s", jj, tid)
	} else {
		f.op("mov.u32 %s, %s", jj, tid)
	}
	base := x.offsets(oo, kd, ks, nil)[0]
	acc := f.reg(rt.c)
	f.op("mov.%s %s, %s", rt.t, acc, ident)
	top, end := f.label("red"), f.label("redend")
	p := f.reg(cPred)
	f.place(top)
	f.op("setp.ge.%s %s, %s, %d", x.t(), p, jj, count)
	f.op("@%s bra %s", p, end)
	off := x.offsets(jj, rd, rs, nil)[0]
	e := x.reg()
	f.op("add.%s %s, %s, %s", x.t(), e, base, off)
	f.op("%s %s, %s, %s", ins, acc, acc, f.load(r.DType, x.addr(in, e, r.DType.Size())))
	f.op("add.%s %s, %s, %d", x.t(), jj, jj, block)
	f.op("bra.uni %s", top)
	f.place(end)
	scratch := f.shared("red", "."+rt.t, 32, rt.size)
	acc = f.blockReduceT(acc, ins, tid, scratch, block, ident, rt)
	if r.Op == graph.OpReduceMean {
		f.op("div.rn.f32 %s, %s, %s", acc, acc, fimm(float32(count)))
	}
	q := f.reg(cPred)
	f.op("setp.ne.u32 %s, %s, 0", q, tid)
	done := f.label("done")
	f.op("@%s bra %s", q, done)
	f.store(r.DType, x.addr(out, oo, r.DType.Size()), acc)
	f.place(done)
	f.place(exit)
	return f.kernel(Launch{Grid: [3]int{max(outs, 1), 1, 1}, Block: [3]int{block, 1, 1}}), nil
}
