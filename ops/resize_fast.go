package ops

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// The fast F32 Resize covers what upsampling and segmentation models run:
// nearest or linear over the last two axes of a tensor whose other axes
// copy through (NCHW), no extrapolated coordinates. Taps come from the
// same plan-time tables as the reference (kdesc.ResizeTaps), narrowed to int32
// indices and float32 weights, so no output element divides or rounds.
// Work is split into one task per worker over the output rows of all
// planes. A linear 2× whose horizontal taps pair up (half_pixel,
// pytorch_half_pixel) runs vertical pass first, both passes in registers
// (BlendLerp2): each output value is written once, nothing in between.
// Other linear tasks run bands of output rows: a band's source rows are
// interpolated horizontally into the task's buffer (each once, which
// pays where many output rows share them), then two of them blended per
// output row in one BlendRows call for the band; up to 2× (where the
// bands save little) and downsampling (where they would interpolate rows
// no output reads) run vertical pass first in registers (BlendTaps). Either way a row of a few hundred values costs
// no call of its own.

func init() {
	RegisterFast(graph.OpResize, func(n *graph.Node, env Env) (Kernel, string, error) {
		k, err := prepareResizeFast(n, env)
		return k, "rows", err
	})
}

type resizeFast struct {
	planes, h, w, oh, ow int
	nearest              bool
	yi0, yi1, xi0, xi1   []int32 // taps (nearest: yi0, xi0 only)
	wy0, wy1, wx0, wx1   []float32
	repeat               int // nearest: every input column repeated this often, or 0
	// pairs: linear 2× whose inner outputs pair up between neighbouring
	// inputs with weights (pa, pb) and (pb, pa) (half_pixel and
	// pytorch_half_pixel: 0.75, 0.25), run by the Lerp2 row kernel.
	pairs  bool
	pa, pb float32
	ends   asm.Lerp2Ends // pairs: the taps of each row's first and last output
	// xtaps: the columns' taps for the gather kernel (linear, not pairs).
	xtaps *asm.Taps
	// fusedTaps: rows run vertical pass first, both passes in registers
	// (BlendTaps; see newResizeFast).
	fusedTaps bool
	tasks     []resizeTask
	bandRows  int       // source rows a task's buffer holds (linear)
	x, y      []float32 // the current run's operands
	env       Env
	body      func(lo, hi int)
	rows      *asm.RowKernels // Repeat, Lerp2 and the vertical Blend
}

// resizeTask is one worker's buffer of horizontally interpolated source
// rows (linear): bandRows rows of ow values.
type resizeTask struct {
	buf []float32
}

// resizeBandBytes bounds a task's buffer of interpolated source rows: it
// stays in the core's L2 cache while the band's outputs are blended from
// it. A variable so that tests can cut planes into many bands.
var resizeBandBytes = 64 << 10

// prepareResizeFast returns nil (no error) for nodes it does not take.
func prepareResizeFast(n *graph.Node, env Env) (Kernel, error) {
	f, err := newResizeFast(n, env)
	if f == nil {
		return nil, err
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		f.x, f.y = ins[0].F32(), out.F32()
		f.env.For(len(f.tasks), 1, f.body)
		return nil
	}, nil
}

// newResizeFast plans the fast kernel, or returns nil (no error) for
// nodes it does not take.
func newResizeFast(n *graph.Node, env Env) (*resizeFast, error) {
	if n.DType != tensor.F32 || n.Inputs[0].DType != tensor.F32 || n.Shape.Rank() < 2 || n.Shape.NumElements() == 0 {
		return nil, nil
	}
	p, err := newResizePlan(n)
	if err != nil {
		return nil, err
	}
	r := len(p.axes)
	for i, a := range p.axes {
		if i < r-2 && !a.Identity || a.Outside != nil || a.Taps > 2 {
			return nil, nil
		}
	}
	ay, ax := p.axes[r-2], p.axes[r-1]
	f := &resizeFast{planes: p.shape[:r-2].NumElements(), h: ay.In, w: ax.In, oh: ay.Out, ow: ax.Out,
		nearest: n.Attrs.Resize.Mode == graph.ResizeNearest, env: env, rows: asm.BestRows()}
	f.yi0, f.yi1, f.wy0, f.wy1 = splitTaps(ay)
	f.xi0, f.xi1, f.wx0, f.wx1 = splitTaps(ax)
	if f.nearest && f.ow%f.w == 0 {
		f.repeat = f.ow / f.w
		for o, i := range f.xi0 {
			if int(i) != o/f.repeat {
				f.repeat = 0
				break
			}
		}
	}
	f.pairs, f.pa, f.pb = lerpPairs(f.w, f.ow, f.xi0, f.xi1, f.wx0, f.wx1)
	if f.pairs {
		for e, o := range [2]int{0, f.ow - 1} {
			f.ends.I[2*e], f.ends.I[2*e+1] = f.xi0[o], f.xi1[o]
			f.ends.W[2*e], f.ends.W[2*e+1] = f.wx0[o], f.wx1[o]
		}
	}
	if f.xi1 != nil && !f.pairs {
		if f.xtaps, err = asm.NewTaps(f.xi0, f.xi1, f.wx0, f.wx1, f.w); err != nil {
			return nil, err
		}
	}
	// Vertical pass first where a source row serves at most two output
	// rows: interpolating every source row horizontally first costs as
	// much as the output then (2× upsampling) or does work for rows no
	// output reads (downsampling). Larger factors keep the bands, which
	// interpolate each source row once for all the output rows that
	// share it. Measured when chosen (thread CPU time, interleaved
	// medians; the window kernel has since made the fused 2× faster
	// still): fused 2× align_corners 0.72 ms against 1.13, 2×
	// downsampling 0.24 against 0.40; 3× 0.19 against 0.17, 8× 0.23
	// against 0.12.
	f.fusedTaps = f.xtaps != nil && f.yi1 != nil && f.oh <= 2*f.h && f.rows.BlendTapsVector(f.xtaps)
	f.tasks = make([]resizeTask, max(env.Threads, 1))
	// Two rows at least: one output row's taps.
	f.bandRows = min(max(resizeBandBytes/(4*f.ow), 2), f.h)
	for i := range f.tasks {
		if !f.nearest && f.yi1 != nil && !f.pairs {
			f.tasks[i].buf = make([]float32, f.bandRows*f.ow)
		}
	}
	f.body = f.runTasks
	return f, nil
}

// splitTaps narrows an axis's one or two taps per output to int32
// indices and float32 weights.
func splitTaps(a kdesc.ResizeAxis) (i0, i1 []int32, w0, w1 []float32) {
	i0, w0 = make([]int32, a.Out), make([]float32, a.Out)
	if a.Taps == 2 {
		i1, w1 = make([]int32, a.Out), make([]float32, a.Out)
	}
	for o := range a.Out {
		i0[o], w0[o] = a.Idx[o*a.Taps], float32(a.W[o*a.Taps])
		if a.Taps == 2 {
			i1[o], w1[o] = a.Idx[o*2+1], float32(a.W[o*2+1])
		}
	}
	return i0, i1, w0, w1
}

// lerpPairs reports whether a linear axis from w to ow = 2w samples
// has, for every output o = 2i+1 and 2i+2 with i < w-1, taps i and i+1
// with weights (a, b) and (b, a): what Lerp2 computes. The two end
// outputs (clamped taps) are left to the general loop.
func lerpPairs(w, ow int, x0, x1 []int32, w0, w1 []float32) (ok bool, a, b float32) {
	if x1 == nil || w < 2 || ow != 2*w {
		return false, 0, 0
	}
	a, b = w0[1], w1[1]
	for i := range w - 1 {
		o := 2*i + 1
		if x0[o] != int32(i) || x1[o] != int32(i+1) || x0[o+1] != int32(i) || x1[o+1] != int32(i+1) ||
			w0[o] != a || w1[o] != b || w0[o+1] != b || w1[o+1] != a {
			return false, 0, 0
		}
	}
	return true, a, b
}

// runTasks runs tasks [lo, hi), each over its share of the output rows.
func (f *resizeFast) runTasks(lo, hi int) {
	rows, n := f.planes*f.oh, len(f.tasks)
	for t := lo; t < hi; t++ {
		r0, r1 := rows*t/n, rows*(t+1)/n
		if f.nearest {
			f.nearestRows(r0, r1)
		} else {
			f.linearRows(&f.tasks[t], r0, r1)
		}
	}
}

// nearestRows writes output rows [r0, r1); a row reading the same source
// row as the one before it is a copy of that output row.
func (f *resizeFast) nearestRows(r0, r1 int) {
	for row := r0; row < r1; row++ {
		plane, oy := row/f.oh, row%f.oh
		dst := f.y[row*f.ow : (row+1)*f.ow]
		if row > r0 && oy > 0 && f.yi0[oy] == f.yi0[oy-1] {
			copy(dst, f.y[(row-1)*f.ow:row*f.ow])
			continue
		}
		src := f.x[(plane*f.h+int(f.yi0[oy]))*f.w:][:f.w]
		if f.repeat == 0 {
			for o, i := range f.xi0 {
				dst[o] = src[i]
			}
			continue
		}
		f.rows.Repeat(dst, src, f.repeat)
	}
}

// linearRows writes output rows [r0, r1): the blend of two horizontally
// interpolated source rows, band by band (a run of output rows of one
// plane whose source rows fit the task's buffer). Every tap is read,
// zero weights included, as the reference does.
func (f *resizeFast) linearRows(t *resizeTask, r0, r1 int) {
	if f.yi1 == nil { // the rows copy through (one tap)
		for row := r0; row < r1; row++ {
			plane, oy := row/f.oh, row%f.oh
			f.hrow(f.y[row*f.ow:(row+1)*f.ow], f.x[(plane*f.h+int(f.yi0[oy]))*f.w:][:f.w])
		}
		return
	}
	if f.pairs {
		f.pairRows(r0, r1)
		return
	}
	if f.fusedTaps {
		for row := r0; row < r1; {
			plane, oy := row/f.oh, row%f.oh
			n := min(r1-row, f.oh-oy)
			f.rows.BlendTaps(f.y[row*f.ow:][:n*f.ow], f.x[plane*f.h*f.w:][:f.h*f.w], f.xtaps,
				f.yi0[oy:oy+n], f.yi1[oy:oy+n], f.wy0[oy:oy+n], f.wy1[oy:oy+n])
			row += n
		}
		return
	}
	for row := r0; row < r1; {
		plane, oy := row/f.oh, row%f.oh
		lo, hi := min(f.yi0[oy], f.yi1[oy]), max(f.yi0[oy], f.yi1[oy])
		end := oy + 1 // one past the band's last output row
		for ; end < f.oh && row+end-oy < r1; end++ {
			l, h := min(lo, f.yi0[end], f.yi1[end]), max(hi, f.yi0[end], f.yi1[end])
			if int(h-l) >= f.bandRows {
				break
			}
			lo, hi = l, h
		}
		src := f.x[plane*f.h*f.w:][:f.h*f.w]
		if f.xtaps != nil { // the band's source rows in one call
			nr := int(hi-lo) + 1
			f.rows.LerpTapsRows(t.buf[:nr*f.ow], src[int(lo)*f.w:][:nr*f.w], f.xtaps, nr)
		} else {
			for i := int(lo); i <= int(hi); i++ {
				f.hrow(t.buf[(i-int(lo))*f.ow:][:f.ow], src[i*f.w:][:f.w])
			}
		}
		n := end - oy
		f.rows.BlendRows(f.y[row*f.ow:][:n*f.ow], t.buf[:int(hi-lo+1)*f.ow], f.ow, int(lo),
			f.yi0[oy:end], f.yi1[oy:end], f.wy0[oy:end], f.wy1[oy:end])
		row += n
	}
}

// pairRows writes output rows [r0, r1) of a 2× pairs resize vertical
// pass first, in one pass over each plane's rows: BlendLerp2 blends an
// output row's two source rows and interpolates the blend horizontally
// in registers, the row's two end outputs (clamped taps) from their own
// taps, so each output value is written once and no intermediate row is
// stored.
func (f *resizeFast) pairRows(r0, r1 int) {
	for row := r0; row < r1; {
		plane, oy := row/f.oh, row%f.oh
		n := min(r1-row, f.oh-oy)
		f.rows.BlendLerp2(f.y[row*f.ow:][:n*f.ow], f.x[plane*f.h*f.w:][:f.h*f.w], f.w,
			f.yi0[oy:oy+n], f.yi1[oy:oy+n], f.wy0[oy:oy+n], f.wy1[oy:oy+n], f.pa, f.pb, &f.ends)
		row += n
	}
}

// hrow interpolates source row src horizontally into dst: 2× pairs
// through Lerp2, any other taps through the permute kernel (LerpTaps).
func (f *resizeFast) hrow(dst, src []float32) {
	switch {
	case f.xi1 == nil: // the columns copy through (one tap)
		copy(dst, src)
	case f.pairs:
		f.lerp2Band(dst, src)
	default:
		f.rows.LerpTaps(dst, src, f.xtaps)
	}
}

// lerp2Band interpolates consecutive source rows src (whole rows of w)
// into as many rows of ow = 2w in dst, 2× pairs, with one Lerp2 over
// them as if they were one row: the pairs that straddle two rows land
// exactly on the rows' end outputs (row r's last, row r+1's first),
// whose taps are clamped, and which are then written from their own taps.
func (f *resizeFast) lerp2Band(dst, src []float32) {
	f.rows.Lerp2(dst[1:len(dst)-1], src, f.pa, f.pb)
	x0, x1, w0, w1 := f.xi0, f.xi1, f.wx0, f.wx1
	for r := range len(src) / f.w {
		d, s := dst[r*f.ow:][:f.ow], src[r*f.w:][:f.w]
		for _, o := range [2]int{0, f.ow - 1} {
			d[o] = s[x0[o]]*w0[o] + s[x1[o]]*w1[o]
		}
	}
}
