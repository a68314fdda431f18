package ptx

import (
	"fmt"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// gridSampleVariants covers every mode, padding and corner alignment in
// each float dtype, and 64-bit indexing.
func gridSampleVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(name string, dt tensor.DType, x, grid []int, spec graph.GridSampleSpec) {
		k, err := emitBuilt(t, name, func(g *graph.Graph) *graph.Node {
			return g.GridSample(g.Input("x", dt, x...), g.Input("g", dt, grid...), spec)
		})
		ks = append(ks, must(t, k, err))
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.F64} {
		for m := graph.SampleBilinear; m <= graph.SampleBicubic; m++ {
			for p := graph.PadZeros; p <= graph.PadReflection; p++ {
				for _, align := range []bool{false, true} {
					add(fmt.Sprintf("gridsample_%v_%d_%d_%v", dt, m, p, align), dt, []int{2, 3, 5, 7}, []int{2, 4, 6, 2},
						graph.GridSampleSpec{Mode: m, Padding: p, AlignCorners: align})
				}
			}
		}
	}
	add("gridsample_wide", tensor.F16, []int{1, 1 << 14, 64, 64}, []int{1, 64, 64, 2}, graph.GridSampleSpec{Mode: graph.SampleBicubic, Padding: graph.PadReflection})
	return ks
}

func TestGridSampleKernelsAssemble(t *testing.T) {
	t.Parallel()
	assemble(t, gridSampleVariants(t))
}
