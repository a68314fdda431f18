package ptx

import (
	"fmt"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// poolNDVariants covers 1 to 3 spatial axes, every dtype of the max
// (values and both index orders) and the mean (with and without
// count_include_pad), 64-bit indexing, and MaxUnpool of every element
// size.
func poolNDVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(name string, build func(g *graph.Graph) *graph.Node) {
		k, err := emitBuilt(t, name, build)
		ks = append(ks, must(t, k, err))
	}
	shapes := [][]int{{2, 3, 9}, {2, 3, 7, 6}, {1, 2, 5, 4, 6}}
	opts := func(sp int, countPad, colMajor bool) graph.PoolNDOpts {
		o := graph.PoolNDOpts{CountPad: countPad, ColMajor: colMajor}
		for range sp {
			o.Kernel, o.Strides, o.Dilations = append(o.Kernel, 2), append(o.Strides, 2), append(o.Dilations, 2)
		}
		for range 2 * sp {
			o.Pads = append(o.Pads, 1)
		}
		return o
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.F64, tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
		for _, in := range shapes {
			sp := len(in) - 2
			add(fmt.Sprintf("maxpool_%v_%d", dt, sp), func(g *graph.Graph) *graph.Node {
				v, _ := g.MaxPoolND(g.Input("x", dt, in...), opts(sp, false, false))
				return v
			})
			add(fmt.Sprintf("maxpool_idx_%v_%d", dt, sp), func(g *graph.Graph) *graph.Node {
				_, i := g.MaxPoolND(g.Input("x", dt, in...), opts(sp, false, sp == 2))
				return i
			})
			if dt.IsFloat() {
				add(fmt.Sprintf("avgpool_%v_%d", dt, sp), func(g *graph.Graph) *graph.Node {
					return g.AvgPoolND(g.Input("x", dt, in...), opts(sp, sp == 3, false))
				})
			}
		}
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.I8, tensor.I64, tensor.F64} {
		add(fmt.Sprintf("maxunpool_%v", dt), func(g *graph.Graph) *graph.Node {
			return g.MaxUnpool(g.Input("x", dt, 1, 2, 30, 40), g.Input("i", tensor.I64, 1, 2, 30, 40), []int{1, 2, 60, 80})
		})
	}
	add("maxpool_wide", func(g *graph.Graph) *graph.Node {
		_, i := g.MaxPoolND(g.Input("x", tensor.F16, 1, 1, 1<<15, 1<<15), opts(2, false, false))
		return i
	})
	return ks
}

func TestPoolNDKernelsAssemble(t *testing.T) {
	t.Parallel()
	assemble(t, poolNDVariants(t))
}
