package ptxemu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// The CNN sweep runs the conv (implicit GEMM and direct, grouped,
// depthwise, strided, dilated, asymmetric padding, tails past every
// tile edge, fused epilogues), pool, BatchNorm, RoPE, ArgMax/ArgMin and
// CumSum kernels, each made from a graph node through its ptx.*Of
// mapping, and compares them with the reference kernels run on the same
// (widened) inputs.

// emitter makes a node's kernel.
type emitter func(name string, n *graph.Node) (*ptx.Kernel, error)

// emitNode is the emitter compiling uses: kdesc.Describe, then ptx.Emit.
func emitNode(name string, n *graph.Node) (*ptx.Kernel, error) {
	k, _, err := ptx.EmitNode(name, n)
	return k, err
}

// nodeCase builds op over inputs shaped and typed like ins, emits its
// kernel, and checks it against the reference of ref over the widened
// inputs (ref nil: op itself).
func nodeCase(t testing.TB, name string, ins []tensor.Tensor, op, ref func(g *graph.Graph, x []*graph.Node) *graph.Node,
	emit emitter, tl tol) rowCase {
	t.Helper()
	g := graph.New()
	var xs []*graph.Node
	var shapes [][]int
	for i, in := range ins {
		xs = append(xs, g.Input(fmt.Sprintf("x%d", i), in.DType, in.Shape...))
		shapes = append(shapes, in.Shape)
	}
	n := op(g, xs)
	if err := g.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	k, err := emit(name, n)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if ref == nil {
		ref = op
	}
	return rowCase{k: k, in: ins, out: sentinel(n.DType, n.Shape...), tl: tl, ref: func(t testing.TB) tensor.Tensor {
		return refRow(t, n.DType, ins, shapes, ref)
	}}
}

// sumTol widens tl for a float sum of count products computed in f32.
func sumTol(dt tensor.DType, count int) tol {
	tl := tolFor(dt)
	tl.abs = max(tl.abs, 2e-7*float64(count))
	tl.rel = max(tl.rel, 2e-7*float64(count))
	return tl
}

// emitConvWith makes a conv kernel from a Conv2D node, adjusted by set
// (forcing a path or tile, or adding an epilogue).
func emitConvWith(set func(c *ptx.Conv)) emitter {
	return func(name string, n *graph.Node) (*ptx.Kernel, error) {
		d, err := kdesc.ConvOf(name, n)
		if err != nil {
			return nil, err
		}
		c := &ptx.Conv{Conv: *d}
		set(c)
		return ptx.EmitConv(c)
	}
}

func convCases(t testing.TB, r *rand.Rand) []rowCase {
	var cs []rowCase
	for _, dt := range floatDTypes {
		for ci, c := range []struct {
			x, w   []int
			o      graph.ConvOpts
			direct bool
			tile   ptx.GemmTile
		}{
			{[]int{2, 5, 7, 6}, []int{20, 5, 3, 3}, graph.ConvOpts{Pads: []int{1, 1, 1, 1}}, false, ptx.GemmTile{}},
			{[]int{2, 5, 7, 6}, []int{20, 5, 3, 3}, graph.ConvOpts{Pads: []int{1, 1, 1, 1}}, true, ptx.GemmTile{}},
			{[]int{1, 6, 9, 8}, []int{36, 3, 3, 2}, graph.ConvOpts{Strides: []int{2, 1}, Pads: []int{1, 0, 2, 1}, Dilations: []int{1, 2}, Groups: 2}, false, ptx.GemmTile{}},
			{[]int{1, 8, 5, 5}, []int{40, 8, 3, 3}, graph.ConvOpts{Pads: []int{2, 1, 0, 1}}, false, ptx.GemmTile{BM: 16, BN: 16, BK: 16, TM: 1, TN: 1}},
			{[]int{1, 4, 4, 4}, []int{70, 4, 1, 1}, graph.ConvOpts{}, false, ptx.DefaultTile},
			{[]int{2, 6, 7, 7}, []int{6, 1, 3, 3}, graph.ConvOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}, Groups: 6}, false, ptx.GemmTile{}},
			{[]int{1, 4, 6, 5}, []int{4, 2, 2, 3}, graph.ConvOpts{Dilations: []int{2, 1}, Pads: []int{0, 2, 1, 0}, Groups: 2}, false, ptx.GemmTile{}},
			// Depth 16·9 = 144: the automatic tile splits K in four
			// groups; then explicit K-split tiles, one with an odd count.
			{[]int{1, 16, 6, 5}, []int{20, 16, 3, 3}, graph.ConvOpts{Pads: []int{1, 1, 1, 1}}, false, ptx.GemmTile{}},
			{[]int{1, 16, 6, 5}, []int{20, 16, 3, 3}, graph.ConvOpts{Pads: []int{1, 1, 1, 1}}, false, ptx.GemmTile{BM: 32, BN: 32, BK: 16, TM: 4, TN: 4, KS: 4}},
			{[]int{2, 8, 5, 5}, []int{18, 8, 3, 3}, graph.ConvOpts{Pads: []int{1, 1, 1, 1}}, false, ptx.GemmTile{BM: 16, BN: 16, BK: 8, TM: 2, TN: 2, KS: 3}},
		} {
			x, w, b := randTensor(r, dt, false, c.x...), randTensor(r, dt, false, c.w...), randTensor(r, dt, false, c.w[0])
			taps := c.w[1] * c.w[2] * c.w[3]
			o := c.o
			name := fmt.Sprintf("conv_%v_%d", dt, ci)
			set := func(cv *ptx.Conv) { cv.Direct, cv.Tile = c.direct, c.tile }
			conv := func(g *graph.Graph, xs []*graph.Node) *graph.Node { return g.Conv2D(xs[0], xs[1], xs[2], o) }
			cs = append(cs, nodeCase(t, name, []tensor.Tensor{x, w, b}, conv, nil, emitConvWith(set), sumTol(dt, taps)))
			if dt == tensor.F32 && ci < 2 {
				// NaN weights: one that meets only padding still makes
				// its outputs NaN (a padding cell is a zero it
				// multiplies), on both paths, as on the CPU.
				wn := randTensor(r, dt, true, c.w...)
				cs = append(cs, nodeCase(t, name+"_nan_weights", []tensor.Tensor{x, wn, b}, conv, nil, emitConvWith(set), sumTol(dt, taps)))
			}
			// The pooled epilogue (the ResNet stem): bias, activation, then
			// the 2×2 max pool, against the chain.
			for _, act := range []graph.Op{graph.OpInvalid, graph.OpRelu} {
				if outShape(t, c.x, c.w, o)[2] < 2 {
					break
				}
				pooled := func(g *graph.Graph, xs []*graph.Node) *graph.Node {
					at := g.Conv2D(xs[0], xs[1], xs[2], o).Attrs
					at.Epilogue = graph.Epilogue{Bias: true, Act: act, Pool2x2: true}
					return g.Apply(graph.OpFusedConv2D, at, xs...)
				}
				ref := func(g *graph.Graph, xs []*graph.Node) *graph.Node {
					y := g.Conv2D(xs[0], xs[1], xs[2], o)
					if act != graph.OpInvalid {
						y = g.Apply(act, graph.Attrs{}, y)
					}
					return g.MaxPool2D(y, graph.PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 2}})
				}
				cs = append(cs, nodeCase(t, fmt.Sprintf("%s_pool_%v", name, act), []tensor.Tensor{x, w, b}, pooled, ref,
					emitConvWith(set), sumTol(dt, taps)))
			}
			// A clipping epilogue (ReLU6's form, bounds the values cross).
			clip := func(cv *ptx.Conv) { set(cv); cv.Act, cv.ActAttrs = graph.OpClip, graph.Attrs{Min: -0.5, Max: 0.75} }
			clipRef := func(g *graph.Graph, xs []*graph.Node) *graph.Node {
				return g.Clip(g.Conv2D(xs[0], xs[1], xs[2], o), -0.5, 0.75)
			}
			cs = append(cs, nodeCase(t, name+"_clip", []tensor.Tensor{x, w, b}, conv, clipRef, emitConvWith(clip), sumTol(dt, taps)))
			if dt == tensor.F16 {
				continue
			}
			// The FusedConv2D epilogue: activation, then the residual.
			for _, act := range []graph.Op{graph.OpRelu, graph.OpSilu} {
				res := randTensor(r, dt, false, outShape(t, c.x, c.w, o)...)
				epi := func(cv *ptx.Conv) { set(cv); cv.Act, cv.Res = act, true }
				ref := func(g *graph.Graph, xs []*graph.Node) *graph.Node {
					return g.Add(g.Apply(act, graph.Attrs{}, g.Conv2D(xs[0], xs[1], xs[2], o)), xs[3])
				}
				convRes := func(g *graph.Graph, xs []*graph.Node) *graph.Node { return g.Conv2D(xs[0], xs[1], xs[2], o) }
				cs = append(cs, nodeCase(t, fmt.Sprintf("%s_%v", name, act), []tensor.Tensor{x, w, b, res}, convRes, ref,
					emitConvWith(epi), sumTol(dt, taps)))
			}
			// Then the post-residual activation (a ResNet block's Relu
			// after the identity add; Silu to see a value change sign).
			res := randTensor(r, dt, false, outShape(t, c.x, c.w, o)...)
			post := func(cv *ptx.Conv) { set(cv); cv.Act, cv.Res, cv.PostAct = graph.OpRelu, true, graph.OpSilu }
			postRef := func(g *graph.Graph, xs []*graph.Node) *graph.Node {
				y := g.Add(g.Relu(g.Conv2D(xs[0], xs[1], xs[2], o)), xs[3])
				return g.Apply(graph.OpSilu, graph.Attrs{}, y)
			}
			convRes := func(g *graph.Graph, xs []*graph.Node) *graph.Node { return g.Conv2D(xs[0], xs[1], xs[2], o) }
			cs = append(cs, nodeCase(t, name+"_post", []tensor.Tensor{x, w, b, res}, convRes, postRef,
				emitConvWith(post), sumTol(dt, taps)))
		}
	}
	return cs
}

// outShape is Conv2D's result shape.
func outShape(t testing.TB, x, w []int, o graph.ConvOpts) []int {
	g := graph.New()
	n := g.Conv2D(g.Input("x", tensor.F32, x...), g.Input("w", tensor.F32, w...), nil, o)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	return n.Shape
}

func poolCases(t testing.TB, r *rand.Rand) []rowCase {
	var cs []rowCase
	for _, dt := range floatDTypes {
		for pi, o := range []graph.PoolOpts{
			{Kernel: []int{3, 3}, Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}},
			{Kernel: []int{2, 3}, Strides: []int{1, 2}, Pads: []int{0, 1, 1, 2}},
			{Kernel: []int{7, 8}},
		} {
			for _, mx := range []bool{false, true} {
				for _, cp := range []bool{false, true} {
					if mx && cp {
						continue
					}
					o.CountPad = cp
					x := randTensor(r, dt, mx, 2, 3, 7, 8)
					po := o
					op := func(g *graph.Graph, xs []*graph.Node) *graph.Node {
						if mx {
							return g.MaxPool2D(xs[0], po)
						}
						return g.AvgPool2D(xs[0], po)
					}
					cs = append(cs, nodeCase(t, fmt.Sprintf("pool_%v_%d_%v_%v", dt, pi, mx, cp), []tensor.Tensor{x}, op, nil, emitNode, sumTol(dt, 56)))
				}
			}
		}
	}
	return cs
}

// TestSweepConvPool runs the conv and pool kernels.
func TestSweepConvPool(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(31, 32))
	runCases(t, append(convCases(t, r), poolCases(t, r)...))
}

func runCases(t *testing.T, cs []rowCase) {
	for _, c := range cs {
		if err := runKernel(t, c.k, Options{}, c.out, c.in...); err != nil {
			t.Errorf("%s: %v", c.k.Name, err)
			continue
		}
		compareTensors(t, c.k.Name, c.out, c.ref(t), c.tl)
	}
}

// tiedTensor is data with many exact ties (small integers), and NaNs
// mixed into float dtypes when withNaN.
func tiedTensor(r *rand.Rand, dt tensor.DType, withNaN bool, shape ...int) tensor.Tensor {
	v := make([]float64, tensor.Shape(shape).NumElements())
	for i := range v {
		v[i] = float64(r.IntN(5) - 2)
		if withNaN && dt.IsFloat() && r.IntN(9) == 0 {
			v[i] = math.NaN()
		}
	}
	x, err := tensor.FromFloat64s(dt, tensor.Shape(shape), v)
	if err != nil {
		panic(err)
	}
	return x
}
