package ptx

import (
	"fmt"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// roiAlignVariants covers both poolings, both coordinate modes, fixed and
// adaptive sampling, each float dtype, and 64-bit indexing.
func roiAlignVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(name string, dt tensor.DType, x []int, spec graph.RoiAlignSpec) {
		k, err := emitBuilt(t, name, func(g *graph.Graph) *graph.Node {
			return g.RoiAlign(g.Input("x", dt, x...), g.Input("r", dt, 5, 4), g.Input("b", tensor.I64, 5), spec)
		})
		ks = append(ks, must(t, k, err))
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.F64} {
		for _, max := range []bool{false, true} {
			for _, half := range []bool{false, true} {
				for _, ratio := range []int{0, 2} {
					add(fmt.Sprintf("roialign_%v_%v_%v_%d", dt, max, half, ratio), dt, []int{2, 3, 8, 9},
						graph.RoiAlignSpec{OutH: 3, OutW: 2, SamplingRatio: ratio, SpatialScale: 0.5, HalfPixel: half, Max: max})
				}
			}
		}
	}
	add("roialign_wide", tensor.F16, []int{1, 1 << 14, 256, 256}, graph.RoiAlignSpec{OutH: 7, OutW: 7, SpatialScale: 1})
	return ks
}

func TestRoiAlignKernelsAssemble(t *testing.T) {
	t.Parallel()
	assemble(t, roiAlignVariants(t))
}
