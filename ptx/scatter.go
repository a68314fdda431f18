package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Scatter is a kdesc.Scatter (ScatterElements or ScatterND) with the
// kernel's block.
type Scatter struct {
	kdesc.Scatter
	Block int // threads per block (0: 256)
}

// EmitScatter writes ScatterElements or ScatterND with one thread per
// output element, which owns it: the thread reads the data element, then
// walks every update that can land on it in index order and folds in
// those that do, then stores it. So duplicate indices apply in the
// CPU's order (the last replacement wins, reductions fold in index
// order) with no atomics and no second pass, and out may alias data (a
// thread reads its element before it writes it). The walk is the cost:
// a ScatterElements element looks at the indices' extent along the axis,
// a ScatterND element at every index tuple (k loads each), which suits
// the small updates of KV caches and index fix-ups, not a scatter of a
// large tensor into another.
//
// An index out of range (after adding the axis length to a negative one)
// lands nowhere: a kernel cannot return the CPU's run-time error, so its
// update is dropped, as the gathers read zeros there. Reductions compute
// in the dtype's own arithmetic as the CPU's: F16 and BF16 through f32,
// rounded back after every fold; integers wrap at their width; max and
// min propagate NaN. Parameters: out, data, indices, updates.
func EmitScatter(s *Scatter) (*Kernel, error) {
	if err := checkMove(s.DType); err != nil {
		return nil, err
	}
	if s.Index != tensor.I32 && s.Index != tensor.I64 {
		return nil, fmt.Errorf("ptx: %s: indices must be I32 or I64, not %v", s.Name, s.Index)
	}
	if s.Reduction > graph.ScatterMin {
		return nil, fmt.Errorf("ptx: %s: unknown reduction %d", s.Name, s.Reduction)
	}
	if s.Reduction != graph.ScatterNone && s.DType == tensor.Bool {
		return nil, fmt.Errorf("ptx: %s: reduction %d of bool", s.Name, s.Reduction)
	}
	q := len(s.Indices)
	switch {
	case s.Op == graph.OpScatterElements && (q != len(s.Data) || s.Axis < 0 || s.Axis >= q):
		return nil, fmt.Errorf("ptx: %s: indices %v for data %v along axis %d", s.Name, s.Indices, s.Data, s.Axis)
	case s.Op == graph.OpScatterND && (q == 0 || s.Indices[q-1] < 1 || s.Indices[q-1] > len(s.Data)):
		return nil, fmt.Errorf("ptx: %s: index tuples %v for data %v", s.Name, s.Indices, s.Data)
	case s.Op != graph.OpScatterElements && s.Op != graph.OpScatterND:
		return nil, fmt.Errorf("ptx: %s: %v is not a scatter", s.Name, s.Op)
	}
	n := product(s.Data)
	f := newFn(s.Name)
	out, data, idx, upd := f.ptrParam("out"), f.ptrParam("data"), f.ptrParam("indices"), f.ptrParam("updates")
	x := ix{f: f, wide: max(n, product(s.Indices)) > math.MaxInt32/2}
	wideIdx := s.Index == tensor.I64
	es := s.DType.Size()
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		acc := s.loadValue(f, x.addr(data, i, es))
		// fold combines the update at position p when the predicate hit
		// holds.
		fold := func(p, hit string) {
			skip := f.label("miss")
			f.op("@!%s bra %s", hit, skip)
			s.combine(f, acc, s.loadValue(f, x.addr(upd, p, es)))
			f.place(skip)
		}
		if s.Op == graph.OpScatterElements {
			s.elements(x, i, idx, wideIdx, fold)
		} else {
			s.nd(x, i, idx, wideIdx, fold)
		}
		s.storeValue(f, x.addr(out, i, es), acc)
	})
	return f.kernel(GridStride(n, blockOr(s.Block), maxGridStrideBlocks)), nil
}

// elements walks the updates along the axis that share output element
// o's other coordinates (none when o lies past the indices' extent on
// one of them) and folds in those whose index is o's axis coordinate.
func (s *Scatter) elements(x ix, o, idx string, wideIdx bool, fold func(p, hit string)) {
	f := x.f
	c := x.coords(o, s.Data)
	ist := contiguous(s.Indices)
	base := x.imm(0)
	outside := ""
	for d, cd := range c {
		if d == s.Axis {
			continue
		}
		base = x.mad(cd, ist[d], base)
		if s.Indices[d] < s.Data[d] {
			p := f.reg(cPred)
			f.op("setp.ge.%s %s, %s, %d", x.t(), p, cd, s.Indices[d])
			if outside == "" {
				outside = p
			} else {
				f.op("or.pred %s, %s, %s", outside, outside, p)
			}
		}
	}
	done := f.label("none")
	if outside != "" {
		f.op("@%s bra %s", outside, done)
	}
	j := x.imm(0)
	f.gridLoop(x, j, x.imm(1), s.Indices[s.Axis], func() {
		p := x.mad(j, ist[s.Axis], base)
		k, bad := f.loadIndex(x, idx, p, wideIdx, s.Data[s.Axis])
		hit := f.reg(cPred)
		f.op("setp.eq.%s %s, %s, %s", x.t(), hit, k, c[s.Axis])
		f.op("and.pred %s, %s, !%s", hit, hit, bad)
		fold(p, hit)
	})
	f.place(done)
}

// nd walks every index tuple t: output element o is element r of the
// block at slice o / block, and tuple t's update block lands there when
// its coordinates select that slice.
func (s *Scatter) nd(x ix, o, idx string, wideIdx bool, fold func(p, hit string)) {
	f := x.f
	q := len(s.Indices)
	k := s.Indices[q-1]
	block := product(s.Data[k:])
	slice, r := x.divmod(o, block)
	st := contiguous(s.Data[:k])
	t := x.imm(0)
	f.gridLoop(x, t, x.imm(1), product(s.Indices[:q-1]), func() {
		target, bad := x.imm(0), ""
		for j, d := range s.Data[:k] {
			c, bj := f.loadIndex(x, idx, x.mad(t, k, x.imm(j)), wideIdx, d)
			target = x.mad(c, st[j], target)
			if bad == "" {
				bad = bj
			} else {
				f.op("or.pred %s, %s, %s", bad, bad, bj)
			}
		}
		hit := f.reg(cPred)
		f.op("setp.eq.%s %s, %s, %s", x.t(), hit, target, slice)
		f.op("and.pred %s, %s, !%s", hit, hit, bad)
		fold(x.mad(t, block, r), hit)
	})
}

// loadValue reads one element at addr: its raw bits for a replacement,
// else a register of the dtype's arithmetic (f32, s32 or s64).
func (s *Scatter) loadValue(f *fn, addr string) string {
	if s.Reduction == graph.ScatterNone {
		t, cl := f.moveType(s.DType)
		v := f.reg(cl)
		f.op("ld.global.%s %s, [%s]", t, v, addr)
		return v
	}
	return f.load(s.DType, addr)
}

// storeValue writes what loadValue read (and combine folded) at addr.
func (s *Scatter) storeValue(f *fn, addr, v string) {
	if s.Reduction == graph.ScatterNone {
		t, _ := f.moveType(s.DType)
		f.op("st.global.%s [%s], %s", t, addr, v)
		return
	}
	f.store(s.DType, addr, v)
}

// combine folds u into the register acc (both from loadValue) with the
// reduction, and rounds or wraps acc back to the dtype, as the CPU's
// combiner stores every fold.
func (s *Scatter) combine(f *fn, acc, u string) {
	if s.Reduction == graph.ScatterNone {
		t, _ := f.moveType(s.DType)
		if t == "u8" {
			t = "b32"
		}
		f.op("mov.%s %s, %s", t, acc, u)
		return
	}
	k, _ := kindOf(s.DType)
	var t string
	switch k {
	case kF32:
		t = "f32"
	case kS64:
		t = "s64"
	default:
		t = "s32"
	}
	switch s.Reduction {
	case graph.ScatterAdd:
		if k == kF32 {
			f.op("add.rn.f32 %s, %s, %s", acc, acc, u)
		} else {
			f.op("add.%s %s, %s, %s", t, acc, acc, u)
		}
	case graph.ScatterMul:
		if k == kF32 {
			f.op("mul.rn.f32 %s, %s, %s", acc, acc, u)
		} else {
			f.op("mul.lo.%s %s, %s, %s", t, acc, acc, u)
		}
	case graph.ScatterMax, graph.ScatterMin:
		op := map[graph.ScatterReduction]string{graph.ScatterMax: "max", graph.ScatterMin: "min"}[s.Reduction]
		if k == kF32 {
			op += ".NaN"
		}
		f.op("%s.%s %s, %s, %s", op, t, acc, acc, u)
	}
	switch s.DType {
	case tensor.F16, tensor.BF16:
		f.op("mov.f32 %s, %s", acc, f.roundTo(s.DType, acc))
	case tensor.I8:
		f.op("cvt.s32.s8 %s, %s", acc, acc)
	case tensor.U8:
		f.op("and.b32 %s, %s, 255", acc, acc)
	}
}
