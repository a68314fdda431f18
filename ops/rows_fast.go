package ops

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// Fast kernels built on ops/asm's row kernels: reductions over a
// contiguous block of axes, softmax and log-softmax along the last axis,
// LayerNorm and RMSNorm rows, GlobalAvgPool and the transpose of 4-byte
// elements. Each first runs the op's reference prepare, so a node the
// reference rejects falls back to it (and its error); shapes the fast
// kernels do not cover return a nil kernel, and the reference runs.

func init() {
	for _, op := range []graph.Op{graph.OpReduceSum, graph.OpReduceMean, graph.OpReduceMax, graph.OpReduceMin} {
		RegisterFast(op, withRows(prepareReduceFast))
	}
	RegisterFast(graph.OpSoftmax, withRows(prepareSoftmaxFast))
	RegisterFast(graph.OpLogSoftmax, withRows(prepareSoftmaxFast))
	RegisterFast(graph.OpLayerNorm, withRows(prepareNormFast))
	RegisterFast(graph.OpRMSNorm, withRows(prepareNormFast))
	RegisterFast(graph.OpInstanceNorm, withRows(prepareInstanceNormFast))
	RegisterFast(graph.OpGlobalAvgPool, withRows(prepareGlobalAvgPoolFast))
	RegisterFast(graph.OpTranspose, withRows(prepareTransposeFast))
}

// rowPrepare prepares a fast kernel with a given row-kernel variant (tests
// run every variant), or returns nil when it does not take the node.
type rowPrepare func(n *graph.Node, env Env, k *asm.RowKernels) (Kernel, error)

// withRows binds a rowPrepare to the variant dispatch chose.
func withRows(p rowPrepare) FastPrepare {
	return func(n *graph.Node, env Env) (Kernel, string, error) {
		k := asm.BestRows()
		kern, err := p(n, env, k)
		if kern == nil || err != nil {
			return nil, "", err
		}
		return kern, k.Name, nil
	}
}

// takesF32 reports whether the node is an F32 node its reference kernel
// accepts.
func takesF32(n *graph.Node) bool {
	if KeyDType(n) != tensor.F32 || n.DType != tensor.F32 {
		return false
	}
	e, err := Lookup(n.Op)
	if err != nil {
		return false
	}
	_, err = e.Reference(n)
	return err == nil
}

func asmPar(env Env) asm.Par { return asm.Par{For: env.For, Threads: env.Threads} }

// rowGrain is how many rows of a given width a worker should take at
// least: about 16K elements, so that waking a worker pays off.
func rowGrain(width int) int { return max(1, (1<<14)/max(width, 1)) }

// rowsPlan runs a per-row function over rows of a fixed width, in
// chunks of rows spread over the executor's workers.
type rowsPlan struct {
	c   *asm.Chunks
	row func(i int, ins []tensor.Tensor, out tensor.Tensor)
	ins []tensor.Tensor // operands of the current run
	out tensor.Tensor
}

func newRowsPlan(env Env, rows, width int, row func(i int, ins []tensor.Tensor, out tensor.Tensor)) *rowsPlan {
	p := &rowsPlan{row: row}
	p.c = asm.NewChunks(asmPar(env), rows, rowGrain(width), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			p.row(i, p.ins, p.out)
		}
	})
	return p
}

func (p *rowsPlan) kernel(n *graph.Node) Kernel {
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		p.ins, p.out = ins, out
		p.c.Do()
		p.ins, p.out = nil, tensor.Tensor{}
		return nil
	})
}

func f32(t tensor.Tensor) []float32 { return tensor.Elems[float32](t.Data) }

func prepareSoftmaxFast(n *graph.Node, env Env, k *asm.RowKernels) (Kernel, error) {
	if !takesF32(n) {
		return nil, nil
	}
	outer, size, inner := axisSplit(n.Inputs[0].Shape, n.Attrs.Axis)
	if inner != 1 {
		return nil, nil // a strided axis: the reference handles it
	}
	f := k.Softmax
	if n.Op == graph.OpLogSoftmax {
		f = k.LogSoftmax
	}
	return newRowsPlan(env, outer, size, func(i int, ins []tensor.Tensor, out tensor.Tensor) {
		f(f32(out)[i*size:(i+1)*size], f32(ins[0])[i*size:(i+1)*size])
	}).kernel(n), nil
}

func prepareNormFast(n *graph.Node, env Env, k *asm.RowKernels) (Kernel, error) {
	if !takesF32(n) {
		return nil, nil
	}
	x, ax := n.Inputs[0].Shape, n.Attrs.Axis
	outer, inner := x[:ax].NumElements(), x[ax:].NumElements()
	eps, rms := n.Attrs.Eps, n.Op == graph.OpRMSNorm
	return newRowsPlan(env, outer, inner, func(i int, ins []tensor.Tensor, out tensor.Tensor) {
		var scale, bias []float32
		if len(ins) > 1 {
			scale = f32(ins[1])
		}
		if len(ins) > 2 {
			bias = f32(ins[2])
		}
		y, xr := f32(out)[i*inner:(i+1)*inner], f32(ins[0])[i*inner:(i+1)*inner]
		if rms {
			k.RMSNorm(y, xr, scale, eps)
		} else {
			k.LayerNorm(y, xr, scale, bias, eps)
		}
	}).kernel(n), nil
}

// prepareInstanceNormFast runs each [n, c] plane as a LayerNorm row with
// the channel's scale and bias applied in the same pass (one read for the
// mean, one for the variance, one read and write for the result).
func prepareInstanceNormFast(n *graph.Node, env Env, k *asm.RowKernels) (Kernel, error) {
	if !takesF32(n) {
		return nil, nil
	}
	x := n.Inputs[0].Shape
	planes, c, size := x[0]*x[1], x[1], x[2:].NumElements()
	eps, splats := n.Attrs.Eps, make([]asm.Splat, planes) // a splat per plane: chunks run concurrently
	return newRowsPlan(env, planes, size, func(i int, ins []tensor.Tensor, out tensor.Tensor) {
		ch := i % c
		splats[i].Set(f32(ins[1])[ch], f32(ins[2])[ch])
		k.LayerNormUniform(f32(out)[i*size:(i+1)*size], f32(ins[0])[i*size:(i+1)*size], &splats[i], eps)
	}).kernel(n), nil
}

func prepareGlobalAvgPoolFast(n *graph.Node, env Env, k *asm.RowKernels) (Kernel, error) {
	if !takesF32(n) {
		return nil, nil
	}
	x := n.Inputs[0].Shape
	planes, size := x[0]*x[1], x[2:].NumElements()
	return newRowsPlan(env, planes, size, func(i int, ins []tensor.Tensor, out tensor.Tensor) {
		// An empty plane is 0/0 = NaN, as the reference.
		f32(out)[i] = float32(k.Sum(f32(ins[0])[i*size:(i+1)*size]) / float64(size))
	}).kernel(n), nil
}

func prepareTransposeFast(n *graph.Node, env Env, k *asm.RowKernels) (Kernel, error) {
	if n.DType.Size() != 4 {
		return nil, nil
	}
	if _, err := prepTranspose(n); err != nil {
		return nil, nil
	}
	t, err := asm.NewTranspose32(n.Inputs[0].Shape, n.Attrs.Perm, k, asmPar(env))
	if err != nil {
		return nil, err
	}
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		return t.Run(tensor.Elems[uint32](out.Data), tensor.Elems[uint32](ins[0].Data))
	}), nil
}

// reduceFast is a reduction over a contiguous block of axes, the input
// viewed as [outer, size, inner] with the block in the middle.
type reduceFast struct {
	k                  *asm.RowKernels
	op                 graph.Op
	outer, size, inner int
	parts              int       // rows: pieces each row is split into
	partial            []float64 // rows with parts > 1: one result per piece
	cb                 int       // strided: columns per item
	acc                [][]float64
	c                  *asm.Chunks
	x, y               []float32 // operands of the current run
}

func prepareReduceFast(n *graph.Node, env Env, k *asm.RowKernels) (Kernel, error) {
	if !takesF32(n) {
		return nil, nil
	}
	x, axes := n.Inputs[0].Shape, n.Attrs.Axes
	if len(axes) == 0 {
		return nil, nil
	}
	for i := 1; i < len(axes); i++ {
		if axes[i] != axes[i-1]+1 {
			return nil, nil // not one block: the reference's general walk
		}
	}
	first, last := axes[0], axes[len(axes)-1]
	r := &reduceFast{k: k, op: n.Op, outer: x[:first].NumElements(), size: x[first : last+1].NumElements(), inner: x[last+1:].NumElements()}
	if r.size == 0 || r.outer*r.inner == 0 {
		return nil, nil
	}
	par := asmPar(env)
	if r.inner == 1 {
		// One long row (or a few) is split into pieces so that every
		// worker has a share; the pieces are combined at the end.
		r.parts = 1
		if r.outer < env.Threads && r.size >= 1<<16 {
			r.parts = min(2*env.Threads, r.size>>15)
			r.partial = make([]float64, r.outer*r.parts)
		}
		r.c = asm.NewChunks(par, r.outer*r.parts, rowGrain(r.size/r.parts), r.rows)
	} else {
		r.cb = min(r.inner, 1024)
		blocks := (r.inner + r.cb - 1) / r.cb
		r.c = asm.NewChunks(par, r.outer*blocks, rowGrain(r.size*r.cb), r.strided)
		if r.op == graph.OpReduceSum || r.op == graph.OpReduceMean {
			r.acc = make([][]float64, r.c.N())
			for i := range r.acc {
				r.acc[i] = make([]float64, r.cb)
			}
		}
	}
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		r.x, r.y = f32(ins[0]), f32(out)
		r.c.Do()
		if r.parts > 1 {
			r.combine()
		}
		r.x, r.y = nil, nil
		return nil
	}), nil
}

// fold reduces one contiguous piece.
func (r *reduceFast) fold(x []float32) float64 {
	switch r.op {
	case graph.OpReduceMax:
		return float64(r.k.Max(x))
	case graph.OpReduceMin:
		return float64(r.k.Min(x))
	}
	return r.k.Sum(x)
}

// final rounds a row's result (a mean divides by the count first).
func (r *reduceFast) final(v float64) float32 {
	if r.op == graph.OpReduceMean {
		v /= float64(r.size)
	}
	return float32(v)
}

// rows reduces items [lo, hi): pieces of rows, or whole rows.
func (r *reduceFast) rows(_, lo, hi int) {
	for it := lo; it < hi; it++ {
		row, part := it/r.parts, it%r.parts
		base := row * r.size
		v := r.fold(r.x[base+part*r.size/r.parts : base+(part+1)*r.size/r.parts])
		if r.parts == 1 {
			r.y[row] = r.final(v)
		} else {
			r.partial[it] = v
		}
	}
}

// combine folds the pieces of each row.
func (r *reduceFast) combine() {
	for row := range r.outer {
		ps := r.partial[row*r.parts : (row+1)*r.parts]
		v := ps[0]
		for _, p := range ps[1:] {
			switch r.op {
			case graph.OpReduceMax:
				v = max(v, p) // the builtins keep a NaN
			case graph.OpReduceMin:
				v = min(v, p)
			default:
				v += p
			}
		}
		r.y[row] = r.final(v)
	}
}

// strided reduces items [lo, hi), each a block of up to cb columns of one
// outer index, folding its size rows with the vector accumulators.
func (r *reduceFast) strided(ch, lo, hi int) {
	blocks := (r.inner + r.cb - 1) / r.cb
	for it := lo; it < hi; it++ {
		o, j0 := it/blocks, it%blocks*r.cb
		w := min(r.cb, r.inner-j0)
		dst := r.y[o*r.inner+j0:][:w]
		src := func(k int) []float32 { return r.x[(o*r.size+k)*r.inner+j0:][:w] }
		switch r.op {
		case graph.OpReduceMax, graph.OpReduceMin:
			copy(dst, src(0))
			for k := 1; k < r.size; k++ {
				if r.op == graph.OpReduceMax {
					r.k.AccMax(dst, src(k))
				} else {
					r.k.AccMin(dst, src(k))
				}
			}
		default:
			acc := r.acc[ch][:w]
			clear(acc)
			for k := range r.size {
				r.k.AccAdd(acc, src(k))
			}
			for j, v := range acc {
				dst[j] = r.final(v)
			}
		}
	}
}
