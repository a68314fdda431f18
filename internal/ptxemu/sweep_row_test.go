package ptxemu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// The row sweep mirrors rowVariants of the ptx package: softmax and
// log-softmax, LayerNorm/RMSNorm with and without affine terms and
// residuals, and every reduction, for F32, F16 and BF16, at several
// block sizes (one warp, several warps with the shared-memory fold, a
// block larger than the row) and with an empty input.

var floatDTypes = []tensor.DType{tensor.F32, tensor.F16, tensor.BF16}

// rowCase is one row kernel with its reference graph builder.
type rowCase struct {
	k   *ptx.Kernel
	in  []tensor.Tensor // kernel inputs after out, in parameter order
	ref func(t testing.TB) tensor.Tensor
	out tensor.Tensor
	tl  tol
}

// refRow builds a graph over widened copies of ins, applies f, converts
// the result to dt.
func refRow(t testing.TB, dt tensor.DType, ins []tensor.Tensor, shapes [][]int, f func(g *graph.Graph, x []*graph.Node) *graph.Node) tensor.Tensor {
	g := graph.New()
	feeds := map[string]tensor.Tensor{}
	var xs []*graph.Node
	for i, in := range ins {
		w := widen(in)
		w.Shape = shapes[i]
		nm := fmt.Sprintf("x%d", i)
		feeds[nm] = w
		xs = append(xs, g.Input(nm, w.DType, shapes[i]...))
	}
	g.Output(f(g, xs))
	return castTo(interpret(t, g, feeds)[0], dt)
}

func rowCases(t testing.TB) []rowCase {
	r := rand.New(rand.NewPCG(3, 4))
	var cs []rowCase
	must := func(k *ptx.Kernel, err error) *ptx.Kernel {
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for _, dt := range floatDTypes {
		for ci, c := range []struct {
			shape       []int
			axis, block int
		}{{[]int{8, 100}, 1, 0}, {[]int{4, 7, 3}, 1, 32}, {[]int{2, 1500}, 1, 1024}, {[]int{3, 70}, 1, 64}, {[]int{0, 5}, 1, 0}} {
			for _, log := range []bool{false, true} {
				k := must(ptx.EmitSoftmax(&ptx.Softmax{Softmax: kdesc.Softmax{Name: fmt.Sprintf("softmax_%v_%d_%v", dt, ci, log),
					DType: dt, Shape: c.shape, Axis: c.axis, Log: log}, Block: c.block}))
				x := randTensor(r, dt, false, c.shape...)
				axis := c.axis
				cs = append(cs, rowCase{k: k, in: []tensor.Tensor{x}, out: sentinel(dt, c.shape...), tl: tolFor(dt),
					ref: func(t testing.TB) tensor.Tensor {
						return refRow(t, dt, []tensor.Tensor{x}, [][]int{c.shape}, func(g *graph.Graph, xs []*graph.Node) *graph.Node {
							if log {
								return g.LogSoftmax(xs[0], axis)
							}
							return g.Softmax(xs[0], axis)
						})
					}})
			}
		}
		shape := []int{3, 4, 40}
		for _, rms := range []bool{false, true} {
			for _, aff := range []int{0, 1, 2} {
				if rms && aff == 2 {
					continue
				}
				for _, block := range []int{0, 64, 512} {
					cs = append(cs, normCase(t, r, dt, shape, 2, rms, aff, block, nil))
				}
				for _, rs := range [][]int{{4 * 40, 40, 1}, {0, 40, 1}} {
					cs = append(cs, normCase(t, r, dt, shape, 1, rms, aff, 0, rs))
				}
			}
		}
		for _, op := range []graph.Op{graph.OpReduceSum, graph.OpReduceMean, graph.OpReduceMax, graph.OpReduceMin, graph.OpReduceProd} {
			for i, axes := range [][]int{{1}, {0, 2}, nil, {2}} {
				shape := []int{6, 50, 7}
				k := must(ptx.EmitReduce(&ptx.Reduce{Reduce: kdesc.Reduce{Name: fmt.Sprintf("reduce_%v_%v_%d", op, dt, i), Op: op, DType: dt, Shape: shape, Axes: axes}}))
				x := randTensor(r, dt, false, shape...)
				if op == graph.OpReduceProd {
					x = scaleTensor(x, 1.0/3) // keep 300-term products finite
				}
				var kept []int
				for d, n := range shape {
					if axes != nil && !contains(axes, d) {
						kept = append(kept, n)
					}
				}
				count := tensor.Shape(shape).NumElements() / max(tensor.Shape(kept).NumElements(), 1)
				tl := tolFor(dt)
				tl.abs = max(tl.abs, 3e-7*float64(count)) // sums cancel
				tl.rel = max(tl.rel, 2e-7*float64(count))
				cs = append(cs, rowCase{k: k, in: []tensor.Tensor{x}, out: sentinel(dt, kept...), tl: tl,
					ref: func(t testing.TB) tensor.Tensor {
						return refRow(t, dt, []tensor.Tensor{x}, [][]int{shape}, func(g *graph.Graph, xs []*graph.Node) *graph.Node {
							return g.Apply(op, graph.Attrs{Axes: axes}, xs[0])
						})
					}})
			}
		}
	}
	return cs
}

// normCase is a LayerNorm/RMSNorm kernel over shape from axis, with aff
// affine terms (0 none, 1 scale, 2 scale and bias) and a residual read
// at resStrides when non-nil.
func normCase(t testing.TB, r *rand.Rand, dt tensor.DType, shape []int, axis int, rms bool, aff, block int, resStrides []int) rowCase {
	res := "none"
	if resStrides != nil {
		res = fmt.Sprintf("res%d", resStrides[0])
	}
	k, err := ptx.EmitNorm(&ptx.Norm{Norm: kdesc.Norm{Name: fmt.Sprintf("norm_%v_%v_%d_%d_%s", dt, rms, aff, block, res), DType: dt, Shape: shape, Axis: axis, Eps: 1e-5, RMS: rms, Scale: aff >= 1, Bias: aff == 2, Residual: resStrides != nil, ResStrides: resStrides}, Block: block})
	if err != nil {
		t.Fatal(err)
	}
	normed := shape[axis:]
	ins := []tensor.Tensor{randTensor(r, dt, false, shape...)}
	shapes := [][]int{shape}
	if resStrides != nil {
		rshape := make([]int, len(shape))
		for d := range shape {
			rshape[d] = shape[d]
			if resStrides[d] == 0 {
				rshape[d] = 1
			}
		}
		ins = append(ins, randTensor(r, dt, false, rshape...))
		shapes = append(shapes, rshape)
	}
	for range aff {
		ins = append(ins, randTensor(r, dt, false, normed...))
		shapes = append(shapes, normed)
	}
	return rowCase{k: k, in: ins, out: sentinel(dt, shape...), tl: tolFor(dt), ref: func(t testing.TB) tensor.Tensor {
		return refRow(t, dt, ins, shapes, func(g *graph.Graph, xs []*graph.Node) *graph.Node {
			x := xs[0]
			rest := xs[1:]
			if resStrides != nil {
				x, rest = g.Add(x, rest[0]), rest[1:]
			}
			var scale, bias *graph.Node
			if aff >= 1 {
				scale = rest[0]
			}
			if aff == 2 {
				bias = rest[1]
			}
			if rms {
				return g.RMSNorm(x, scale, axis, 1e-5)
			}
			return g.LayerNorm(x, scale, bias, axis, 1e-5)
		})
	}}
}

func contains(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// scaleTensor multiplies float data by s (in float64, then rounded).
func scaleTensor(x tensor.Tensor, s float64) tensor.Tensor {
	v := x.Float64s()
	for i := range v {
		v[i] *= s
	}
	y, err := tensor.FromFloat64s(x.DType, x.Shape, v)
	if err != nil {
		panic(err)
	}
	return y
}

func TestSweepRow(t *testing.T) {
	t.Parallel()
	for _, c := range rowCases(t) {
		if err := runKernel(t, c.k, Options{}, c.out, c.in...); err != nil {
			t.Errorf("%s: %v", c.k.Name, err)
			continue
		}
		want := c.ref(t)
		compareTensors(t, c.k.Name, c.out, want, c.tl)
		if c.out.DType == tensor.F32 {
			// The tolerances hold with ex2.approx at its worst, too.
			if err := runKernel(t, c.k, Options{Approx: ApproxBound}, c.out, c.in...); err != nil {
				t.Errorf("%s: %v", c.k.Name, err)
				continue
			}
			compareTensors(t, c.k.Name+" (ApproxBound)", c.out, want, c.tl)
		}
	}
}
