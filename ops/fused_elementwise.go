package ops

import (
	"fmt"
	"sync/atomic"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// FusedElementwise evaluates its program on tiles of the output: every
// input is gathered (broadcast) into a float64 tile, each instruction
// computes a tile from earlier tiles with its op's reference formula and
// rounds it to its own dtype, and the last tile is stored. Rounding after
// every instruction is exactly what the unfused chain does when it stores
// each intermediate, so the result is bit-identical to the unfused
// reference kernels, without writing any intermediate to memory.
//
// The dtypes are restricted so that float64 holds every value exactly:
// instruction results are F32, F64 or Bool; inputs may also be I8, U8 or
// I32 (read by Cast and comparisons).

func init() {
	Register(Entry{Op: graph.OpFusedElementwise, DTypes: elemInputDTypes,
		Reference: prepareFusedElementwise, InPlace: true, Tol: 2e-6})
	RegisterFast(graph.OpFusedElementwise, prepareFusedElementwiseFast)
}

var (
	elemInputDTypes  = []tensor.DType{tensor.F32, tensor.F64, tensor.Bool, tensor.I8, tensor.U8, tensor.I32}
	elemResultDTypes = []tensor.DType{tensor.F32, tensor.F64, tensor.Bool}
)

func dtypeIn(dt tensor.DType, set []tensor.DType) bool {
	for _, d := range set {
		if d == dt {
			return true
		}
	}
	return false
}

// FusableElementwise reports whether n (an elementwise node) can be an
// instruction of a FusedElementwise program: its op has a formula here and
// its result and operand dtypes are ones the tiles hold exactly.
func FusableElementwise(n *graph.Node) bool {
	if !n.Op.IsElementwise() || !dtypeIn(n.DType, elemResultDTypes) {
		return false
	}
	for _, in := range n.Inputs {
		if !dtypeIn(in.DType, elemInputDTypes) {
			return false
		}
	}
	in := graph.ElemInstrOf(n)
	in.Args = nil
	_, err := elemStepOf(in, []int{0, 0, 0}[:len(n.Inputs)])
	return err == nil
}

// Kinds of elemStep.
const (
	elemUnary   = iota // f1 on a float
	elemNot            // logical not
	elemArith          // f2 on floats
	elemCompare        // cmp on numbers
	elemAnd
	elemOr
	elemXor
	elemWhere
	elemCast
)

// elemStep is one instruction bound to its formula: operands and result
// are slots (inputs first, then instruction results).
type elemStep struct {
	kind int
	op   graph.Op
	args []int
	dt   tensor.DType // result dtype
	f1   func(float64) float64
	f2   func(a, b float64) float64
}

func elemStepOf(in graph.ElemInstr, args []int) (elemStep, error) {
	st := elemStep{op: in.Op, args: args, dt: in.DType}
	if !dtypeIn(in.DType, elemResultDTypes) {
		return st, fmt.Errorf("%v result dtype %v cannot be fused", in.Op, in.DType)
	}
	switch {
	case in.Op == graph.OpNot:
		st.kind = elemNot
	case in.Op.IsUnary():
		if !in.DType.IsFloat() {
			return st, fmt.Errorf("%v on %v cannot be fused", in.Op, in.DType)
		}
		f, err := floatUnaryFunc(&graph.Node{Op: in.Op, Attrs: in.Attrs()})
		if err != nil {
			return st, err
		}
		st.kind, st.f1 = elemUnary, f
	case in.Op.IsCompare():
		st.kind = elemCompare
	case in.Op == graph.OpAnd:
		st.kind = elemAnd
	case in.Op == graph.OpOr:
		st.kind = elemOr
	case in.Op == graph.OpXor:
		st.kind = elemXor
	case in.Op.IsBinary():
		f, ok := floatBinaryFunc(in.Op)
		if !ok || !in.DType.IsFloat() {
			return st, fmt.Errorf("%v on %v cannot be fused", in.Op, in.DType)
		}
		st.kind, st.f2 = elemArith, f
	case in.Op == graph.OpWhere:
		st.kind = elemWhere
	case in.Op == graph.OpCast:
		st.kind = elemCast
	default:
		return st, fmt.Errorf("%v is not elementwise", in.Op)
	}
	return st, nil
}

// elemInput is how one input is read: its dtype and its strides over the
// output's dims (0 along broadcast dims), those dims coalesced for it
// (coalesceDims: a per-channel [C,1,1] operand of a [N,C,H,W] output
// reads runs of H·W copies of one element, not W).
type elemInput struct {
	dt      tensor.DType
	shape   []int
	strides []int
	flat    bool // same element count as the output: offsets are the output's
	scalar  bool // one element
	// repeat > 1: the input's innermost coalesced dim is broadcast and the
	// one before it is not (a per-channel vector over NCHW: each value
	// repeated over a plane); groups walks the input without that dim.
	repeat int
	groups *elemInput
}

// elemPlan is a prepared program; it holds no per-run state.
type elemPlan struct {
	shape  []int
	n      int
	ins    []elemInput
	steps  []elemStep
	result int // slot of the stored tile
	outDT  tensor.DType
}

// elemTile is the tile length: slots of this many float64 stay in L1.
const elemTile = 256

// elemScratch is one worker's tiles and index scratch.
type elemScratch struct {
	slots [][]float64
	idx   []int
}

func newElemPlan(n *graph.Node) (*elemPlan, error) {
	prog := n.Attrs.Program
	if len(prog) == 0 || len(n.Inputs) == 0 {
		return nil, fmt.Errorf("empty program or no inputs")
	}
	shapes := make([]tensor.Shape, len(n.Inputs))
	for i, in := range n.Inputs {
		shapes[i] = in.Shape
	}
	out, err := tensor.Broadcast(shapes...)
	if err != nil || !out.Equal(n.Shape) {
		return nil, fmt.Errorf("result shape %v, want the broadcast %v (%v)", n.Shape, out, err)
	}
	p := &elemPlan{shape: out.Clone(), n: out.NumElements(), outDT: n.DType}
	for i, in := range n.Inputs {
		if !dtypeIn(in.DType, elemInputDTypes) {
			return nil, fmt.Errorf("input %d dtype %v cannot be fused", i, in.DType)
		}
		k := in.Shape.NumElements()
		e := elemInput{dt: in.DType, flat: k == p.n, scalar: k == 1}
		if !e.flat && !e.scalar {
			dims, st := coalesceDims(out, tensor.BroadcastStrides(in.Shape, out))
			e.shape, e.strides = dims, st[0]
			if r := len(dims); r >= 2 && e.strides[r-1] == 0 && e.strides[r-2] != 0 && dims[r-1] > 1 {
				e.repeat = dims[r-1]
				e.groups = &elemInput{dt: e.dt, shape: dims[:r-1], strides: e.strides[:r-1]}
			}
		}
		p.ins = append(p.ins, e)
	}
	nin := len(n.Inputs)
	for i, in := range prog {
		args := make([]int, len(in.Args))
		for j, r := range in.Args {
			switch {
			case r.Instr && r.Index >= 0 && r.Index < i:
				args[j] = nin + r.Index
			case !r.Instr && r.Index >= 0 && r.Index < nin:
				args[j] = r.Index
			default:
				return nil, fmt.Errorf("instruction %d: bad operand %+v", i, r)
			}
		}
		st, err := elemStepOf(in, args)
		if err != nil {
			return nil, fmt.Errorf("instruction %d: %w", i, err)
		}
		p.steps = append(p.steps, st)
	}
	p.result = nin + len(prog) - 1
	if last := prog[len(prog)-1].DType; last != n.DType {
		return nil, fmt.Errorf("program result %v, node %v", last, n.DType)
	}
	return p, nil
}

func (p *elemPlan) newScratch() *elemScratch {
	s := &elemScratch{slots: make([][]float64, len(p.ins)+len(p.steps)), idx: make([]int, len(p.shape))}
	for i := range s.slots {
		s.slots[i] = make([]float64, elemTile)
	}
	return s
}

// run evaluates output elements [lo, hi).
func (p *elemPlan) run(s *elemScratch, ins []tensor.Tensor, out tensor.Tensor, lo, hi int) {
	for t0 := lo; t0 < hi; t0 += elemTile {
		m := min(elemTile, hi-t0)
		for k := range p.ins {
			p.load(s, k, ins[k], t0, m)
		}
		for i := range p.steps {
			p.steps[i].eval(s.slots, len(p.ins)+i, m)
		}
		storeTile(out, s.slots[p.result][:m], t0)
	}
}

// load gathers input k's elements for output elements [t0, t0+m).
func (p *elemPlan) load(s *elemScratch, k int, in tensor.Tensor, t0, m int) {
	loadInput(&p.ins[k], s.idx, s.slots[k][:m], in, t0)
}

// loadInput widens input e's elements for output elements [t0,
// t0+len(dst)) into dst; idx is scratch (at least the output's rank).
func loadInput(e *elemInput, idx []int, dst []float64, in tensor.Tensor, t0 int) {
	m := len(dst)
	switch {
	case e.flat:
		loadRun(dst, in, t0, 1)
		return
	case e.scalar:
		loadRun(dst[:1], in, 0, 1)
		for i := 1; i < m; i++ {
			dst[i] = dst[0]
		}
		return
	}
	forRuns(e, idx, t0, m, wideRuns{dst, in})
}

// runSink takes the runs forRuns finds: n elements for the tile's
// elements [j, j+n), from the input's element off by step.
type runSink interface{ run(j, off, n, step int) }

// wideRuns widens runs into a float64 tile.
type wideRuns struct {
	dst []float64
	in  tensor.Tensor
}

func (w wideRuns) run(j, off, n, step int) { loadRun(w.dst[j:j+n], w.in, off, step) }

// forRuns walks broadcast input e (neither flat nor scalar) over output
// elements [t0, t0+m) in runs along its innermost coalesced dim; idx is
// scratch (at least its rank). Generic over the sink so that the calls
// are direct and nothing escapes.
func forRuns[S runSink](e *elemInput, idx []int, t0, m int, sink S) {
	shape := e.shape
	r := len(shape)
	off := e.offsetAt(t0, idx)
	inner, step := shape[r-1], e.strides[r-1]
	for j := 0; j < m; {
		run := min(m-j, inner-idx[r-1])
		sink.run(j, off, run, step)
		j += run
		off += run * step
		idx[r-1] += run
		if idx[r-1] < inner {
			continue
		}
		idx[r-1] = 0
		off -= inner * step
		for d := r - 2; d >= 0; d-- {
			idx[d]++
			off += e.strides[d]
			if idx[d] < shape[d] {
				break
			}
			off -= shape[d] * e.strides[d]
			idx[d] = 0
		}
	}
}

// offsetAt returns the offset in broadcast input e (neither flat nor
// scalar) of the value output element i reads, and sets idx (at least
// e's rank) to i's index over e's coalesced dims.
func (e *elemInput) offsetAt(i int, idx []int) int {
	off := 0
	for d := len(e.shape) - 1; d >= 0; d-- {
		idx[d] = i % e.shape[d]
		i /= e.shape[d]
		off += idx[d] * e.strides[d]
	}
	return off
}

// loadRun widens len(dst) elements of in, from element off by step.
func loadRun(dst []float64, in tensor.Tensor, off, step int) {
	switch in.DType {
	case tensor.F32:
		loadStrided(dst, tensor.Elems[float32](in.Data), off, step)
	case tensor.F64:
		loadStrided(dst, tensor.Elems[float64](in.Data), off, step)
	case tensor.I8:
		loadStrided(dst, tensor.Elems[int8](in.Data), off, step)
	case tensor.U8:
		loadStrided(dst, in.Data, off, step)
	case tensor.I32:
		loadStrided(dst, tensor.Elems[int32](in.Data), off, step)
	case tensor.Bool:
		for i := range dst {
			dst[i] = b2f(in.Data[off+i*step] != 0) // any non-zero byte is true
		}
	}
}

func loadStrided[T float32 | float64 | int8 | uint8 | int32](dst []float64, src []T, off, step int) {
	if step == 1 {
		for i, v := range src[off : off+len(dst)] {
			dst[i] = float64(v)
		}
		return
	}
	for i := range dst {
		dst[i] = float64(src[off+i*step])
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// storeTile writes a tile of results (already rounded to out's dtype).
func storeTile(out tensor.Tensor, v []float64, t0 int) {
	switch out.DType {
	case tensor.F32:
		d := tensor.Elems[float32](out.Data)[t0 : t0+len(v)]
		for i, x := range v {
			d[i] = float32(x)
		}
	case tensor.F64:
		copy(tensor.Elems[float64](out.Data)[t0:t0+len(v)], v)
	case tensor.Bool:
		d := out.Data[t0 : t0+len(v)]
		for i, x := range v {
			d[i] = boolByte(x != 0)
		}
	}
}

// round stores v as the dtype would: F32 rounds once to nearest even.
func roundTile(v []float64, dt tensor.DType) {
	if dt == tensor.F32 {
		for i, x := range v {
			v[i] = float64(float32(x))
		}
	}
}

// eval computes the step's tile into slot dst.
func (st *elemStep) eval(slots [][]float64, dst, m int) {
	y := slots[dst][:m]
	a := slots[st.args[0]][:m]
	switch st.kind {
	case elemUnary:
		for i, x := range a {
			y[i] = st.f1(x)
		}
		roundTile(y, st.dt)
	case elemNot:
		for i, x := range a {
			y[i] = b2f(x == 0)
		}
	case elemArith:
		b := slots[st.args[1]][:m]
		for i, x := range a {
			y[i] = st.f2(x, b[i])
		}
		roundTile(y, st.dt)
	case elemCompare:
		compareTile(st.op, y, a, slots[st.args[1]][:m])
	case elemAnd:
		b := slots[st.args[1]][:m]
		for i, x := range a {
			y[i] = b2f(x != 0 && b[i] != 0)
		}
	case elemOr:
		b := slots[st.args[1]][:m]
		for i, x := range a {
			y[i] = b2f(x != 0 || b[i] != 0)
		}
	case elemXor:
		b := slots[st.args[1]][:m]
		for i, x := range a {
			y[i] = b2f((x != 0) != (b[i] != 0))
		}
	case elemWhere:
		b, c := slots[st.args[1]][:m], slots[st.args[2]][:m]
		for i, x := range a {
			if x != 0 {
				y[i] = b[i]
			} else {
				y[i] = c[i]
			}
		}
	case elemCast:
		if st.dt == tensor.Bool {
			for i, x := range a {
				y[i] = b2f(x != 0) // NaN != 0: true, as tensor.Convert
			}
			return
		}
		copy(y, a)
		roundTile(y, st.dt)
	}
}

// compareTile compares exactly-held values; NaN compares false.
func compareTile(op graph.Op, y, a, b []float64) {
	switch op {
	case graph.OpEqual:
		for i, x := range a {
			y[i] = b2f(x == b[i])
		}
	case graph.OpLess:
		for i, x := range a {
			y[i] = b2f(x < b[i])
		}
	case graph.OpLessOrEqual:
		for i, x := range a {
			y[i] = b2f(x <= b[i])
		}
	case graph.OpGreater:
		for i, x := range a {
			y[i] = b2f(x > b[i])
		}
	case graph.OpGreaterOrEqual:
		for i, x := range a {
			y[i] = b2f(x >= b[i])
		}
	}
}

func prepareFusedElementwise(n *graph.Node) (Kernel, error) {
	p, err := newElemPlan(n)
	if err != nil {
		return nil, err
	}
	s := p.newScratch()
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		p.run(s, ins, out, 0, p.n)
		return nil
	}), nil
}

// elemGrain is the fewest elements worth giving a worker.
const elemGrain = 1 << 14

// prepareFusedElementwiseFast runs F32 programs on the vectorised float32
// tiles; others, when large enough, split the reference evaluation over
// the workers, each with its own tiles.
func prepareFusedElementwiseFast(n *graph.Node, env Env) (Kernel, string, error) {
	p, err := newElemPlan(n)
	if err != nil {
		return nil, "", nil // the reference reports it
	}
	workers := min(max(env.Threads, 1), (p.n+elemGrain-1)/elemGrain)
	if q := newElem32Plan(p); q != nil {
		scratch := make([]*elem32Scratch, max(workers, 1))
		for i := range scratch {
			scratch[i] = q.newScratch()
		}
		run := func(w int, ins []tensor.Tensor, out tensor.Tensor, lo, hi int) { q.run(scratch[w], ins, out, lo, hi) }
		return sharedRanges(n, env, p.n, len(scratch), run), "ew-" + q.ew.Name, nil
	}
	if workers <= 1 {
		return nil, "", nil
	}
	scratch := make([]*elemScratch, workers)
	for i := range scratch {
		scratch[i] = p.newScratch()
	}
	run := func(w int, ins []tensor.Tensor, out tensor.Tensor, lo, hi int) { p.run(scratch[w], ins, out, lo, hi) }
	return sharedRanges(n, env, p.n, workers, run), "go-tiled", nil
}

// sharedRanges is a kernel running run over [0, total) on workers
// workers, which take ranges of whole tiles (about four per worker) as
// they free up, so a worker the OS delays holds up no fixed share. run
// gets the worker's index for its scratch.
func sharedRanges(n *graph.Node, env Env, total, workers int, run func(w int, ins []tensor.Tensor, out tensor.Tensor, lo, hi int)) Kernel {
	per := (total + 4*workers - 1) / (4 * workers)
	per = max(elemTile, (per+elemTile-1)/elemTile*elemTile)
	var ins []tensor.Tensor
	var out tensor.Tensor
	var next atomic.Int64
	body := func(lo, hi int) {
		for w := lo; w < hi; w++ {
			for lo := int(next.Add(int64(per))) - per; lo < total; lo = int(next.Add(int64(per))) - per {
				run(w, ins, out, lo, min(total, lo+per))
			}
		}
	}
	return sizeChecked(n, func(in []tensor.Tensor, o tensor.Tensor) error {
		ins, out = in, o
		next.Store(0)
		if workers == 1 {
			body(0, 1)
		} else {
			env.For(workers, 1, body)
		}
		ins, out = nil, tensor.Tensor{}
		return nil
	})
}
