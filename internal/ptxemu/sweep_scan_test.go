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

// lineDTypes are the dtypes ArgMax/ArgMin and CumSum run on.
var lineDTypes = []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.I8, tensor.U8, tensor.I32, tensor.I64}

func scanCases(t testing.TB, r *rand.Rand) []rowCase {
	var cs []rowCase
	shape := []int{3, 9, 5}
	for _, dt := range lineDTypes {
		for axis := range shape {
			for _, mx := range []bool{false, true} {
				x := tiedTensor(r, dt, true, shape...)
				op := func(g *graph.Graph, xs []*graph.Node) *graph.Node {
					if mx {
						return g.ArgMax(xs[0], axis, axis == 1)
					}
					return g.ArgMin(xs[0], axis, false)
				}
				cs = append(cs, nodeCase(t, fmt.Sprintf("arg_%v_%d_%v", dt, axis, mx), []tensor.Tensor{x}, op, nil, emitNode, tol{}))
			}
			for _, ex := range []bool{false, true} {
				for _, rev := range []bool{false, true} {
					x := randTensor(r, dt, false, shape...)
					op := func(g *graph.Graph, xs []*graph.Node) *graph.Node { return g.CumSum(xs[0], axis, ex, rev) }
					cs = append(cs, nodeCase(t, fmt.Sprintf("cumsum_%v_%d_%v_%v", dt, axis, ex, rev), []tensor.Tensor{x}, op, nil,
						emitNode, sumTol(dt, 2*shape[axis])))
				}
			}
		}
	}
	// The block-per-line ArgMax/ArgMin: forced on short lines (one warp,
	// several warps, more threads than elements) and chosen for long ones.
	for _, dt := range []tensor.DType{tensor.F32, tensor.BF16, tensor.I8, tensor.I32} {
		for ci, c := range []struct {
			shape      []int
			block      int
			row, withN bool
		}{{[]int{3, 9, 5}, 32, true, true}, {[]int{2, 300}, 64, true, true}, {[]int{4, 70}, 256, true, false}, {[]int{2, 1500}, 0, false, true}} {
			for _, mx := range []bool{false, true} {
				x := tiedTensor(r, dt, c.withN, c.shape...)
				axis := len(c.shape) - 1
				op := func(g *graph.Graph, xs []*graph.Node) *graph.Node {
					if mx {
						return g.ArgMax(xs[0], axis, false)
					}
					return g.ArgMin(xs[0], axis, true)
				}
				emit := func(name string, n *graph.Node) (*ptx.Kernel, error) {
					d, err := kdesc.ArgOf(name, n)
					if err != nil {
						return nil, err
					}
					return ptx.EmitArg(&ptx.Arg{Arg: *d, Row: c.row, Block: c.block})
				}
				cs = append(cs, nodeCase(t, fmt.Sprintf("argrow_%v_%d_%v", dt, ci, mx), []tensor.Tensor{x}, op, nil, emit, tol{}))
			}
		}
	}
	return cs
}

func channelCases(t testing.TB, r *rand.Rand) []rowCase {
	var cs []rowCase
	for _, dt := range floatDTypes {
		for si, shape := range [][]int{{2, 3, 5, 4}, {4, 7}} {
			c := shape[1]
			v := randTensor(r, dt, false, c).Float64s()
			for i := range v {
				v[i] = v[i]*v[i] + 0.05 // a variance is positive
			}
			variance, _ := tensor.FromFloat64s(dt, tensor.Shape{c}, v)
			ins := []tensor.Tensor{randTensor(r, dt, true, shape...), randTensor(r, dt, false, c), randTensor(r, dt, false, c),
				randTensor(r, dt, false, c), variance}
			op := func(g *graph.Graph, xs []*graph.Node) *graph.Node {
				return g.BatchNorm(xs[0], xs[1], xs[2], xs[3], xs[4], 1e-3)
			}
			cs = append(cs, nodeCase(t, fmt.Sprintf("bn_%v_%d", dt, si), ins, op, nil, emitNode, sumTol(dt, 8)))
		}
		for _, il := range []bool{false, true} {
			ins := []tensor.Tensor{randTensor(r, dt, true, 2, 3, 6, 8), randTensor(r, dt, false, 6, 4), randTensor(r, dt, false, 6, 4)}
			op := func(g *graph.Graph, xs []*graph.Node) *graph.Node { return g.RoPE(xs[0], xs[1], xs[2], il) }
			cs = append(cs, nodeCase(t, fmt.Sprintf("rope_%v_%v", dt, il), ins, op, nil, emitNode, sumTol(dt, 8)))
		}
	}
	return cs
}

// TestSweepScanChannel runs the ArgMax/ArgMin, CumSum, BatchNorm and
// RoPE kernels.
func TestSweepScanChannel(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(41, 42))
	runCases(t, append(scanCases(t, r), channelCases(t, r)...))
}
