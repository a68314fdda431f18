package ops

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// The fast GridSample splits the output rows (N·Ho of them) across the
// workers, one task each. A task computes the taps of one row's Wo points
// once, into its own scratch, then sweeps that row for every channel, so
// the tap arithmetic (floors, reflections, cubic weights) is paid once
// per point rather than once per channel and each channel's writes are
// contiguous. The sums are the reference's, in the same order.

func init() {
	RegisterFast(graph.OpGridSample, func(n *graph.Node, env Env) (Kernel, string, error) {
		p, err := gridPlanOf(n)
		if err != nil {
			return nil, "", err
		}
		switch n.DType {
		case tensor.F32:
			return sizeChecked(n, newGridFast[float32](p, env).run), "rows", nil
		case tensor.F64:
			return sizeChecked(n, newGridFast[float64](p, env).run), "rows", nil
		}
		return nil, "", nil
	})
}

type gridFast[T float32 | float64] struct {
	p       *gridPlan
	env     Env
	scratch [][]gridTaps // per task: one row of points
	x, g, y []T          // the current run's operands
	body    func(lo, hi int)
}

func newGridFast[T float32 | float64](p *gridPlan, env Env) *gridFast[T] {
	f := &gridFast[T]{p: p, env: env, scratch: make([][]gridTaps, max(env.Threads, 1))}
	for i := range f.scratch {
		f.scratch[i] = make([]gridTaps, p.wo)
	}
	f.body = f.tasks
	return f
}

func (f *gridFast[T]) run(ins []tensor.Tensor, out tensor.Tensor) error {
	f.x, f.g, f.y = tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), tensor.Elems[T](out.Data)
	f.env.For(len(f.scratch), 1, f.body)
	return nil
}

// tasks runs tasks [lo, hi), each over its share of the N·Ho rows.
func (f *gridFast[T]) tasks(lo, hi int) {
	p, n := f.p, len(f.scratch)
	rows := p.n * p.ho
	for t := lo; t < hi; t++ {
		taps := f.scratch[t]
		for r := rows * t / n; r < rows*(t+1)/n; r++ {
			b, oy := r/p.ho, r%p.ho
			g := f.g[(b*p.points+oy*p.wo)*2:]
			for i := range taps {
				p.taps(float64(g[2*i]), float64(g[2*i+1]), &taps[i])
			}
			for c := range p.c {
				plane := f.x[(b*p.c+c)*p.plane:][:p.plane]
				y := f.y[(b*p.c+c)*p.points+oy*p.wo:][:p.wo]
				for i := range y {
					t := &taps[i]
					if t.n == 4 { // an inside bilinear point: the reference's sum, unrolled
						y[i] = T(0 + t.wt[0]*float64(plane[t.at[0]]) + t.wt[1]*float64(plane[t.at[1]]) +
							t.wt[2]*float64(plane[t.at[2]]) + t.wt[3]*float64(plane[t.at[3]]))
						continue
					}
					y[i] = sample(t, plane)
				}
			}
		}
	}
}
