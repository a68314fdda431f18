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

// TestSweepReduceInt runs the integer reductions (I8, U8, I32, I64) over
// several axes and block sizes against the reference kernels, exactly:
// sums and products that wrap (data with the types' extremes, products of
// 50 terms), Max/Min with the extremes present, a 64-bit sum past 2^32,
// a single-warp block, several warps and an empty input.
func TestSweepReduceInt(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 12))
	ops := []graph.Op{graph.OpReduceSum, graph.OpReduceMax, graph.OpReduceMin, graph.OpReduceProd}
	for _, dt := range []tensor.DType{tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
		for _, op := range ops {
			for i, c := range []struct {
				shape []int
				axes  []int
				block int
			}{{[]int{6, 50, 7}, []int{1}, 0}, {[]int{6, 50, 7}, []int{0, 2}, 32}, {[]int{6, 50, 7}, nil, 0}, {[]int{3, 1500}, []int{1}, 1024}, {[]int{0, 5}, []int{1}, 0}} {
				k, err := ptx.EmitReduce(&ptx.Reduce{Reduce: kdesc.Reduce{Name: fmt.Sprintf("ireduce_%v_%v_%d", op, dt, i), Op: op, DType: dt, Shape: c.shape, Axes: c.axes}, Block: c.block})
				if err != nil {
					t.Fatal(err)
				}
				x := randTensor(r, dt, true, c.shape...)
				var kept []int
				for d, n := range c.shape {
					if c.axes != nil && !contains(c.axes, d) {
						kept = append(kept, n)
					}
				}
				got := sentinel(dt, kept...)
				if err := runKernel(t, k, Options{}, got, x); err != nil {
					t.Fatalf("%s: %v", k.Name, err)
				}
				want := refRow(t, dt, []tensor.Tensor{x}, [][]int{c.shape}, func(g *graph.Graph, xs []*graph.Node) *graph.Node {
					return g.Apply(op, graph.Attrs{Axes: c.axes}, xs[0])
				})
				compareTensors(t, k.Name, got, want, tol{})
			}
		}
	}
	// Integer ReduceMean has no reference kernel and no GPU kernel.
	if _, err := ptx.EmitReduce(&ptx.Reduce{Reduce: kdesc.Reduce{Name: "mean", Op: graph.OpReduceMean, DType: tensor.I32, Shape: []int{4}}}); err == nil {
		t.Error("integer ReduceMean emitted")
	}
}
