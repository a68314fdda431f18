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

// TestInstanceNormReference: hand-worked planes. Channel 0 holds [1 3]
// (mean 2, variance 1), channel 1 [2 2] (variance 0: only eps remains,
// so the plane becomes its bias).
func TestInstanceNormReference(t *testing.T) {
	in := func(g *graph.Graph, xs []*graph.Node) *graph.Node { return g.InstanceNorm(xs[0], xs[1], xs[2], 1e-5) }
	s := math.Sqrt(1 + 1e-5)
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
		got := ewEval(t, in, ewF(dt, []int{1, 2, 1, 2}, 1, 3, 2, 2), ewF(dt, []int{2}, 2, 1), ewF(dt, []int{2}, 0.5, -1))
		ewFloats(t, got, []int{1, 2, 1, 2}, []float64{-2/s + 0.5, 2/s + 0.5, -1, -1}, 1e-7)
	}
	// Two images: each plane is normalised on its own, channels keep
	// their scale and bias across the batch.
	x := []float64{0, 2, 10, 30, 4, 8, -1, 1} // [2 2 2]
	got := ewEval(t, in, ewF(tensor.F64, []int{2, 2, 2}, x...), ewF(tensor.F64, []int{2}, 1, 3), ewF(tensor.F64, []int{2}, 0, 1))
	z := func(d, v float64) float64 { return d / math.Sqrt(v+1e-5) }
	ewFloats(t, got, []int{2, 2, 2}, []float64{z(-1, 1), z(1, 1), 3*z(-10, 100) + 1, 3*z(10, 100) + 1,
		z(-2, 4), z(2, 4), 3*z(-1, 1) + 1, 3*z(1, 1) + 1}, 1e-12)
}

// TestFastInstanceNorm: the row-kernel path against the reference in
// every row variant, over plane sizes from 1 to past two vector blocks, a
// large mean, several threads and misaligned, guarded buffers.
func TestFastInstanceNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 23))
	tol := frTol(t, graph.OpInstanceNorm)
	for _, k := range asm.RowVariants() {
		for _, l := range frLengths() {
			if l == 0 {
				continue
			}
			for _, shift := range []float64{0, 100} {
				g := graph.New()
				x := g.Input("x", tensor.F32, 2, 3, l)
				n := g.InstanceNorm(x, g.Input("s", tensor.F32, 3), g.Input("b", tensor.F32, 3), 1e-5)
				if err := g.Err(); err != nil {
					t.Fatal(err)
				}
				ins := []tensor.Tensor{
					frTensor(tensor.F32, x.Shape, shifted(frRand(r, 6*l, 2), shift)),
					frTensor(tensor.F32, tensor.Shape{3}, frRand(r, 3, 2)),
					frTensor(tensor.F32, tensor.Shape{3}, frRand(r, 3, 1)),
				}
				kern, err := prepareInstanceNormFast(n, frEnv(3), k)
				if err != nil || kern == nil {
					t.Fatalf("%v: no fast kernel (%v)", n, err)
				}
				got, want := frOut(t, n, kern, ins).F32(), frReference(t, n, ins).F32()
				frClose(t, fmt.Sprintf("%s l=%d shift=%v", k.Name, l, shift), got, want, onesLike(want), tol, 0)
			}
		}
	}
}

// BenchmarkFastInstanceNorm: the reference kernel against each row
// variant, one thread, at style-transfer feature-map shapes.
func BenchmarkFastInstanceNorm(b *testing.B) {
	r := rand.New(rand.NewPCG(12, 12))
	for _, s := range [][]int{{1, 64, 128, 128}, {1, 256, 32, 32}} {
		g := graph.New()
		x := g.Input("x", tensor.F32, s...)
		n := g.InstanceNorm(x, g.Input("s", tensor.F32, s[1]), g.Input("b", tensor.F32, s[1]), 1e-5)
		ins := []tensor.Tensor{
			frTensor(tensor.F32, x.Shape, frRand(r, x.Shape.NumElements(), 4)),
			frTensor(tensor.F32, tensor.Shape{s[1]}, frRand(r, s[1], 1)),
			frTensor(tensor.F32, tensor.Shape{s[1]}, frRand(r, s[1], 1)),
		}
		b.Run(fmt.Sprintf("%dx%dx%dx%d", s[0], s[1], s[2], s[3]), func(b *testing.B) { frBench(b, n, ins, prepareInstanceNormFast) })
	}
}
