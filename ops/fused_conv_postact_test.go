package ops

import (
	"fmt"
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestFusedConvPostActMatchesChain: a FusedConv2D with a post-residual
// activation (a ResNet block's post(Relu(conv + b) + r)) is the chain of
// builder ops bit for bit in the reference kernels, F32 and F64, also
// with NaNs in the input and the residual; the fast kernels agree with
// it on one to three threads, on shapes whose tiles split the output
// channels (5×5 planes, 32 channels) and the columns (32-wide rows).
func TestFusedConvPostActMatchesChain(t *testing.T) {
	shapes := []struct{ c, h, w, m int }{{16, 5, 5, 32}, {5, 6, 32, 8}}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
		for i, s := range shapes {
			for _, post := range []graph.Op{graph.OpRelu, graph.OpSigmoid} {
				name := fmt.Sprintf("%v/%d/%v", dt, i, post)
				g := graph.New()
				x := g.Input("x", dt, 1, s.c, s.h, s.w)
				w := g.Param("w", dt, s.m, s.c, 3, 3)
				b := g.Param("b", dt, s.m)
				r := g.Input("r", dt, 1, s.m, s.h, s.w)
				o := graph.ConvOpts{Pads: []int{1, 1, 1, 1}}
				chain := g.Add(g.Relu(g.Conv2D(x, w, b, o)), r)
				if post == graph.OpRelu {
					chain = g.Relu(chain)
				} else {
					chain = g.Sigmoid(chain)
				}
				g.Output(chain)
				at := graph.Attrs{Pads: o.Pads, Epilogue: graph.Epilogue{Bias: true, Act: graph.OpRelu, Residual: true, PostAct: post}}
				f := mustInsert(t, g, graph.OpFusedConv2D, at, x, w, b, r)
				g.Output(f)
				feeds := fusedPair(t, g, 7)
				checkFast(t, f, feeds, 2e-5)
				// NaNs: one input cell (every output whose window reads it)
				// and one residual cell; post(NaN) must stay NaN in both.
				nan := math.NaN()
				setElem(feeds["x"], 3, nan)
				setElem(feeds["r"], 5, nan)
				outs, err := Interpret(g, feeds)
				if err != nil {
					t.Fatal(err)
				}
				a, c := outs[0].Float64s(), outs[1].Float64s()
				nans := 0
				for j := range a {
					if math.IsNaN(a[j]) {
						nans++
					}
					if a[j] != c[j] && !(math.IsNaN(a[j]) && math.IsNaN(c[j])) {
						t.Fatalf("%s with NaNs: element %d: unfused %v, fused %v", name, j, a[j], c[j])
					}
				}
				if nans < 2 {
					t.Fatalf("%s: %d NaN outputs, want the residual's and the input's", name, nans)
				}
				checkFast(t, f, feeds, 2e-5)
			}
		}
	}
}

// setElem sets element i of a float tensor to v.
func setElem(x tensor.Tensor, i int, v float64) {
	if x.DType == tensor.F32 {
		x.F32()[i] = float32(v)
		return
	}
	tensor.Elems[float64](x.Data)[i] = v
}
