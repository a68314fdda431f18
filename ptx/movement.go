package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Copy is a kdesc.Copy (Transpose, Slice, Split, Expand, Tile, or a
// view's bytes) with the kernel's block.
type Copy struct {
	kdesc.Copy
	Block int
}

func checkMove(dt tensor.DType) error {
	if dt.Size() == 0 || dt == tensor.F64 {
		return fmt.Errorf("ptx: dtype %v is not supported on the GPU", dt)
	}
	return nil
}

// loadRaw and storeRaw move one element's bits unchanged.
func (f *fn) moveType(dt tensor.DType) (string, class) {
	switch dt.Size() {
	case 1:
		return "u8", cB32
	case 2:
		return "b16", cB16
	case 4:
		return "b32", cB32
	}
	return "b64", cB64
}

// EmitCopy writes a Copy. Parameters: out, in.
func EmitCopy(c *Copy) (*Kernel, error) {
	if err := checkMove(c.DType); err != nil {
		return nil, err
	}
	if len(c.Strides) != len(c.Shape) || (c.Mods != nil && len(c.Mods) != len(c.Shape)) {
		return nil, fmt.Errorf("ptx: %s: %d strides, %d mods for rank %d", c.Name, len(c.Strides), len(c.Mods), len(c.Shape))
	}
	n := product(c.Shape)
	dims, st := c.Shape, [][]int{c.Strides}
	hasMods := false
	for _, m := range c.Mods {
		hasMods = hasMods || m > 0
	}
	if !hasMods {
		dims, st = collapse(c.Shape, st)
	}
	f := newFn(c.Name)
	out, in := f.ptrParam("out"), f.ptrParam("in")
	span := n + absSum(c.Strides, c.Shape) + abs(c.Base)
	x := ix{f: f, wide: span > math.MaxInt32/2}
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		var src string
		if hasMods {
			coords := x.coords(i, dims)
			src = x.imm(c.Base)
			for d, s := range c.Strides {
				cd := coords[d]
				if m := c.Mods[d]; m > 0 {
					_, cd = x.divmod(cd, m)
				}
				if s != 0 {
					src = x.mad(cd, s, src)
				}
			}
		} else {
			src = x.offsets(i, dims, st, []int{c.Base})[0]
		}
		t, cl := f.moveType(c.DType)
		v := f.reg(cl)
		es := c.DType.Size()
		f.op("ld.global.%s %s, [%s]", t, v, x.addr(in, src, es))
		f.op("st.global.%s [%s], %s", t, x.addr(out, i, es), v)
	})
	return f.kernel(GridStride(n, blockOr(c.Block), maxGridStrideBlocks)), nil
}

func blockOr(b int) int {
	if b == 0 {
		return 256
	}
	return b
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// absSum bounds the input offsets a copy can reach.
func absSum(st, dims []int) int {
	s := 0
	for d := range st {
		s += abs(st[d]) * max(dims[d]-1, 0)
	}
	return s
}

// gridLoop emits `for i < n; i += stride { body }`.
func (f *fn) gridLoop(x ix, i, stride string, n int, body func()) {
	loop, done := f.label("loop"), f.label("done")
	p := f.reg(cPred)
	f.place(loop)
	f.op("setp.ge.%s %s, %s, %d", x.t(), p, i, n)
	f.op("@%s bra %s", p, done)
	body()
	f.op("add.%s %s, %s, %s", x.t(), i, i, stride)
	f.op("bra.uni %s", loop)
	f.place(done)
}

// Concat is a kdesc.Concat with the kernel's block. Parameters: out,
// in0, in1, ...
type Concat struct {
	kdesc.Concat
	Block int
}

// EmitConcat writes a Concat: each output element finds its input by
// comparing its axis coordinate with the inputs' boundaries.
func EmitConcat(c *Concat) (*Kernel, error) {
	if err := checkMove(c.DType); err != nil {
		return nil, err
	}
	if c.Axis < 0 || c.Axis >= len(c.Shape) || len(c.Sizes) == 0 {
		return nil, fmt.Errorf("ptx: %s: axis %d, %d inputs", c.Name, c.Axis, len(c.Sizes))
	}
	total := 0
	for _, s := range c.Sizes {
		total += s
	}
	if total != c.Shape[c.Axis] {
		return nil, fmt.Errorf("ptx: %s: sizes %v do not sum to %d", c.Name, c.Sizes, c.Shape[c.Axis])
	}
	n, inner := product(c.Shape), product(c.Shape[c.Axis+1:])
	f := newFn(c.Name)
	out := f.ptrParam("out")
	ins := make([]string, len(c.Sizes))
	for k := range ins {
		ins[k] = f.ptrParam(fmt.Sprintf("in%d", k))
	}
	x := ix{f: f, wide: n > math.MaxInt32/2}
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		oa, r := x.divmod(i, inner)
		o, a := x.divmod(oa, c.Shape[c.Axis])
		ptr, size, off := f.reg(cB64), x.reg(), x.reg()
		f.op("mov.u64 %s, %s", ptr, ins[0])
		f.op("mov.%s %s, %d", x.t(), size, c.Sizes[0])
		f.op("mov.%s %s, 0", x.t(), off)
		p := f.reg(cPred)
		at := 0
		for k := 1; k < len(c.Sizes); k++ {
			at += c.Sizes[k-1]
			f.op("setp.ge.%s %s, %s, %d", x.t(), p, a, at)
			f.op("selp.b64 %s, %s, %s, %s", ptr, ins[k], ptr, p)
			f.op("selp.b%d %s, %d, %s, %s", bits(x), size, c.Sizes[k], size, p)
			f.op("selp.b%d %s, %d, %s, %s", bits(x), off, at, off, p)
		}
		// src = (o·size + a - off)·inner + r
		src := x.reg()
		f.op("sub.%s %s, %s, %s", x.t(), src, a, off)
		f.op("mad.lo.%s %s, %s, %s, %s", x.t(), src, o, size, src)
		src = x.mad(src, inner, r)
		t, cl := f.moveType(c.DType)
		v := f.reg(cl)
		es := c.DType.Size()
		f.op("ld.global.%s %s, [%s]", t, v, x.addr(ptr, src, es))
		f.op("st.global.%s [%s], %s", t, x.addr(out, i, es), v)
	})
	return f.kernel(GridStride(n, blockOr(c.Block), maxGridStrideBlocks)), nil
}

func bits(x ix) int {
	if x.wide {
		return 64
	}
	return 32
}

// Gather takes slices along Axis of x at the given indices (numpy take):
// x viewed as [outer, D, inner], out as [outer, N, inner]. Negative
// indices count from the end; an index out of range yields zeros (a
// kernel cannot return an error). Parameters: out, x, indices.
type Gather struct {
	kdesc.Gather
	Block int
}

// EmitGather writes a Gather.
func EmitGather(g *Gather) (*Kernel, error) {
	if err := checkMove(g.DType); err != nil {
		return nil, err
	}
	if g.Index != tensor.I32 && g.Index != tensor.I64 {
		return nil, fmt.Errorf("ptx: %s: indices must be I32 or I64, not %v", g.Name, g.Index)
	}
	n := g.Outer * g.N * g.Inner
	f := newFn(g.Name)
	out, in, idx := f.ptrParam("out"), f.ptrParam("x"), f.ptrParam("indices")
	x := ix{f: f, wide: max(n, g.Outer*g.D*g.Inner) > math.MaxInt32/2}
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		oj, r := x.divmod(i, g.Inner)
		o, j := x.divmod(oj, g.N)
		k, bad := f.loadIndex(x, idx, j, g.Index == tensor.I64, g.D)
		src := x.reg()
		f.op("mad.lo.%s %s, %s, %d, %s", x.t(), src, o, g.D, k)
		f.moveOrZero(x, g.DType, out, i, in, x.mad(src, g.Inner, r), bad)
	})
	return f.kernel(GridStride(n, blockOr(g.Block), maxGridStrideBlocks)), nil
}

// Pad describes ONNX Pad: out dim d = in dim d + Begins[d] + Ends[d]
// (negative pads crop). Parameters: out, in.
type Pad struct {
	kdesc.Pad
	Block int
}

// EmitPad writes a Pad: each output coordinate maps back to an input
// coordinate (mirrored for reflect, clamped for edge); in constant mode a
// coordinate outside the input selects the fill value.
func EmitPad(pd *Pad) (*Kernel, error) {
	if err := checkMove(pd.DType); err != nil {
		return nil, err
	}
	if len(pd.In) != len(pd.Out) || len(pd.Begins) != len(pd.In) {
		return nil, fmt.Errorf("ptx: %s: ranks %d, %d, %d", pd.Name, len(pd.In), len(pd.Out), len(pd.Begins))
	}
	if pd.Mode > graph.PadEdge {
		return nil, fmt.Errorf("ptx: %s: pad mode %v", pd.Name, pd.Mode)
	}
	empty := product(pd.In) == 0
	if empty && pd.Mode != graph.PadConstant {
		return nil, fmt.Errorf("ptx: %s: %v padding of an empty input", pd.Name, pd.Mode)
	}
	n := product(pd.Out)
	ist := contiguous(pd.In)
	f := newFn(pd.Name)
	out, in := f.ptrParam("out"), f.ptrParam("in")
	x := ix{f: f, wide: max(n, product(pd.In)) > math.MaxInt32/2}
	i, stride := f.globalIndex(x.wide)
	st := "s32"
	if x.wide {
		st = "s64"
	}
	f.gridLoop(x, i, stride, n, func() {
		coords := x.coords(i, pd.Out)
		outside := f.reg(cPred)
		f.op("setp.ne.u32 %s, 0, 0", outside)
		src := x.imm(0)
		for d := range pd.Out {
			t := x.reg()
			f.op("sub.%s %s, %s, %d", st, t, coords[d], pd.Begins[d])
			size := pd.In[d]
			lo, hi := f.reg(cPred), f.reg(cPred)
			f.op("setp.lt.%s %s, %s, 0", st, lo, t)
			f.op("setp.ge.%s %s, %s, %d", st, hi, t, size)
			switch pd.Mode {
			case graph.PadConstant:
				f.op("or.pred %s, %s, %s", outside, outside, lo)
				f.op("or.pred %s, %s, %s", outside, outside, hi)
				f.op("max.%s %s, %s, 0", st, t, t)
				f.op("min.%s %s, %s, %d", st, t, t, max(size-1, 0))
			case graph.PadEdge:
				f.op("max.%s %s, %s, 0", st, t, t)
				f.op("min.%s %s, %s, %d", st, t, t, max(size-1, 0))
			case graph.PadReflect:
				// Mirror without repeating the edge, folding until inside:
				// period 2(size-1); then t > size-1 maps to 2(size-1) - t.
				if size > 1 {
					per := 2 * (size - 1)
					f.op("abs.%s %s, %s", st, t, t)
					f.op("rem.%s %s, %s, %d", st, t, t, per)
					r := x.reg()
					f.op("sub.%s %s, %d, %s", st, r, per, t)
					f.op("min.%s %s, %s, %s", st, t, t, r)
				} else {
					f.op("mov.%s %s, 0", x.t(), t)
				}
			}
			src = x.mad(t, ist[d], src)
		}
		tt, cl := f.moveType(pd.DType)
		v := f.reg(cl)
		es := pd.DType.Size()
		if empty {
			f.op("setp.eq.u32 %s, 0, 0", outside) // nothing to read
		} else {
			f.op("ld.global.%s %s, [%s]", tt, v, x.addr(in, src, es))
		}
		if pd.Mode == graph.PadConstant {
			fill := padBits(pd.DType, pd.Value)
			switch cl {
			case cB16:
				f.op("selp.b16 %s, %d, %s, %s", v, fill, v, outside)
			case cB32:
				f.op("selp.b32 %s, %d, %s, %s", v, fill, v, outside)
			default:
				f.op("selp.b64 %s, %d, %s, %s", v, fill, v, outside)
			}
		}
		f.op("st.global.%s [%s], %s", tt, x.addr(out, i, es), v)
	})
	return f.kernel(GridStride(n, blockOr(pd.Block), maxGridStrideBlocks)), nil
}

// padBits is the fill value's bit pattern in dt: ints truncate toward
// zero and saturate (NaN gives 0), Bool is value != 0.
func padBits(dt tensor.DType, v float32) int64 {
	switch dt {
	case tensor.F32:
		return int64(math.Float32bits(v))
	case tensor.F16:
		return int64(tensor.F32ToF16(v))
	case tensor.BF16:
		return int64(tensor.F32ToBF16(v))
	case tensor.Bool:
		if v != 0 {
			return 1
		}
		return 0
	}
	if v != v {
		return 0
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch dt {
	case tensor.I8:
		lo, hi = -128, 127
	case tensor.U8:
		lo, hi = 0, 255
	case tensor.I32:
		lo, hi = math.MinInt32, math.MaxInt32
	}
	w := math.Trunc(float64(v))
	switch {
	case w <= float64(lo):
		return lo
	case w >= float64(hi):
		return hi
	}
	return int64(w)
}
