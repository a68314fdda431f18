package ops

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// A per-channel affine map, with or without a Relu after it: y = x·a + b
// (then max(y, 0)) with x the size of the output and a, b constant over
// each plane (per channel of NCHW, or scalars). A BatchNormalization
// before a Relu exports as such a program (a pre-activation network such
// as DenseNet has one before every convolution, where the Relu keeps it
// out of the convolution's weights). The tile interpreter fills a tile of
// each broadcast operand and runs each instruction over 256 floats at a
// time, about 0.6 ns a float on DenseNet's 16² planes; this runs each
// plane's run as the elementwise kernels' vector-scalar multiply and add
// (and Relu), a range of planes in one asm.EwKernels.AffinePlanes call,
// straight into the output: the same operations on the same values, so
// the same bits.

// affineMinPlane is the least plane the path takes: with a vector affine
// kernel 8 floats (DenseNet's 2×2 planes, 1024 channels, ran at 3.9 µs
// against the tiled loop's 3.5-5.3), without one 64 (three elementwise
// calls per plane cost the 2×2 planes ten times the tiled loop's time).
func (p *elem32Plan) affineMinPlane() int {
	if p.ew.AffineVector() {
		return 8
	}
	return 64
}

// elemAffine is the affine plan of an elem32Plan (nil where the program
// is not one).
type elemAffine struct {
	x, a, b int // the input slots of x and of the per-plane operands
	plane   int // floats a value of a and b covers (the output's inner dims)
	relu    bool
	aOff    []int // per plane: the offsets of its a and b values in their inputs
	bOff    []int
}

// affineOf returns p's affine plan, or nil: steps mul(x, a), add(·, b)
// and an optional relu, in that order and reading each other, x a flat
// F32 input, a and b F32 inputs that are scalars or repeated over whole
// planes of one size, and an F32 output.
func (p *elem32Plan) affineOf() *elemAffine {
	st := p.steps
	nin := len(p.ins)
	if p.outDT != tensor.F32 || len(st) < 2 || len(st) > 3 || st[0].op != graph.OpMul || st[1].op != graph.OpAdd ||
		len(st[0].args) != 2 || len(st[1].args) != 2 || p.result != nin+len(st)-1 {
		return nil
	}
	if len(st) == 3 && (st[2].op != graph.OpRelu || len(st[2].args) != 1 || st[2].args[0] != nin+1) {
		return nil
	}
	f := &elemAffine{relu: len(st) == 3}
	switch x, y := st[0].args[0], st[0].args[1]; {
	case x < nin && p.ins[x].flat && !p.ins[y].flat:
		f.x, f.a = x, y
	case y < nin && p.ins[y].flat && x < nin && !p.ins[x].flat:
		f.x, f.a = y, x
	default:
		return nil
	}
	switch x, y := st[1].args[0], st[1].args[1]; {
	case x == nin && y < nin:
		f.b = y
	case y == nin && x < nin:
		f.b = x
	default:
		return nil
	}
	if p.ins[f.x].dt != tensor.F32 || f.b == f.x {
		return nil
	}
	for _, k := range []int{f.a, f.b} {
		in := &p.ins[k]
		switch {
		case in.dt != tensor.F32 || in.flat:
			return nil
		case in.scalar:
		case in.repeat > 0 && (f.plane == 0 || f.plane == in.repeat):
			f.plane = in.repeat
		default:
			return nil
		}
	}
	if f.plane == 0 { // both scalars: one plane
		f.plane = p.n
	}
	if p.n%f.plane != 0 || f.plane < p.affineMinPlane() {
		return nil
	}
	planes := p.n / f.plane
	f.aOff, f.bOff = make([]int, planes), make([]int, planes)
	for q := range planes {
		f.aOff[q], f.bOff[q] = p.ins[f.a].offsetOf(q*f.plane), p.ins[f.b].offsetOf(q*f.plane)
	}
	return f
}

// offsetOf is the offset in input e of the value output element i reads
// (0 for a scalar).
func (e *elemInput) offsetOf(i int) int {
	if e.scalar {
		return 0
	}
	if e.flat {
		return i
	}
	return e.offsetAt(i, make([]int, len(e.shape)))
}

// runAffine computes output elements [lo, hi): a partial plane at either
// end on its own, the whole planes between in one AffinePlanes call with
// their scales and shifts gathered into the worker's scratch.
func (p *elem32Plan) runAffine(s *elem32Scratch, ins []tensor.Tensor, out tensor.Tensor, lo, hi int) {
	f := p.affine
	x, a, b, y := ins[f.x].F32(), ins[f.a].F32(), ins[f.b].F32(), out.F32()
	part := func(i, end int) { // within plane i / f.plane
		q := i / f.plane
		_ = p.ew.AffinePlanes(y[i:end], x[i:end], end-i, a[f.aOff[q]:][:1], b[f.bOff[q]:][:1], f.relu) // lengths match: cannot fail
	}
	if r := lo % f.plane; r != 0 && lo < hi {
		end := min(lo-r+f.plane, hi)
		part(lo, end)
		lo = end
	}
	if q0, q1 := lo/f.plane, hi/f.plane; q1 > q0 {
		as, bs := s.affA[:q1-q0], s.affB[:q1-q0]
		for q := q0; q < q1; q++ {
			as[q-q0], bs[q-q0] = a[f.aOff[q]], b[f.bOff[q]]
		}
		_ = p.ew.AffinePlanes(y[q0*f.plane:q1*f.plane], x[q0*f.plane:q1*f.plane], f.plane, as, bs, f.relu)
		lo = q1 * f.plane
	}
	if lo < hi {
		part(lo, hi)
	}
}
