package ops

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func topKBuild(k, axis int, smallest bool, indices bool) func(*graph.Graph, []*graph.Node) *graph.Node {
	return func(g *graph.Graph, xs []*graph.Node) *graph.Node {
		v, i := g.TopK(xs[0], k, axis, smallest)
		if indices {
			return i
		}
		return v
	}
}

// Hand-worked: ties keep the lower index first and NaN ranks above every
// number (first when largest, last when smallest).
func TestTopKReference(t *testing.T) {
	nan := math.NaN()
	x := []float64{3, 1, 3, nan, 2, -1, -1, -1, -1, -1} // [2 5]
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
		in := ewF(dt, []int{2, 5}, x...)
		ewFloats(t, ewEval(t, topKBuild(3, 1, false, false), in), []int{2, 3}, []float64{nan, 3, 3, -1, -1, -1}, 0)
		ewInts(t, ewEval(t, topKBuild(3, -1, false, true), in), []int{2, 3}, []int64{3, 0, 2, 0, 1, 2})
		ewFloats(t, ewEval(t, topKBuild(4, 1, true, false), in), []int{2, 4}, []float64{1, 2, 3, 3, -1, -1, -1, -1}, 0)
		ewInts(t, ewEval(t, topKBuild(5, 1, true, true), in), []int{2, 5}, []int64{1, 4, 0, 2, 3, 0, 1, 2, 3, 4})
	}
	// A strided axis: columns of [[5 0] [7 0] [5 1] [9 1]].
	col := []float64{5, 0, 7, 0, 5, 1, 9, 1}
	for _, dt := range []tensor.DType{tensor.I8, tensor.U8, tensor.I32, tensor.I64, tensor.F32} {
		in := ewF(tensor.F64, []int{4, 2}, col...)
		cast := tensor.New(dt, 4, 2)
		if err := tensor.Convert(cast, in); err != nil {
			t.Fatal(err)
		}
		ewInts(t, ewEval(t, topKBuild(2, 0, false, false), cast), []int{2, 2}, []int64{9, 1, 7, 1})
		ewInts(t, ewEval(t, topKBuild(2, 0, false, true), cast), []int{2, 2}, []int64{3, 2, 1, 3})
		ewInts(t, ewEval(t, topKBuild(3, 0, true, true), cast), []int{3, 2}, []int64{0, 0, 2, 1, 1, 2})
	}
	// k = 0 gives an empty result.
	ewShape(t, ewEval(t, topKBuild(0, 1, false, true), ewF(tensor.F32, []int{2, 5}, x...)), []int{2, 0})
}

// TestTopKFast: the selection kernel agrees exactly with the reference
// sort, values and indices, on data full of ties (and NaN, ±Inf for
// floats), for contiguous and strided axes, several K and thread counts,
// writing nothing outside its output.
func TestTopKFast(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 1))
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64, tensor.I32, tensor.I64, tensor.I8, tensor.U8} {
		for _, s := range [][]int{{3, 17}, {2, 64, 3}, {1, 1000}, {40, 9}} {
			for ax := range s {
				for _, k := range []int{1, 2, s[ax] / 4} {
					if k < 1 || k*topKFastMin > s[ax] {
						continue
					}
					v := make([]float64, tensor.Shape(s).NumElements())
					for i := range v {
						v[i] = float64(r.IntN(6))
						if dt.IsFloat() && r.IntN(10) == 0 {
							v[i] = specials[r.IntN(len(specials))]
						}
					}
					x := ewF(tensor.F64, s, v...)
					in := tensor.New(dt, s...)
					if err := tensor.Convert(in, x); err != nil {
						t.Fatal(err)
					}
					for _, smallest := range []bool{false, true} {
						for idx := range 2 {
							g := graph.New()
							vals, inds := g.TopK(g.Input("x", dt, s...), k, ax, smallest)
							n := []*graph.Node{vals, inds}[idx]
							if err := g.Err(); err != nil {
								t.Fatal(err)
							}
							want := frReference(t, n, []tensor.Tensor{in})
							for _, threads := range []int{1, 3} {
								kern, variant, err := PrepareFast(n, frEnv(threads))
								if err != nil || variant != "select" {
									t.Fatalf("%v %v: fast kernel %q, %v", dt, s, variant, err)
								}
								got := frOut(t, n, kern, []tensor.Tensor{in})
								if !bytes.Equal(got.Data, want.Data) {
									t.Fatalf("%v %v axis %d k %d smallest %v output %d threads %d: fast %v, reference %v",
										dt, s, ax, k, smallest, idx, threads, got.Float64s(), want.Float64s())
								}
							}
						}
					}
				}
			}
		}
	}
}

// The selection is only taken where K is small against the line.
func TestTopKFastFallsBack(t *testing.T) {
	g := graph.New()
	v, _ := g.TopK(g.Input("x", tensor.F32, 3, 8), 3, 1, false)
	if _, variant, err := PrepareFast(v, frEnv(2)); err != nil || variant != "reference" {
		t.Fatalf("k 3 of 8: variant %q (%v), want the reference", variant, err)
	}
}

// BenchmarkTopK compares the selection with the reference sort on rows
// of detection-head scores (K 1 to 100 of 8400 anchors) and of a MoE
// router (K 2 of 64 experts, many tokens).
func BenchmarkTopK(b *testing.B) {
	for _, c := range []struct{ rows, n, k int }{{4, 8400, 1}, {4, 8400, 100}, {512, 64, 2}} {
		g := graph.New()
		_, idx := g.TopK(g.Input("x", tensor.F32, c.rows, c.n), c.k, 1, false)
		r := rand.New(rand.NewPCG(1, 2))
		x := tensor.New(tensor.F32, c.rows, c.n)
		for i := range x.F32() {
			x.F32()[i] = r.Float32()
		}
		out := tensor.New(tensor.I64, c.rows, c.k)
		ref, err := PrepareReference(idx)
		if err != nil {
			b.Fatal(err)
		}
		fast, _, err := PrepareFast(idx, frEnv(1))
		if err != nil {
			b.Fatal(err)
		}
		for _, kc := range []struct {
			name string
			k    Kernel
		}{{"reference", ref}, {"select", fast}} {
			b.Run(fmt.Sprintf("%dx%d_k%d/%s", c.rows, c.n, c.k, kc.name), func(b *testing.B) {
				b.SetBytes(int64(4 * c.rows * c.n))
				for b.Loop() {
					if err := kc.k([]tensor.Tensor{x}, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
