package ptx

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

func TestCollapse(t *testing.T) {
	cases := []struct {
		shape   []int
		strides [][]int
		dims    []int
		st      [][]int
	}{
		// Same layout everywhere: one dim.
		{[]int{2, 3, 4}, [][]int{{12, 4, 1}, {12, 4, 1}}, []int{24}, [][]int{{1}, {1}}},
		// A bias broadcast over rows: rows stay apart from columns.
		{[]int{2, 3, 4}, [][]int{{12, 4, 1}, {0, 0, 1}}, []int{6, 4}, [][]int{{4, 1}, {0, 1}}},
		// Size-1 dims vanish.
		{[]int{1, 5, 1}, [][]int{{5, 1, 1}}, []int{5}, [][]int{{1}}},
		// Transposed operand: nothing merges.
		{[]int{3, 4}, [][]int{{4, 1}, {1, 3}}, []int{3, 4}, [][]int{{4, 1}, {1, 3}}},
		// Scalar operand merges with anything.
		{[]int{3, 4}, [][]int{{4, 1}, {0, 0}}, []int{12}, [][]int{{1}, {0}}},
	}
	for _, c := range cases {
		dims, st := collapse(c.shape, c.strides)
		if !slices.Equal(dims, c.dims) {
			t.Errorf("collapse(%v, %v) dims = %v, want %v", c.shape, c.strides, dims, c.dims)
			continue
		}
		for o := range st {
			if !slices.Equal(st[o], c.st[o]) {
				t.Errorf("collapse(%v, %v) strides[%d] = %v, want %v", c.shape, c.strides, o, st[o], c.st[o])
			}
		}
	}
}

func TestGridStride(t *testing.T) {
	cases := []struct {
		n, block, maxB, grid int
	}{
		{0, 256, 100, 1},         // empty still launches one block (the loop exits)
		{1, 256, 100, 1},         // partial block
		{256, 256, 100, 1},       // exact
		{257, 256, 100, 2},       // one more element, one more block
		{1 << 20, 256, 100, 100}, // capped: the loop covers the rest
	}
	for _, c := range cases {
		l := GridStride(c.n, c.block, c.maxB)
		if l.Grid != [3]int{c.grid, 1, 1} || l.Block != [3]int{c.block, 1, 1} {
			t.Errorf("GridStride(%d, %d, %d) = %+v, want grid %d", c.n, c.block, c.maxB, l, c.grid)
		}
		if err := l.Validate(); err != nil {
			t.Error(err)
		}
	}
	if CeilDiv(7, 3) != 3 || CeilDiv(6, 3) != 2 || CeilDiv(0, 3) != 0 {
		t.Error("CeilDiv")
	}
	bad := []Launch{
		{Grid: [3]int{0, 1, 1}, Block: [3]int{1, 1, 1}},
		{Grid: [3]int{1, 65536, 1}, Block: [3]int{1, 1, 1}},
		{Grid: [3]int{1, 1, 1}, Block: [3]int{1025, 1, 1}},
		{Grid: [3]int{1, 1, 1}, Block: [3]int{32, 32, 2}},
		{Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 65}},
	}
	for _, l := range bad {
		if l.Validate() == nil {
			t.Errorf("%+v validated", l)
		}
	}
}

// unaryFloatOps are the float unary ops of the chain sweep.
var unaryFloatOps = []graph.Op{
	graph.OpNeg, graph.OpAbs, graph.OpExp, graph.OpLog, graph.OpSqrt, graph.OpRsqrt,
	graph.OpReciprocal, graph.OpTanh, graph.OpSigmoid, graph.OpRelu, graph.OpLeakyRelu,
	graph.OpGelu, graph.OpGeluTanh, graph.OpSilu, graph.OpErf, graph.OpFloor, graph.OpCeil,
	graph.OpRound, graph.OpClip,
}

var binaryOps = []graph.Op{graph.OpAdd, graph.OpSub, graph.OpMul, graph.OpDiv, graph.OpMax, graph.OpMin}

// elementwiseVariants sweeps ops × dtypes × layouts: every single op,
// broadcasting binaries, and long fused chains.
func elementwiseVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(e *Elementwise) {
		k, err := EmitElementwise(e)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		ks = append(ks, k)
	}
	shape := []int{4, 5, 6}
	full := []int{30, 6, 1}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16} {
		for _, op := range unaryFloatOps {
			add(&Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("u_%v_%v", op, dt), Shape: shape, Out: dt,
				Inputs: []Operand{{DType: dt, Strides: full}},
				Body:   []Instr{{Op: op, Args: []int{0}, DType: dt, Attrs: graph.Attrs{Alpha: 0.1, Min: -1, Max: 2}}}}})
		}
		for _, op := range binaryOps {
			// [4,5,6] op [6] (row broadcast) and [4,1,6] (middle broadcast).
			add(&Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("b_%v_%v", op, dt), Shape: shape, Out: dt,
				Inputs: []Operand{{DType: dt, Strides: full}, {DType: dt, Strides: []int{0, 0, 1}}},
				Body:   []Instr{{Op: op, Args: []int{0, 1}, DType: dt}}}})
			add(&Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("bm_%v_%v", op, dt), Shape: shape, Out: dt,
				Inputs: []Operand{{DType: dt, Strides: []int{6, 0, 1}}, {DType: dt, Strides: full}},
				Body:   []Instr{{Op: op, Args: []int{0, 1}, DType: dt}}}})
		}
	}
	for _, dt := range []tensor.DType{tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
		for _, op := range []graph.Op{graph.OpNeg, graph.OpAbs, graph.OpRelu, graph.OpClip} {
			if dt == tensor.U8 && op != graph.OpClip {
				continue
			}
			add(&Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("i_%v_%v", op, dt), Shape: shape, Out: dt,
				Inputs: []Operand{{DType: dt, Strides: full}},
				Body:   []Instr{{Op: op, Args: []int{0}, DType: dt, Attrs: graph.Attrs{Min: -3, Max: 7}}}}})
		}
		for _, op := range binaryOps {
			add(&Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("ib_%v_%v", op, dt), Shape: shape, Out: dt,
				Inputs: []Operand{{DType: dt, Strides: full}, {DType: dt, Strides: []int{0, 1, 0}}},
				Body:   []Instr{{Op: op, Args: []int{0, 1}, DType: dt}}}})
		}
	}
	// Comparisons, logic, Where, and every cast pair.
	all := []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.I8, tensor.U8, tensor.I32, tensor.I64, tensor.Bool}
	for _, op := range []graph.Op{graph.OpEqual, graph.OpLess, graph.OpLessOrEqual, graph.OpGreater, graph.OpGreaterOrEqual} {
		for _, dt := range []tensor.DType{tensor.F32, tensor.I64} {
			add(&Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("c_%v_%v", op, dt), Shape: shape, Out: tensor.Bool,
				Inputs: []Operand{{DType: dt, Strides: full}, {DType: dt, Strides: []int{0, 0, 0}}},
				Body:   []Instr{{Op: op, Args: []int{0, 1}, DType: tensor.Bool}}}})
		}
	}
	add(&Elementwise{Elementwise: kdesc.Elementwise{Name: "logic", Shape: shape, Out: tensor.Bool,
		Inputs: []Operand{{DType: tensor.Bool, Strides: full}, {DType: tensor.Bool, Strides: []int{1, 0, 0}}},
		Body: []Instr{{Op: graph.OpAnd, Args: []int{0, 1}, DType: tensor.Bool},
			{Op: graph.OpNot, Args: []int{2}, DType: tensor.Bool},
			{Op: graph.OpOr, Args: []int{3, 0}, DType: tensor.Bool}}}})
	for _, dt := range []tensor.DType{tensor.F16, tensor.I64} {
		add(&Elementwise{Elementwise: kdesc.Elementwise{Name: "where_" + dt.String(), Shape: shape, Out: dt,
			Inputs: []Operand{{DType: tensor.Bool, Strides: []int{0, 6, 1}}, {DType: dt, Strides: full}, {DType: dt, Strides: []int{0, 0, 0}}},
			Body:   []Instr{{Op: graph.OpWhere, Args: []int{0, 1, 2}, DType: dt}}}})
	}
	for _, from := range all {
		for _, to := range all {
			add(&Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("cast_%v_%v", from, to), Shape: []int{7}, Out: to,
				Inputs: []Operand{{DType: from, Strides: []int{1}}},
				Body:   []Instr{{Op: graph.OpCast, Args: []int{0}, DType: to}}}})
		}
	}
	// Fused chains: a bias-GELU epilogue, a SiLU gate, a residual scale,
	// and one long chain through every float unary op.
	for _, dt := range []tensor.DType{tensor.F32, tensor.BF16} {
		add(&Elementwise{Elementwise: kdesc.Elementwise{Name: "chain_bias_gelu_" + dt.String(), Shape: []int{128, 768}, Out: dt,
			Inputs: []Operand{{DType: dt, Strides: []int{768, 1}}, {DType: dt, Strides: []int{0, 1}}},
			Body: []Instr{{Op: graph.OpAdd, Args: []int{0, 1}, DType: dt},
				{Op: graph.OpGelu, Args: []int{2}, DType: dt}}}})
		add(&Elementwise{Elementwise: kdesc.Elementwise{Name: "chain_swiglu_" + dt.String(), Shape: []int{16, 1024}, Out: dt,
			Inputs: []Operand{{DType: dt, Strides: []int{1024, 1}}, {DType: dt, Strides: []int{1024, 1}}},
			Body: []Instr{{Op: graph.OpSilu, Args: []int{0}, DType: dt},
				{Op: graph.OpMul, Args: []int{2, 1}, DType: dt}}}})
		add(&Elementwise{Elementwise: kdesc.Elementwise{Name: "chain_residual_" + dt.String(), Shape: []int{2, 8, 16}, Out: dt,
			Inputs: []Operand{{DType: dt, Strides: []int{128, 16, 1}}, {DType: dt, Strides: []int{0, 0, 0}}, {DType: dt, Strides: []int{128, 1, 8}}},
			Body: []Instr{{Op: graph.OpMul, Args: []int{0, 1}, DType: dt},
				{Op: graph.OpAdd, Args: []int{3, 2}, DType: dt}}}})
	}
	long := &Elementwise{Elementwise: kdesc.Elementwise{Name: "chain_all_unary", Shape: []int{1000}, Out: tensor.F32,
		Inputs: []Operand{{DType: tensor.F32, Strides: []int{1}}}}}
	for i, op := range unaryFloatOps {
		long.Body = append(long.Body, Instr{Op: op, Args: []int{i}, DType: tensor.F32, Attrs: graph.Attrs{Alpha: 0.2, Min: -5, Max: 5}})
	}
	add(long)
	// Wide index space (64-bit indices) and other block sizes.
	add(&Elementwise{Elementwise: kdesc.Elementwise{Name: "wide", Shape: []int{3, 1 << 30}, Out: tensor.F16,
		Inputs: []Operand{{DType: tensor.F16, Strides: []int{1 << 30, 1}}, {DType: tensor.F16, Strides: []int{1, 0}}},
		Body:   []Instr{{Op: graph.OpAdd, Args: []int{0, 1}, DType: tensor.F16}}}})
	for _, b := range []int{32, 128, 1024} {
		add(&Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("block%d", b), Shape: []int{10000}, Out: tensor.F32, Inputs: []Operand{{DType: tensor.F32, Strides: []int{1}}}, Body: []Instr{{Op: graph.OpExp, Args: []int{0}, DType: tensor.F32}}}, Block: b})
	}
	return ks
}

func TestElementwiseErrors(t *testing.T) {
	bad := []*Elementwise{
		{Elementwise: kdesc.Elementwise{Name: "empty", Shape: []int{2}, Out: tensor.F32, Inputs: []Operand{{DType: tensor.F32, Strides: []int{1}}}}},
		{Elementwise: kdesc.Elementwise{Name: "f64", Shape: []int{2}, Out: tensor.F64, Inputs: []Operand{{DType: tensor.F64, Strides: []int{1}}},
			Body: []Instr{{Op: graph.OpNeg, Args: []int{0}, DType: tensor.F64}}}},
		{Elementwise: kdesc.Elementwise{Name: "rank", Shape: []int{2, 2}, Out: tensor.F32, Inputs: []Operand{{DType: tensor.F32, Strides: []int{1}}},
			Body: []Instr{{Op: graph.OpNeg, Args: []int{0}, DType: tensor.F32}}}},
		{Elementwise: kdesc.Elementwise{Name: "forward", Shape: []int{2}, Out: tensor.F32, Inputs: []Operand{{DType: tensor.F32, Strides: []int{1}}},
			Body: []Instr{{Op: graph.OpNeg, Args: []int{1}, DType: tensor.F32}}}},
		{Elementwise: kdesc.Elementwise{Name: "intsin", Shape: []int{2}, Out: tensor.I32, Inputs: []Operand{{DType: tensor.I32, Strides: []int{1}}},
			Body: []Instr{{Op: graph.OpSin, Args: []int{0}, DType: tensor.I32}}}},
		{Elementwise: kdesc.Elementwise{Name: "mixed", Shape: []int{2}, Out: tensor.F32, Inputs: []Operand{{DType: tensor.F32, Strides: []int{1}}, {DType: tensor.I32, Strides: []int{1}}},
			Body: []Instr{{Op: graph.OpAdd, Args: []int{0, 1}, DType: tensor.F32}}}},
		{Elementwise: kdesc.Elementwise{Name: "outkind", Shape: []int{2}, Out: tensor.I32, Inputs: []Operand{{DType: tensor.F32, Strides: []int{1}}},
			Body: []Instr{{Op: graph.OpNeg, Args: []int{0}, DType: tensor.F32}}}},
	}
	for _, e := range bad {
		if _, err := EmitElementwise(e); err == nil {
			t.Errorf("%s: no error", e.Name)
		}
	}
}

func TestElementwiseText(t *testing.T) {
	// The contiguous case needs no index arithmetic: no div/rem at all;
	// the broadcast case divides by the row length (6) exactly once.
	k, err := EmitElementwise(&Elementwise{Elementwise: kdesc.Elementwise{Name: "k", Shape: []int{4, 6}, Out: tensor.F32,
		Inputs: []Operand{{DType: tensor.F32, Strides: []int{6, 1}}, {DType: tensor.F32, Strides: []int{6, 1}}},
		Body:   []Instr{{Op: graph.OpAdd, Args: []int{0, 1}, DType: tensor.F32}}}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(k.Entry(), "div.") || strings.Contains(k.Entry(), "rem.") {
		t.Errorf("contiguous add divides:\n%s", k.Entry())
	}
	if got := []string{k.Params[0].Name, k.Params[1].Name, k.Params[2].Name}; !slices.Equal(got, []string{"out", "in0", "in1"}) {
		t.Errorf("params %v", got)
	}
	k, err = EmitElementwise(&Elementwise{Elementwise: kdesc.Elementwise{Name: "k", Shape: []int{4, 6}, Out: tensor.F32,
		Inputs: []Operand{{DType: tensor.F32, Strides: []int{6, 1}}, {DType: tensor.F32, Strides: []int{1, 0}}},
		Body:   []Instr{{Op: graph.OpAdd, Args: []int{0, 1}, DType: tensor.F32}}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(k.Entry(), "div.u32"); n != 1 || !strings.Contains(k.Entry(), ", 6;") {
		t.Errorf("broadcast add: %d divisions, want 1 by 6:\n%s", n, k.Entry())
	}
}
