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

// emitConvTransposeBlock makes a ConvTranspose kernel from its node with
// block threads per block (0: the default).
func emitConvTransposeBlock(block int) emitter {
	return func(name string, n *graph.Node) (*ptx.Kernel, error) {
		d, err := kdesc.ConvTransposeOf(name, n)
		if err != nil {
			return nil, err
		}
		return ptx.EmitConvTranspose(&ptx.ConvTranspose{ConvTranspose: *d, Block: block})
	}
}

// convTransposeCases cover the gather kernel in every float dtype: the
// U-Net upsampling form (kernel = stride = 2), output padding (a
// negative end pad), groups and depthwise, dilation, negative begin pads
// (cells no tap reaches: bias only), a stride past the kernel (gaps),
// 1-D and 3-D, and NaN/Inf inputs, against the reference kernel on the
// widened inputs.
func convTransposeCases(t testing.TB, r *rand.Rand) []rowCase {
	var cs []rowCase
	for _, dt := range floatDTypes {
		for ci, c := range []struct {
			x, w     []int
			o        graph.ConvTransposeOpts
			bias     bool
			specials bool
			block    int
		}{
			{[]int{1, 6, 4, 5}, []int{6, 3, 2, 2}, graph.ConvTransposeOpts{Strides: []int{2, 2}}, true, false, 0},
			{[]int{2, 4, 5, 4}, []int{4, 3, 3, 3}, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 0, -1}, Groups: 2}, true, false, 64},
			{[]int{1, 3, 3, 4}, []int{3, 1, 3, 2}, graph.ConvTransposeOpts{Strides: []int{1, 3}, Dilations: []int{2, 1}, Pads: []int{-1, 1, -2, 0}, Groups: 3}, true, false, 0},
			{[]int{2, 2, 5}, []int{2, 3, 3}, graph.ConvTransposeOpts{Strides: []int{4}, Pads: []int{1, -2}}, true, false, 0},
			{[]int{1, 2, 2, 3, 2}, []int{2, 2, 2, 2, 3}, graph.ConvTransposeOpts{Strides: []int{2, 1, 2}, Dilations: []int{1, 2, 1}, Pads: []int{0, 1, 1, -1, 0, 0}}, false, false, 0},
			{[]int{1, 5, 4, 4}, []int{5, 2, 3, 3}, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}, true, true, 0},
		} {
			x, w := randTensor(r, dt, false, c.x...), randTensor(r, dt, false, c.w...)
			if c.specials {
				// Small integers with NaNs: a NaN reaches exactly the cells
				// its taps land on. (randTensor's ±3e38 would overflow the
				// f32 sum where the f64 reference does not.)
				x = tiedTensor(r, dt, true, c.x...)
			}
			ins := []tensor.Tensor{x, w}
			if c.bias {
				ins = append(ins, randTensor(r, dt, false, c.w[1]*max(c.o.Groups, 1)))
			}
			o := c.o
			op := func(g *graph.Graph, xs []*graph.Node) *graph.Node {
				var b *graph.Node
				if len(xs) == 3 {
					b = xs[2]
				}
				return g.ConvTranspose(xs[0], xs[1], b, o)
			}
			taps := c.x[1] * tensor.Shape(c.w[2:]).NumElements()
			cs = append(cs, nodeCase(t, fmt.Sprintf("convtranspose_%v_%d", dt, ci), ins, op, nil, emitConvTransposeBlock(c.block), sumTol(dt, taps)))
		}
	}
	return cs
}

// TestSweepConvTranspose runs the ConvTranspose kernels.
func TestSweepConvTranspose(t *testing.T) {
	t.Parallel()
	runCases(t, convTransposeCases(t, rand.New(rand.NewPCG(41, 42))))
}
