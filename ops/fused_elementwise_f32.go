package ops

import (
	"unsafe"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// The F32 fast path of FusedElementwise: programs whose inputs and results
// are all F32 or Bool run on float32 tiles, the transcendental and
// arithmetic instructions through ops/asm's vectorised elementwise kernels
// (within a few ulp of the reference formulas; + - × ÷ exactly), the rest
// with the reference formula per element. A flat F32 input is read in
// place, without a copy into a tile. Bool values are 0 and 1.

// elem32Plan is an elemPlan whose values all fit float32 tiles.
type elem32Plan struct {
	*elemPlan
	ew    *asm.EwKernels
	rows  *asm.RowKernels
	vecUn []asm.EwUnary  // by step: the vector unary, when the step has one
	vecBi []asm.EwBinary // by step: the vector binary, when the step has one
	hasUn []bool
	hasBi []bool
	// affine, if set, runs the program plane by plane: a per-channel
	// x·a + b, maybe then a Relu (fused_elementwise_affine.go).
	affine *elemAffine
}

func newElem32Plan(p *elemPlan) *elem32Plan {
	for _, in := range p.ins {
		if in.dt != tensor.F32 && in.dt != tensor.Bool {
			return nil
		}
	}
	q := &elem32Plan{elemPlan: p, ew: asm.BestEw(), rows: asm.BestRows(), vecUn: make([]asm.EwUnary, len(p.steps)),
		vecBi: make([]asm.EwBinary, len(p.steps)), hasUn: make([]bool, len(p.steps)), hasBi: make([]bool, len(p.steps))}
	for i, st := range p.steps {
		if st.dt != tensor.F32 && st.dt != tensor.Bool {
			return nil
		}
		switch st.kind {
		case elemUnary:
			q.vecUn[i], q.hasUn[i] = vecUnaryOf(st.op)
		case elemArith:
			q.vecBi[i], q.hasBi[i] = vecBinaryOf(st.op)
		}
	}
	q.affine = q.affineOf()
	return q
}

// elem32Scratch is one worker's float32 tiles; slots of flat F32 inputs
// are pointed at the input instead.
type elem32Scratch struct {
	own   [][]float32
	slots [][]float32
	src   [][]float32 // the run's F32 inputs, viewed once a run (nil for others)
	idx   []int
	wide  []float64 // a float64 tile for gathers through loadInput
	// affA and affB hold a range's per-plane scales and shifts (affine).
	affA, affB []float32
}

func (p *elem32Plan) newScratch() *elem32Scratch {
	n := len(p.ins) + len(p.steps)
	s := &elem32Scratch{own: make([][]float32, n), slots: make([][]float32, n), src: make([][]float32, len(p.ins)),
		idx: make([]int, len(p.shape)), wide: make([]float64, elemTile)}
	for i := range s.own {
		s.own[i] = make([]float32, elemTile)
	}
	if p.affine != nil {
		s.affA, s.affB = make([]float32, p.n/p.affine.plane), make([]float32, p.n/p.affine.plane)
	}
	return s
}

// run evaluates output elements [lo, hi). An F32 result is written by
// the program's last instruction straight into the output where no input
// but an exact alias read in place shares its bytes (each instruction
// reads index j of a tile before writing index j), else through a tile
// copied out.
func (p *elem32Plan) run(s *elem32Scratch, ins []tensor.Tensor, out tensor.Tensor, lo, hi int) {
	if p.affine != nil && p.writesInPlace(ins, out) {
		p.runAffine(s, ins, out, lo, hi)
		return
	}
	for k, in := range p.ins {
		s.src[k] = nil
		if in.dt == tensor.F32 {
			s.src[k] = ins[k].F32()
		}
	}
	defer clear(s.src)   // keep no reference to the arena
	var direct []float32 // the output, when the last instruction writes it
	if out.DType == tensor.F32 && len(p.steps) > 0 && p.writesInPlace(ins, out) {
		direct = out.F32()
	}
	for t0 := lo; t0 < hi; t0 += elemTile {
		m := min(elemTile, hi-t0)
		for k, in := range p.ins {
			switch {
			case in.flat && in.dt == tensor.F32:
				s.slots[k] = s.src[k][t0 : t0+m]
			case in.dt == tensor.F32 && in.scalar:
				v := s.src[k][0]
				t := s.own[k][:m]
				for i := range t {
					t[i] = v
				}
				s.slots[k] = t
			case in.dt == tensor.F32 && in.repeat > 0:
				// Walk the groups (a plane's value), each repeated by the
				// row kernels' Repeat: runs of one value can be shorter
				// than a walk's cost per run (2×2 planes), or far longer
				// than an element loop should fill (56² planes).
				t, r := s.own[k][:m], in.repeat
				q0 := t0 / r
				forRuns(in.groups, s.idx, q0, (t0+m+r-1)/r-q0, repeatRuns{t, s.src[k], r, t0 - q0*r, p.rows})
				s.slots[k] = t
			case in.dt == tensor.F32:
				t := s.own[k][:m]
				forRuns(&p.ins[k], s.idx, t0, m, f32Runs{t, s.src[k]})
				s.slots[k] = t
			default: // Bool: through the float64 loader
				loadInput(&p.ins[k], s.idx, s.wide[:m], ins[k], t0)
				t := s.own[k][:m]
				for i, v := range s.wide[:m] {
					t[i] = float32(v)
				}
				s.slots[k] = t
			}
		}
		for i := range p.steps {
			d := len(p.ins) + i
			s.slots[d] = s.own[d][:m]
			if d == p.result && direct != nil {
				s.slots[d] = direct[t0 : t0+m]
			}
			p.eval(i, s.slots, d)
		}
		y := s.slots[p.result]
		switch {
		case direct != nil:
		case out.DType == tensor.F32:
			copy(out.F32()[t0:t0+m], y)
		default:
			d := out.Data[t0 : t0+m]
			for i, v := range y {
				d[i] = boolByte(v != 0)
			}
		}
	}
}

// writesInPlace reports whether the last instruction may write the
// output directly: no input shares bytes with it, or only inputs read in
// place at the same offsets (an input the plan gave the output's slot).
func (p *elem32Plan) writesInPlace(ins []tensor.Tensor, out tensor.Tensor) bool {
	o0 := uintptr(unsafe.Pointer(unsafe.SliceData(out.Data)))
	o1 := o0 + uintptr(len(out.Data))
	for k, in := range ins {
		if len(in.Data) == 0 {
			continue
		}
		i0 := uintptr(unsafe.Pointer(unsafe.SliceData(in.Data)))
		i1 := i0 + uintptr(len(in.Data))
		if i0 >= o1 || o0 >= i1 {
			continue
		}
		if !(p.ins[k].flat && p.ins[k].dt == tensor.F32 && i0 == o0 && i1 == o1) {
			return false
		}
	}
	return true
}

// f32Runs gathers runs of a broadcast F32 input into a float32 tile:
// copies, fills (a broadcast innermost dim) or strided loops.
type f32Runs struct{ dst, src []float32 }

func (f f32Runs) run(j, off, n, step int) {
	d := f.dst[j : j+n]
	switch step {
	case 1:
		copy(d, f.src[off:off+n])
	case 0:
		v := f.src[off]
		for i := range d {
			d[i] = v
		}
	default:
		for i := range d {
			d[i] = f.src[off+i*step]
		}
	}
}

// repeatRuns fills a float32 tile from runs of a repeat input's groups:
// group element j of the walk (a source value) covers tile elements
// [j·rep - skip, (j+1)·rep - skip), clipped to the tile.
type repeatRuns struct {
	dst, src  []float32
	rep, skip int
	rows      *asm.RowKernels
}

func (f repeatRuns) run(j, off, n, step int) {
	i0, i1 := 0, n // the groups wholly inside the tile
	if j*f.rep < f.skip {
		i0 = 1
	}
	if (j+n)*f.rep-f.skip > len(f.dst) {
		i1 = n - 1
	}
	if step == 1 && i0 < i1 {
		f.rows.Repeat(f.dst[(j+i0)*f.rep-f.skip:(j+i1)*f.rep-f.skip], f.src[off+i0:off+i1], f.rep)
		f.fill(j, off, step, 0, i0)
		f.fill(j, off, step, i1, n)
		return
	}
	f.fill(j, off, step, 0, n)
}

// fill sets the tile elements of the run's groups [i0, i1) (j, off and
// step as run's) one by one.
func (f repeatRuns) fill(j, off, step, i0, i1 int) {
	for i := i0; i < i1; i++ {
		v := f.src[off+i*step]
		lo := (j+i)*f.rep - f.skip
		d := f.dst[max(lo, 0):min(lo+f.rep, len(f.dst))]
		for k := range d {
			d[k] = v
		}
	}
}

func b2f32(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

// eval computes step i into slot d.
func (p *elem32Plan) eval(i int, slots [][]float32, d int) {
	st := &p.steps[i]
	y := slots[d]
	a := slots[st.args[0]]
	switch {
	case p.hasUn[i]:
		_ = p.ew.Unary(p.vecUn[i], y, a) // equal lengths: cannot fail
		return
	case p.hasBi[i]:
		_ = p.ew.Binary(p.vecBi[i], y, a, slots[st.args[1]])
		return
	}
	switch st.kind {
	case elemUnary:
		for j, x := range a {
			y[j] = float32(st.f1(float64(x)))
		}
	case elemArith:
		b := slots[st.args[1]]
		for j, x := range a {
			y[j] = float32(st.f2(float64(x), float64(b[j])))
		}
	case elemNot:
		for j, x := range a {
			y[j] = b2f32(x == 0)
		}
	case elemCompare:
		b := slots[st.args[1]]
		switch st.op {
		case graph.OpEqual:
			for j, x := range a {
				y[j] = b2f32(x == b[j])
			}
		case graph.OpLess:
			for j, x := range a {
				y[j] = b2f32(x < b[j])
			}
		case graph.OpLessOrEqual:
			for j, x := range a {
				y[j] = b2f32(x <= b[j])
			}
		case graph.OpGreater:
			for j, x := range a {
				y[j] = b2f32(x > b[j])
			}
		case graph.OpGreaterOrEqual:
			for j, x := range a {
				y[j] = b2f32(x >= b[j])
			}
		}
	case elemAnd:
		b := slots[st.args[1]]
		for j, x := range a {
			y[j] = b2f32(x != 0 && b[j] != 0)
		}
	case elemOr:
		b := slots[st.args[1]]
		for j, x := range a {
			y[j] = b2f32(x != 0 || b[j] != 0)
		}
	case elemXor:
		b := slots[st.args[1]]
		for j, x := range a {
			y[j] = b2f32((x != 0) != (b[j] != 0))
		}
	case elemWhere:
		b, c := slots[st.args[1]], slots[st.args[2]]
		for j, x := range a {
			if x != 0 {
				y[j] = b[j]
			} else {
				y[j] = c[j]
			}
		}
	case elemCast:
		if st.dt == tensor.Bool {
			for j, x := range a {
				y[j] = b2f32(x != 0)
			}
		} else {
			copy(y, a)
		}
	}
}
