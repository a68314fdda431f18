package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Row kernels work on independent rows of L elements, one block per row:
// each thread strides through the row, partial results meet through warp
// shuffles and a 32-slot shared scratch (see blockReduce).

// Softmax is a kdesc.Softmax with the kernel's block.
type Softmax struct {
	kdesc.Softmax
	Block int // threads per block, a multiple of 32 up to 1024 (0: chosen from the row length)
}

// rowBlock picks threads per row: a warp for short rows, up to 256.
func rowBlock(block, l int) (int, error) {
	if block == 0 {
		block = min(max(32, CeilDiv(l, 32*4)*32), 256)
	}
	if block%32 != 0 || block < 32 || block > MaxThreads {
		return 0, fmt.Errorf("ptx: block of %d threads: want a multiple of 32 up to %d", block, MaxThreads)
	}
	return block, nil
}

func floatOnly(dt tensor.DType) error {
	if dt != tensor.F32 && dt != tensor.F16 && dt != tensor.BF16 {
		return fmt.Errorf("ptx: dtype %v: the GPU kernel handles F32, F16 and BF16", dt)
	}
	return nil
}

// rowCtx is the state the row kernels share; newRow emits the prologue:
// the row index (one per block), its first element and the thread index.
// Rows are [outer, L, inner] views: row r starts at
// (r/inner)·L·inner + r%inner and steps by inner.
type rowCtx struct {
	f         *fn
	x         ix
	base, tid string
	row       string // the block's row (u32)
	l, inner  int
	block     int
	scratch   string
	exit      string // label after the body
}

// done places the exit label; call it last.
func (rc *rowCtx) done() { rc.f.place(rc.exit) }

func newRow(f *fn, total, l, inner, block int) *rowCtx {
	x := ix{f: f, wide: total > math.MaxInt32/2}
	rc := &rowCtx{f: f, x: x, l: l, inner: inner, block: block}
	row := f.reg(cB32)
	f.op("mov.u32 %s, %%ctaid.x", row)
	rc.row = row
	rc.exit = f.label("exit")
	g := f.reg(cPred)
	f.op("setp.ge.u32 %s, %s, %d", g, row, total/max(l, 1)) // no rows: one idle block
	f.op("@%s bra %s", g, rc.exit)
	rc.tid = f.reg(cB32)
	f.op("mov.u32 %s, %%tid.x", rc.tid)
	r := row
	if x.wide {
		r = f.reg(cB64)
		f.op("cvt.u64.u32 %s, %s", r, row)
	}
	if inner == 1 {
		rc.base = x.mad(r, l, x.imm(0))
	} else {
		o, in := x.divmod(r, inner)
		rc.base = x.mad(o, l*inner, in)
	}
	rc.scratch = f.shared("red", ".f32", 32, 4)
	return rc
}

// each emits body(j, elem) for j = tid, tid+block, ... < L, where elem is
// the element index of the row's j-th element.
func (rc *rowCtx) each(body func(j, elem string)) {
	f, x := rc.f, rc.x
	j := f.reg(cB32)
	f.op("mov.u32 %s, %s", j, rc.tid)
	top, end := f.label("row"), f.label("rowend")
	p := f.reg(cPred)
	f.place(top)
	f.op("setp.ge.u32 %s, %s, %d", p, j, rc.l)
	f.op("@%s bra %s", p, end)
	jj := j
	if x.wide {
		jj = f.reg(cB64)
		f.op("cvt.u64.u32 %s, %s", jj, j)
	}
	body(j, x.mad(jj, rc.inner, rc.base))
	f.op("add.u32 %s, %s, %d", j, j, rc.block)
	f.op("bra.uni %s", top)
	f.place(end)
}

// reduce folds a per-thread accumulator across the block.
func (rc *rowCtx) reduce(v, op string, identity float32) string {
	return rc.f.blockReduce(v, op, rc.tid, rc.scratch, rc.block, identity)
}

// EmitSoftmax writes softmax(x) = exp(x - max)/Σexp(x - max) over Axis
// (log-softmax: x - max - log Σ). Parameters: out, in.
func EmitSoftmax(s *Softmax) (*Kernel, error) {
	if err := floatOnly(s.DType); err != nil {
		return nil, err
	}
	if s.Axis < 0 || s.Axis >= len(s.Shape) {
		return nil, fmt.Errorf("ptx: %s: axis %d of rank %d", s.Name, s.Axis, len(s.Shape))
	}
	l, inner := s.Shape[s.Axis], product(s.Shape[s.Axis+1:])
	total := product(s.Shape)
	rows := total / max(l, 1)
	block, err := rowBlock(s.Block, l)
	if err != nil {
		return nil, err
	}
	f := newFn(s.Name)
	out, in := f.ptrParam("out"), f.ptrParam("in")
	rc := newRow(f, total, l, inner, block)
	es := s.DType.Size()
	m := f.f32(float32(math.Inf(-1)))
	rc.each(func(_, e string) {
		f.op("max.NaN.f32 %s, %s, %s", m, m, f.load(s.DType, rc.x.addr(in, e, es)))
	})
	m = rc.reduce(m, "max.NaN.f32", float32(math.Inf(-1)))
	sum := f.f32(0)
	rc.each(func(_, e string) {
		d := f.reg(cF32)
		f.op("sub.f32 %s, %s, %s", d, f.load(s.DType, rc.x.addr(in, e, es)), m)
		f.op("add.f32 %s, %s, %s", sum, sum, f.exp(d))
	})
	sum = rc.reduce(sum, "add.f32", 0)
	var shift string
	if s.Log {
		shift = f.reg(cF32)
		f.op("add.f32 %s, %s, %s", shift, m, f.log(sum))
	}
	rc.each(func(_, e string) {
		v := f.load(s.DType, rc.x.addr(in, e, es))
		y := f.reg(cF32)
		if s.Log {
			f.op("sub.f32 %s, %s, %s", y, v, shift)
		} else {
			d := f.reg(cF32)
			f.op("sub.f32 %s, %s, %s", d, v, m)
			f.op("div.rn.f32 %s, %s, %s", y, f.exp(d), sum)
		}
		f.store(s.DType, rc.x.addr(out, e, es), y)
	})
	rc.done()
	return f.kernel(Launch{Grid: [3]int{max(rows, 1), 1, 1}, Block: [3]int{block, 1, 1}}), nil
}

// Norm is a kdesc.Norm with the kernel's block.
type Norm struct {
	kdesc.Norm
	Block int
}

// EmitNorm writes LayerNorm ((x-mean)/√(var+eps)·scale + bias, two
// passes, biased variance) or RMSNorm. Parameters: out, x, then r,
// scale and bias when present (scale and bias shaped like the normalised
// dims, or one value per channel with Channels: InstanceNorm).
func EmitNorm(n *Norm) (*Kernel, error) {
	if err := floatOnly(n.DType); err != nil {
		return nil, err
	}
	if n.Axis < 0 || n.Axis >= len(n.Shape) {
		return nil, fmt.Errorf("ptx: %s: axis %d of rank %d", n.Name, n.Axis, len(n.Shape))
	}
	if n.RMS && n.Bias {
		return nil, fmt.Errorf("ptx: %s: RMSNorm has no bias", n.Name)
	}
	l, total := product(n.Shape[n.Axis:]), product(n.Shape)
	rows := total / max(l, 1)
	block, err := rowBlock(n.Block, l)
	if err != nil {
		return nil, err
	}
	if n.Residual && len(n.ResStrides) != len(n.Shape) {
		return nil, fmt.Errorf("ptx: %s: %d residual strides for rank %d", n.Name, len(n.ResStrides), len(n.Shape))
	}
	f := newFn(n.Name)
	out, in := f.ptrParam("out"), f.ptrParam("x")
	var scale, bias, res string
	if n.Residual {
		res = f.ptrParam("r")
	}
	if n.Scale {
		scale = f.ptrParam("scale")
	}
	if n.Bias {
		bias = f.ptrParam("bias")
	}
	rc := newRow(f, total, l, 1, block)
	es := n.DType.Size()
	inv := fimm(float32(1 / float64(max(l, 1))))
	var rdims []int
	var rst [][]int
	if n.Residual {
		rdims, rst = collapse(n.Shape, [][]int{n.ResStrides})
	}
	// load reads x (+ r) at element e.
	load := func(e string) string {
		v := f.load(n.DType, rc.x.addr(in, e, es))
		if !n.Residual {
			return v
		}
		off := rc.x.offsets(e, rdims, rst, nil)[0]
		s := f.reg(cF32)
		f.op("add.f32 %s, %s, %s", s, v, f.load(n.DType, rc.x.addr(res, off, es)))
		return s
	}
	var mean string
	if !n.RMS {
		sum := f.f32(0)
		rc.each(func(_, e string) {
			f.op("add.f32 %s, %s, %s", sum, sum, load(e))
		})
		sum = rc.reduce(sum, "add.f32", 0)
		mean = f.reg(cF32)
		f.op("mul.f32 %s, %s, %s", mean, sum, inv)
	}
	sq := f.f32(0)
	rc.each(func(_, e string) {
		d := load(e)
		if !n.RMS {
			dd := f.reg(cF32)
			f.op("sub.f32 %s, %s, %s", dd, d, mean)
			d = dd
		}
		f.op("fma.rn.f32 %s, %s, %s, %s", sq, d, d, sq)
	})
	sq = rc.reduce(sq, "add.f32", 0)
	std := f.reg(cF32)
	f.op("fma.rn.f32 %s, %s, %s, %s", std, sq, inv, fimm(n.Eps))
	f.op("sqrt.rn.f32 %s, %s", std, std)
	// affine loads scale or bias for the row's element j: per element,
	// or the row's channel's one value, loaded once here.
	affine := func(p string) func(j string) string {
		if n.Channels == 0 {
			return func(j string) string { return f.load(n.DType, ix{f: f}.addr(p, j, es)) }
		}
		ch := f.reg(cB32)
		f.op("rem.u32 %s, %s, %d", ch, rc.row, n.Channels)
		v := f.load(n.DType, ix{f: f}.addr(p, ch, es))
		return func(string) string { return v }
	}
	var scaleAt, biasAt func(string) string
	if n.Scale {
		scaleAt = affine(scale)
	}
	if n.Bias {
		biasAt = affine(bias)
	}
	rc.each(func(j, e string) {
		v := load(e)
		if !n.RMS {
			d := f.reg(cF32)
			f.op("sub.f32 %s, %s, %s", d, v, mean)
			v = d
		}
		y := f.reg(cF32)
		f.op("div.rn.f32 %s, %s, %s", y, v, std)
		if n.Scale {
			f.op("mul.f32 %s, %s, %s", y, y, scaleAt(j))
		}
		if n.Bias {
			f.op("add.f32 %s, %s, %s", y, y, biasAt(j))
		}
		f.store(n.DType, rc.x.addr(out, e, es), y)
	})
	rc.done()
	return f.kernel(Launch{Grid: [3]int{max(rows, 1), 1, 1}, Block: [3]int{block, 1, 1}}), nil
}
