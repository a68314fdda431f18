package ptx

import (
	"fmt"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// TestIntReduceAssemble runs ptxas over the integer reductions: every
// op and integer dtype, one warp and several (the shared-memory fold,
// 64-bit values shuffled in halves), and a 64-bit index space.
func TestIntReduceAssemble(t *testing.T) {
	var ks []*Kernel
	for _, dt := range []tensor.DType{tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
		for _, op := range []graph.Op{graph.OpReduceSum, graph.OpReduceMax, graph.OpReduceMin, graph.OpReduceProd} {
			for i, c := range []struct {
				shape []int
				block int
			}{{[]int{6, 50, 7}, 32}, {[]int{6, 500, 7}, 256}, {[]int{4, 1 << 30}, 0}} {
				k, err := EmitReduce(&Reduce{Reduce: kdesc.Reduce{Name: fmt.Sprintf("r_%v_%v_%d", op, dt, i), Op: op, DType: dt, Shape: c.shape, Axes: []int{1}}, Block: c.block})
				if err != nil {
					t.Fatal(err)
				}
				ks = append(ks, k)
			}
		}
	}
	assemble(t, ks)
	for _, bad := range []Reduce{
		{Reduce: kdesc.Reduce{Name: "mean", Op: graph.OpReduceMean, DType: tensor.I64, Shape: []int{4}}},
		{Reduce: kdesc.Reduce{Name: "bool", Op: graph.OpReduceSum, DType: tensor.Bool, Shape: []int{4}}},
		{Reduce: kdesc.Reduce{Name: "f64", Op: graph.OpReduceSum, DType: tensor.F64, Shape: []int{4}}},
		{Reduce: kdesc.Reduce{Name: "argmax", Op: graph.OpArgMax, DType: tensor.I32, Shape: []int{4}}},
	} {
		if _, err := EmitReduce(&bad); err == nil {
			t.Errorf("%s: no error", bad.Name)
		}
	}
}
