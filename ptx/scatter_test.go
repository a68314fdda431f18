package ptx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// scatterVariants covers both scatters in every dtype the kernel moves,
// every reduction of the dtypes that have one, both index dtypes, and
// 64-bit indexing.
func scatterVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(name string, build func(g *graph.Graph) *graph.Node) {
		k, err := emitBuilt(t, name, build)
		ks = append(ks, must(t, k, err))
	}
	dts := []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.I8, tensor.U8, tensor.I32, tensor.I64, tensor.Bool}
	for _, dt := range dts {
		for red := graph.ScatterNone; red <= graph.ScatterMin; red++ {
			if dt == tensor.Bool && red != graph.ScatterNone {
				continue
			}
			idx := []tensor.DType{tensor.I32, tensor.I64}[int(red)%2]
			add(fmt.Sprintf("scatter_el_%v_%d", dt, red), func(g *graph.Graph) *graph.Node {
				return g.ScatterElements(g.Input("d", dt, 4, 5, 6), g.Input("i", idx, 4, 3, 6), g.Input("u", dt, 4, 3, 6), 1, red)
			})
			add(fmt.Sprintf("scatter_nd_%v_%d", dt, red), func(g *graph.Graph) *graph.Node {
				return g.ScatterND(g.Input("d", dt, 4, 5, 6), g.Input("i", idx, 7, 2), g.Input("u", dt, 7, 6), red)
			})
		}
	}
	add("scatter_nd_wide", func(g *graph.Graph) *graph.Node {
		return g.ScatterND(g.Input("d", tensor.F16, 1<<16, 1<<15), g.Input("i", tensor.I64, 4, 1), g.Input("u", tensor.F16, 4, 1<<15), graph.ScatterNone)
	})
	return ks
}

func TestScatterKernelsAssemble(t *testing.T) {
	t.Parallel()
	assemble(t, scatterVariants(t))
}

// TestScatterEmitErrors: F64 (no GPU kernels) is an error naming the
// dtype.
func TestScatterEmitErrors(t *testing.T) {
	_, err := emitBuilt(t, "f64", func(g *graph.Graph) *graph.Node {
		return g.ScatterND(g.Input("d", tensor.F64, 4, 5), g.Input("i", tensor.I64, 2, 1), g.Input("u", tensor.F64, 2, 5), graph.ScatterAdd)
	})
	if err == nil || !strings.Contains(err.Error(), "f64") {
		t.Errorf("F64 ScatterND: %v, want an error naming the dtype", err)
	}
}
