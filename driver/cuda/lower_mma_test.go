package cuda

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestLowerMMA: MatMuls (plain, batched, fused with bias and activation)
// of two F16 or two BF16 operands lower to the tensor-core GEMM, F32 ones
// to the SIMT kernel; the module assembles.
func TestLowerMMA(t *testing.T) {
	g := graph.New()
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16} {
		x := g.Input("x"+dt.String(), dt, 2, 5, 24)
		w := g.Param("w"+dt.String(), dt, 24, 40)
		b := g.Param("b"+dt.String(), dt, 40)
		g.OutputNamed("mm"+dt.String(), g.MatMul(x, w))
		g.OutputNamed("fused"+dt.String(), g.Gelu(g.Add(g.MatMul(x, w), b)))
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for _, off := range []bool{true, false} {
		lw := lowerCPU(t, g, off)
		seen := map[tensor.DType]int{}
		for _, s := range lw.steps {
			if op := s.node.Op; op != graph.OpMatMul && op != graph.OpFusedMatMul {
				continue
			}
			dt := s.node.Inputs[0].DType
			seen[dt]++
			mma := strings.Contains(s.kernel.Entry(), "mma.sync.aligned.m16n8k16")
			if mma != (dt != tensor.F32) {
				t.Errorf("fuse off %v: %s on %v lowered with mma.sync %v", off, s.node, dt, mma)
			}
		}
		if len(seen) != 3 {
			t.Errorf("fuse off %v: GEMM steps by input dtype %v", off, seen)
		}
		assembleModule(t, lw.module)
	}
}
