package ops

import (
	"errors"
	"math"
	"sync"
	"unsafe"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// Fast F32 elementwise kernels on ops/asm's vectorised primitives (AVX2
// assembly where the CPU has it, the Go twins elsewhere): the unary
// activations and transcendental functions, and + - × ÷ max min for the
// broadcasts that matter in practice — same shape, a scalar on either
// side, a row vector (x [..., n] op y [n], either side) and one value
// per plane (x [N, C, H, W] op y [N, C, 1, 1] or [C, 1, 1]: a value per
// run of trailing dims, either side, through the vector×scalar kernels).
// Other broadcasts and dtypes return a nil kernel and run the reference. Large
// tensors are split over the executor's workers. All are in-place safe:
// the output may be input 0 (or the other full-size input).

// The ops with an asm kernel register prepareVecUnary and
// prepareVecBinary from the elementwise table (elementwise.go); Clip's
// kernel is the one-pass clamp (or one vector×scalar kernel where a
// bound is infinite).
func init() {
	RegisterFast(graph.OpClip, withVec(prepareVecClip))
}

// clipF32 sets dst[i] = min(max(x[i], lo), hi), as the reference's Go
// min and max do (NaN in x or a NaN bound gives NaN; max(-0, +0) is +0),
// through asm.EwKernels.Clamp; an infinite bound on the open side is
// skipped (max(x, -Inf) and min(x, +Inf) are x, bit for bit). dst may be
// x.
func clipF32(k *asm.EwKernels, dst, x []float32, lo, hi float32) error {
	doLo, doHi := !math.IsInf(float64(lo), -1), !math.IsInf(float64(hi), 1)
	switch {
	case doLo && doHi:
		return k.Clamp(dst, x, lo, hi)
	case doLo:
		return k.BinaryScalar(asm.EwMax, dst, x, lo)
	case doHi:
		return k.BinaryScalar(asm.EwMin, dst, x, hi)
	}
	if len(dst) != len(x) {
		return k.BinaryScalar(asm.EwMax, dst, x, lo) // reports the lengths
	}
	if len(x) > 0 && &dst[0] != &x[0] {
		if !vecAliasOK(dst, x) {
			return asm.ErrEwAlias
		}
		copy(dst, x)
	}
	return nil
}

// prepareVecClip is F32 Clip over clipF32, split over the workers.
func prepareVecClip(n *graph.Node, env Env, k *asm.EwKernels) (Kernel, error) {
	if n.Op != graph.OpClip || !vecIsF32(n) || len(n.Inputs) != 1 || !n.Inputs[0].Shape.Equal(n.Shape) {
		return nil, nil
	}
	lo, hi := n.Attrs.Min, n.Attrs.Max
	if lo > hi {
		return nil, nil // the reference reports it
	}
	return vecUnaryKernel(n, env, vecGrainCheap, func(dst, x []float32) error { return clipF32(k, dst, x, lo, hi) }), nil
}

// vecUnaryKernel runs f, a one-input F32 function, over n's elements
// split over the workers in chunks of at least grain elements.
func vecUnaryKernel(n *graph.Node, env Env, grain int, f func(dst, x []float32) error) Kernel {
	size := n.Shape.NumElements()
	p := newVecPlan(env, (size+vecUnit-1)/vecUnit, grain/vecUnit, func(p *vecPlan, lo, hi int) error {
		a, b := vecSpan(lo, hi, size)
		return f(p.dst[a:b], p.x[a:b])
	})
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		x, dst := tensor.Elems[float32](ins[0].Data), tensor.Elems[float32](out.Data)
		if !vecAliasOK(dst, x) {
			return errVecOverlap
		}
		return p.run(dst, x, nil)
	})
}

// vecPrepare prepares a fast kernel with a given variant (tests run every
// variant), or returns nil when it does not take the node.
type vecPrepare func(n *graph.Node, env Env, k *asm.EwKernels) (Kernel, error)

// withVec binds an vecPrepare to the variant dispatch chose.
func withVec(p vecPrepare) FastPrepare {
	return func(n *graph.Node, env Env) (Kernel, string, error) {
		k := asm.BestEw()
		kern, err := p(n, env, k)
		if kern == nil || err != nil {
			return nil, "", err
		}
		return kern, k.Name, nil
	}
}

// Work per chunk handed to a worker, in elements: enough that waking it
// pays off (64 KiB of output for the transcendental functions, 256 KiB
// for the cheap ones, which run at memory speed).
const (
	vecGrainMath  = 1 << 14
	vecGrainCheap = 1 << 16
	vecUnit       = 64 // elements per scheduling unit: whole cache lines and vector blocks
)

// vecIsF32 reports whether a node computes F32 from F32 inputs.
func vecIsF32(n *graph.Node) bool {
	if n.DType != tensor.F32 {
		return false
	}
	for _, in := range n.Inputs {
		if in.DType != tensor.F32 {
			return false
		}
	}
	return true
}

// errVecOverlap: the executor only ever aliases an output with a whole
// input; anything else would make the kernels read what they wrote.
var errVecOverlap = errors.New("output partly overlaps an input")

// vecAliasOK reports whether out is either exactly in (same start, same
// length) or disjoint from it.
func vecAliasOK(out, in []float32) bool {
	if len(out) == 0 || len(in) == 0 {
		return true
	}
	o, i := uintptr(unsafe.Pointer(&out[0])), uintptr(unsafe.Pointer(&in[0]))
	if o == i && len(out) == len(in) {
		return true
	}
	return o+4*uintptr(len(out)) <= i || i+4*uintptr(len(in)) <= o
}

// vecPlan runs a prepared body over units (elements in blocks of vecUnit,
// or rows) on the executor's workers; the operands of the current run
// live in the plan, so running does not allocate. A prepared kernel is
// not run concurrently with itself.
type vecPlan struct {
	env   Env
	units int
	grain int // units per chunk, at least
	work  func(lo, hi int) error
	body  func(lo, hi int)

	x, y, dst []float32
	mu        sync.Mutex
	err       error
}

func newVecPlan(env Env, units, grain int, work func(p *vecPlan, lo, hi int) error) *vecPlan {
	p := &vecPlan{env: env, units: units, grain: max(grain, 1)}
	p.work = func(lo, hi int) error { return work(p, lo, hi) }
	p.body = func(lo, hi int) {
		if err := p.work(lo, hi); err != nil {
			p.mu.Lock()
			if p.err == nil {
				p.err = err
			}
			p.mu.Unlock()
		}
	}
	return p
}

// run sets the operands and does every unit.
func (p *vecPlan) run(dst, x, y []float32) error {
	p.dst, p.x, p.y, p.err = dst, x, y, nil
	if p.units <= p.grain || p.env.Threads <= 1 || p.env.For == nil {
		p.err = p.work(0, p.units)
	} else {
		p.env.For(p.units, p.grain, p.body)
	}
	err := p.err
	p.dst, p.x, p.y, p.err = nil, nil, nil, nil
	return err
}

// vecSpan converts a range of units of vecUnit elements to elements.
func vecSpan(lo, hi, n int) (int, int) { return lo * vecUnit, min(hi*vecUnit, n) }

func prepareVecUnary(n *graph.Node, env Env, k *asm.EwKernels) (Kernel, error) {
	op, ok := vecUnaryOf(n.Op)
	if !ok || !vecIsF32(n) || len(n.Inputs) != 1 || !n.Inputs[0].Shape.Equal(n.Shape) {
		return nil, nil
	}
	grain := vecGrainMath
	if op == asm.EwRelu || op == asm.EwNeg || op == asm.EwAbs {
		grain = vecGrainCheap
	}
	return vecUnaryKernel(n, env, grain, func(dst, x []float32) error { return k.Unary(op, dst, x) }), nil
}

// The broadcast forms prepareVecBinary takes.
const (
	vecSame    = iota // x, y, out all have the output's elements
	vecScalarY        // y is one element
	vecScalarX        // x is one element
	vecRowY           // y is one row of x: x [..., w], y [w]
	vecRowX           // x is one row of y
	vecPlaneY         // y is one value per plane of x: y's dims are 1 over a suffix of x's (a per-channel scale over NCHW)
	vecPlaneX         // x is one value per plane of y
)

// vecPlanes describes the plane broadcast of a small operand s over the
// output shape out: s's dims (aligned to out's) are 1 over the longest
// suffix of out, whose elements make a plane of inner elements; plane p
// takes s's element idx[p]. ok is false when the suffix is empty or the
// planes are shorter than vecRowMin.
func vecPlanes(s, out tensor.Shape) (inner int, idx []int32, ok bool) {
	r := out.Rank()
	if s.Rank() > r || out.NumElements() == 0 {
		return 0, nil, false
	}
	al := make(tensor.Shape, r) // s aligned to out
	for i := range r {
		al[i] = 1
		if j := i - (r - s.Rank()); j >= 0 {
			al[i] = s[j]
		}
	}
	k := r // out[k:] is the plane
	inner = 1
	for k > 0 && al[k-1] == 1 {
		k--
		inner *= out[k]
	}
	if k == r || inner < vecRowMin || int64(s.NumElements()) > math.MaxInt32 {
		return 0, nil, false
	}
	strides := tensor.BroadcastStrides(s, out)
	idx = make([]int32, out.NumElements()/inner)
	for p := range idx {
		off, q := 0, p
		for d := k - 1; d >= 0; d-- {
			off += (q % out[d]) * strides[d]
			q /= out[d]
		}
		idx[p] = int32(off)
	}
	return inner, idx, true
}

// vecRowMin is the shortest row worth the row-vector path: below it the
// per-row call costs more than the reference's broadcast loop.
const vecRowMin = 8

// vecBinaryForm classifies a binary node's broadcast, or returns -1.
func vecBinaryForm(n *graph.Node) int {
	xs, ys, out := n.Inputs[0].Shape, n.Inputs[1].Shape, n.Shape
	nx, ny, no := xs.NumElements(), ys.NumElements(), out.NumElements()
	switch {
	case nx == no && ny == no:
		return vecSame
	case nx == no && ny == 1:
		return vecScalarY
	case ny == no && nx == 1:
		return vecScalarX
	}
	if out.Rank() < 2 {
		return -1
	}
	w := out[out.Rank()-1]
	isRow := func(s tensor.Shape) bool { // [..1.., w]
		return s.Rank() >= 1 && s[s.Rank()-1] == w && s.NumElements() == w
	}
	switch {
	case w < vecRowMin:
	case nx == no && isRow(ys):
		return vecRowY
	case ny == no && isRow(xs):
		return vecRowX
	}
	if _, _, ok := vecPlanes(ys, out); ok && nx == no {
		return vecPlaneY
	}
	if _, _, ok := vecPlanes(xs, out); ok && ny == no {
		return vecPlaneX
	}
	return -1
}

func prepareVecBinary(n *graph.Node, env Env, k *asm.EwKernels) (Kernel, error) {
	op, ok := vecBinaryOf(n.Op)
	if !ok || !vecIsF32(n) || len(n.Inputs) != 2 {
		return nil, nil
	}
	if want, err := tensor.Broadcast(n.Inputs[0].Shape, n.Inputs[1].Shape); err != nil || !want.Equal(n.Shape) {
		return nil, nil // the reference reports it
	}
	form := vecBinaryForm(n)
	if form < 0 {
		return nil, nil
	}
	size := n.Shape.NumElements()
	var p *vecPlan
	switch form {
	case vecSame, vecScalarX, vecScalarY:
		p = newVecPlan(env, (size+vecUnit-1)/vecUnit, vecGrainCheap/vecUnit, func(p *vecPlan, lo, hi int) error {
			a, b := vecSpan(lo, hi, size)
			switch form {
			case vecScalarY:
				return k.BinaryScalar(op, p.dst[a:b], p.x[a:b], p.y[0])
			case vecScalarX:
				return k.ScalarBinary(op, p.dst[a:b], p.x[0], p.y[a:b])
			}
			return k.Binary(op, p.dst[a:b], p.x[a:b], p.y[a:b])
		})
	case vecPlaneY, vecPlaneX:
		small := n.Inputs[1].Shape
		if form == vecPlaneX {
			small = n.Inputs[0].Shape
		}
		inner, idx, _ := vecPlanes(small, n.Shape)
		p = newVecPlan(env, len(idx), vecGrainCheap/inner, func(p *vecPlan, lo, hi int) error {
			for q := lo; q < hi; q++ {
				a, b := q*inner, (q+1)*inner
				var err error
				if form == vecPlaneY {
					err = k.BinaryScalar(op, p.dst[a:b], p.x[a:b], p.y[idx[q]])
				} else {
					err = k.ScalarBinary(op, p.dst[a:b], p.x[idx[q]], p.y[a:b])
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	default:
		w := n.Shape[n.Shape.Rank()-1]
		p = newVecPlan(env, size/w, vecGrainCheap/w, func(p *vecPlan, lo, hi int) error {
			for r := lo; r < hi; r++ {
				d := p.dst[r*w : (r+1)*w]
				var err error
				if form == vecRowY {
					err = k.Binary(op, d, p.x[r*w:(r+1)*w], p.y)
				} else {
					err = k.Binary(op, d, p.x, p.y[r*w:(r+1)*w])
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		x, y := tensor.Elems[float32](ins[0].Data), tensor.Elems[float32](ins[1].Data)
		dst := tensor.Elems[float32](out.Data)
		if !vecAliasOK(dst, x) || !vecAliasOK(dst, y) {
			return errVecOverlap
		}
		return p.run(dst, x, y)
	}), nil
}
