package emu

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

func TestSmoke(t *testing.T) {
	k, err := ptx.EmitElementwise(&ptx.Elementwise{Name: "k", Shape: []int{4, 6}, Out: tensor.F32,
		Inputs: []ptx.Operand{{DType: tensor.F32, Strides: []int{6, 1}}, {DType: tensor.F32, Strides: []int{1, 0}}},
		Body:   []ptx.Instr{{Op: graph.OpAdd, Args: []int{0, 1}, DType: tensor.F32}, {Op: graph.OpExp, Args: []int{2}, DType: tensor.F32}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(ptx.Module(k))
	if err != nil {
		t.Fatal(err)
	}
	mem := NewMemory()
	out, _ := mem.Alloc(24 * 4)
	a := make([]float32, 24)
	for i := range a {
		a[i] = float32(i) / 10
	}
	in0, _ := mem.Map(tensor.Bytes(a))
	bb := []float32{1, 2, 3, 4}
	in1, _ := mem.Map(tensor.Bytes(bb))
	if err := m.Launch(mem, "k", k.Launch, out, in0, in1); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 96)
	mem.Read(out, got)
	t.Log(tensor.Elems[float32](got))
}
