package kdesc

import (
	"slices"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func val(dt tensor.DType, s ...int) *graph.Node {
	return &graph.Node{Op: graph.OpInput, DType: dt, Shape: s}
}

// TestMatMulBatched: [2,1,3,4]·[5,4,6] → [2,5,3,6]; A repeats over the
// 5 batch, B over the 2 (hand-worked strides).
func TestMatMulBatched(t *testing.T) {
	n := &graph.Node{Op: graph.OpMatMul, DType: tensor.F32, Shape: tensor.Shape{2, 5, 3, 6},
		Inputs: []*graph.Node{val(tensor.F32, 2, 1, 3, 4), val(tensor.F32, 5, 4, 6)}}
	g, err := GemmOf("mm", n)
	if err != nil {
		t.Fatal(err)
	}
	if g.M != 3 || g.K != 4 || g.N != 6 || g.ASm != 4 || g.ASk != 1 || g.BSk != 6 || g.BSn != 1 || g.Alpha != 1 {
		t.Fatalf("geometry %+v", g)
	}
	if !slices.Equal(g.Batch, []int{2, 5}) || !slices.Equal(g.ABatch, []int{12, 0}) || !slices.Equal(g.BBatch, []int{0, 24}) {
		t.Fatalf("batch %v, strides A %v B %v; want [2 5] [12 0] [0 24]", g.Batch, g.ABatch, g.BBatch)
	}
	if g.HasC || g.HasRes {
		t.Fatalf("plain matmul has an epilogue: %+v", g)
	}
}

// TestFusedMatMul: transposed operands plus bias, Gelu and residual.
func TestFusedMatMul(t *testing.T) {
	n := &graph.Node{Op: graph.OpFusedMatMul, DType: tensor.F16, Shape: tensor.Shape{3, 5},
		Attrs:  graph.Attrs{TransA: true, TransB: true, Epilogue: graph.Epilogue{Bias: true, Act: graph.OpGelu, Residual: true}},
		Inputs: []*graph.Node{val(tensor.F16, 4, 3), val(tensor.F16, 5, 4), val(tensor.F32, 5), val(tensor.F16, 3, 5)}}
	g, err := GemmOf("fmm", n)
	if err != nil {
		t.Fatal(err)
	}
	// A stored [K=4, M=3]: A(m,k) at k·3 + m. B stored [N=5, K=4]: B(k,n) at n·4 + k.
	if g.M != 3 || g.K != 4 || g.N != 5 || g.ASm != 1 || g.ASk != 3 || g.BSk != 1 || g.BSn != 4 {
		t.Fatalf("geometry %+v", g)
	}
	if !g.HasC || g.CType != tensor.F32 || g.Beta != 1 || g.CSm != 0 || g.CSn != 1 || g.Act != graph.OpGelu || !g.HasRes || g.ResType != tensor.F16 {
		t.Fatalf("epilogue %+v", g)
	}
	n.Inputs = n.Inputs[:3]
	if _, err := GemmOf("fmm", n); err == nil {
		t.Fatal("missing residual input accepted")
	}
}

// TestGemmOp: Gemm with transposed B and a row-broadcast C.
func TestGemmOp(t *testing.T) {
	n := &graph.Node{Op: graph.OpGemm, DType: tensor.F32, Shape: tensor.Shape{2, 3},
		Attrs:  graph.Attrs{TransB: true, Alpha: 0.5, Beta: 2},
		Inputs: []*graph.Node{val(tensor.F32, 2, 4), val(tensor.F32, 3, 4), val(tensor.F32, 1, 3)}}
	g, err := GemmOf("g", n)
	if err != nil {
		t.Fatal(err)
	}
	if g.M != 2 || g.K != 4 || g.N != 3 || g.BSk != 1 || g.BSn != 4 || g.Alpha != 0.5 || g.Beta != 2 || g.CSm != 0 || g.CSn != 1 {
		t.Fatalf("%+v", g)
	}
	n.Inputs[1] = val(tensor.F32, 3, 5)
	if _, err := GemmOf("g", n); err == nil {
		t.Fatal("mismatched inner dims accepted")
	}
}

func TestAttentionOf(t *testing.T) {
	n := &graph.Node{Op: graph.OpAttention, DType: tensor.F32, Shape: tensor.Shape{1, 4, 3, 8},
		Attrs: graph.Attrs{Causal: true},
		Inputs: []*graph.Node{val(tensor.F32, 1, 4, 3, 16), val(tensor.F32, 1, 2, 5, 16), val(tensor.F32, 1, 2, 5, 8),
			val(tensor.Bool, 3, 5)}}
	a, err := AttentionOf("at", n)
	if err != nil {
		t.Fatal(err)
	}
	if a.B != 1 || a.H != 4 || a.HK != 2 || a.SQ != 3 || a.SK != 5 || a.D != 16 || a.DV != 8 || !a.Causal || a.Mask != MaskBool {
		t.Fatalf("%+v", a)
	}
	if !slices.Equal(a.MaskStrides, []int{0, 0, 5, 1}) {
		t.Fatalf("mask strides %v, want [0 0 5 1]", a.MaskStrides)
	}
	n.Inputs[3] = val(tensor.I64, 3, 5)
	if _, err := AttentionOf("at", n); err == nil {
		t.Fatal("I64 mask accepted")
	}
	// KVLen: the last input is the key counts, after the mask if any.
	n.Attrs.KVLen = true
	n.Inputs[3] = val(tensor.I64, 1)
	if a, err = AttentionOf("at", n); err != nil || !a.KVLen || a.Mask != MaskNone {
		t.Fatalf("KVLen without a mask: %+v, %v", a, err)
	}
	n.Inputs = append(n.Inputs[:3], val(tensor.F32, 1, 1, 3, 5), val(tensor.I64, 1))
	if a, err = AttentionOf("at", n); err != nil || !a.KVLen || a.Mask != MaskAdd {
		t.Fatalf("KVLen with a mask: %+v, %v", a, err)
	}
	n.Inputs = n.Inputs[:3]
	if _, err := AttentionOf("at", n); err == nil {
		t.Fatal("KVLen without its input accepted")
	}
}

// TestFusedOf: relu(x + b) with b broadcast along rows.
func TestFusedOf(t *testing.T) {
	n := &graph.Node{Op: graph.OpFusedElementwise, DType: tensor.F32, Shape: tensor.Shape{2, 3},
		Attrs: graph.Attrs{Program: []graph.ElemInstr{
			{Op: graph.OpAdd, Args: []graph.ElemRef{{Index: 0}, {Index: 1}}, DType: tensor.F32},
			{Op: graph.OpRelu, Args: []graph.ElemRef{{Instr: true, Index: 0}}, DType: tensor.F32},
			{Op: graph.OpCast, Args: []graph.ElemRef{{Instr: true, Index: 1}}, To: tensor.F16, DType: tensor.F16}}},
		Inputs: []*graph.Node{val(tensor.F32, 2, 3), val(tensor.F32, 3)}}
	e, err := FusedOf("ew", n)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e.Inputs[1].Strides, []int{0, 1}) || !slices.Equal(e.Inputs[0].Strides, []int{3, 1}) {
		t.Fatalf("inputs %+v", e.Inputs)
	}
	if len(e.Body) != 3 || !slices.Equal(e.Body[1].Args, []int{2}) || !slices.Equal(e.Body[2].Args, []int{3}) || e.Body[2].DType != tensor.F16 {
		t.Fatalf("body %+v", e.Body)
	}
	n.Inputs[1] = val(tensor.F32, 4)
	if _, err := FusedOf("ew", n); err == nil {
		t.Fatal("non-broadcasting input accepted")
	}
}

// TestCopyOf: transpose, stepped slice and tile read the input elements
// worked out by hand.
func TestCopyOf(t *testing.T) {
	in := val(tensor.F32, 2, 3)
	cases := []struct {
		n    *graph.Node
		want []int
	}{
		{&graph.Node{Op: graph.OpTranspose, Shape: tensor.Shape{3, 2}, Attrs: graph.Attrs{Perm: []int{1, 0}}, Inputs: []*graph.Node{in}},
			[]int{0, 3, 1, 4, 2, 5}},
		{&graph.Node{Op: graph.OpSlice, Shape: tensor.Shape{2, 2}, Attrs: graph.Attrs{Axes: []int{1}, Starts: []int{2}, Steps: []int{-1}}, Inputs: []*graph.Node{in}},
			[]int{2, 1, 5, 4}},
		{&graph.Node{Op: graph.OpTile, Shape: tensor.Shape{2, 6}, Inputs: []*graph.Node{in}},
			[]int{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}},
	}
	for _, c := range cases {
		cp, err := CopyOf("c", c.n)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range c.want {
			if got := cp.CopySource(i); got != w {
				t.Errorf("%v: element %d reads %d, want %d", c.n.Op, i, got, w)
			}
		}
	}
	if _, err := CopyOf("c", &graph.Node{Op: graph.OpAdd, Inputs: []*graph.Node{in}}); err == nil {
		t.Error("Add accepted as a copy")
	}
}
