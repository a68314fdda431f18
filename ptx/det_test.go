package ptx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// detVariants covers each float dtype, the smallest and largest
// matrices the kernel takes, and 64-bit indexing.
func detVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.F64} {
		for _, m := range []int{1, 5, maxDetM} {
			k, err := emitBuilt(t, fmt.Sprintf("det_%v_%d", dt, m), func(g *graph.Graph) *graph.Node { return g.Det(g.Input("x", dt, 3, m, m)) })
			ks = append(ks, must(t, k, err))
		}
	}
	k, err := emitBuilt(t, "det_wide", func(g *graph.Graph) *graph.Node { return g.Det(g.Input("x", tensor.F16, 1<<21, 32, 32)) })
	return append(ks, must(t, k, err))
}

func TestDetKernelsAssemble(t *testing.T) {
	t.Parallel()
	assemble(t, detVariants(t))
}

// TestDetEmitErrors: a matrix past the kernel's local memory is an error
// naming the limit.
func TestDetEmitErrors(t *testing.T) {
	_, err := emitBuilt(t, "big", func(g *graph.Graph) *graph.Node { return g.Det(g.Input("x", tensor.F32, 40, 40)) })
	if err == nil || !strings.Contains(err.Error(), "1 to 32") {
		t.Errorf("40×40 Det: %v, want an error naming the limit", err)
	}
}
