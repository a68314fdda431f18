package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// vtClipBounds are Clip's bounds the fast path must agree on bit for bit
// with the reference: ReLU6, min only, max only, none, a point, signed
// zeros (max(-0, +0) is +0) and NaN bounds (every result NaN, as Go's
// min and max give).
var vtClipBounds = [][2]float32{
	{0, 6}, {-1.5, float32(math.Inf(1))}, {float32(math.Inf(-1)), 2}, {float32(math.Inf(-1)), float32(math.Inf(1))},
	{3, 3}, {0, 0}, {float32(math.Copysign(0, -1)), 0}, {float32(math.NaN()), 6}, {0, float32(math.NaN())},
}

func TestFastClip(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	shapes := [][]int{{0}, {1}, {7}, {33}, {3, 37}, {2049}, {4100}, {2, 3, 17000}} // the last splits over workers
	for _, k := range asm.EwVariants() {
		for ei, env := range vtEnvs() {
			t.Run(fmt.Sprintf("%s/env%d", k.Name, ei), func(t *testing.T) {
				for _, b := range vtClipBounds {
					for _, s := range shapes {
						g := graph.New()
						n := g.Clip(g.Input("x", tensor.F32, s...), b[0], b[1])
						what := fmt.Sprint(b, s)
						kern, err := prepareVecClip(n, env, k)
						if err != nil || kern == nil {
							t.Fatalf("%s: kernel %v, error %v", what, kern != nil, err)
						}
						x := vtReshape(vtData(r, tensor.Shape(s).NumElements()), s...)
						xs := x.F32()
						for i := 0; i+1 < len(xs); i += 5 { // the bounds themselves, and signed zeros
							xs[i] = b[r.IntN(2)]
							xs[i+1] = float32(math.Copysign(0, float64(r.IntN(2)-1)))
						}
						x0 := vtClone(x)
						got := vtRun(t, n, kern, x)
						want := vtReference(t, n, x)
						vtSame(t, what, got.F32(), want.F32())
						vtSame(t, what+" input", x.F32(), x0.F32())
						if err := kern([]tensor.Tensor{x}, x); err != nil { // in place
							t.Fatal(err)
						}
						vtSame(t, what+" in place", x.F32(), want.F32())
					}
				}
			})
		}
	}
	// Unordered bounds and other dtypes are the reference's.
	g := graph.New()
	if k, _ := prepareVecClip(g.Clip(g.Input("x", tensor.F32, 8), 2, 1), Serial, asm.BestEw()); k != nil {
		t.Fatal("fast Clip took min > max")
	}
	if k, _ := prepareVecClip(g.Clip(g.Input("y", tensor.F64, 8), 0, 6), Serial, asm.BestEw()); k != nil {
		t.Fatal("fast Clip took F64")
	}
}

// TestFusedConvClipMatchesChain: a FusedConv2D whose epilogue clips
// (ReLU6 and one-sided bounds) is Clip(Conv2D) bit for bit in the
// reference kernels, F32 and F64, dense and depthwise, also with a NaN in
// the input; the fast kernels agree with it on three threads.
func TestFusedConvClipMatchesChain(t *testing.T) {
	inf := float32(math.Inf(1))
	bounds := [][2]float32{{0, 1}, {-0.5, inf}, {-inf, 0.25}}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
		for _, groups := range []int{1, 16} {
			for _, b := range bounds {
				name := fmt.Sprintf("%v/groups%d/%v", dt, groups, b)
				g := graph.New()
				x := g.Input("x", dt, 1, 16, 9, 33)
				w := g.Param("w", dt, 16, 16/groups, 3, 3)
				bias := g.Param("b", dt, 16)
				o := graph.ConvOpts{Pads: []int{1, 1, 1, 1}, Groups: groups}
				g.Output(g.Clip(g.Conv2D(x, w, bias, o), b[0], b[1]))
				at := graph.Attrs{Pads: o.Pads, Groups: groups,
					Epilogue: graph.Epilogue{Bias: true, Act: graph.OpClip, Min: b[0], Max: b[1]}}
				f := mustInsert(t, g, graph.OpFusedConv2D, at, x, w, bias)
				g.Output(f)
				feeds := fusedPair(t, g, 5)
				for pass := range 2 {
					if pass == 1 {
						setElem(feeds["x"], 40, math.NaN())
					}
					outs, err := Interpret(g, feeds)
					if err != nil {
						t.Fatal(err)
					}
					a, c := outs[0].Float64s(), outs[1].Float64s()
					lo, hi, nans := 0, 0, 0
					for j := range a {
						switch {
						case math.IsNaN(a[j]):
							nans++
						case a[j] == float64(b[0]):
							lo++
						case a[j] == float64(b[1]):
							hi++
						}
						if a[j] != c[j] && !(math.IsNaN(a[j]) && math.IsNaN(c[j])) {
							t.Fatalf("%s pass %d: element %d: unfused %v, fused %v", name, pass, j, a[j], c[j])
						}
					}
					if (lo == 0 && !math.IsInf(float64(b[0]), 0)) || (hi == 0 && !math.IsInf(float64(b[1]), 0)) || (pass == 1) != (nans > 0) {
						t.Fatalf("%s pass %d: %d outputs at min, %d at max, %d NaN", name, pass, lo, hi, nans)
					}
					checkFast(t, f, feeds, 2e-5)
				}
			}
		}
	}
}
