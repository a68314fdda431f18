package graph

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

func TestFusedOpsListed(t *testing.T) {
	fused := FusedOps()
	if len(fused) != 8 || fused[0] != OpFusedElementwise || fused[len(fused)-1] != OpQDQConv {
		t.Fatalf("FusedOps() = %v", fused)
	}
	for _, o := range fused {
		if !o.IsFused() || o.IsElementwise() || o.IsSource() {
			t.Errorf("%v: fused %v elementwise %v", o, o.IsFused(), o.IsElementwise())
		}
		if p, err := ParseOp(o.String()); err != nil || p != o {
			t.Errorf("ParseOp(%q) = %v, %v", o.String(), p, err)
		}
	}
	for _, o := range Ops() {
		if o.IsFused() {
			t.Errorf("Ops() lists fused %v", o)
		}
	}
	// The fused ops come after every existing op: values did not shift.
	if OpMoE+1 != OpFusedElementwise {
		t.Errorf("OpFusedElementwise = %d, want right after MoE (%d)", OpFusedElementwise, OpMoE)
	}
}

func elem(op Op, args ...ElemRef) ElemInstr { return ElemInstr{Op: op, Args: args} }
func inp(i int) ElemRef                     { return ElemRef{Index: i} }
func res(i int) ElemRef                     { return ElemRef{Instr: true, Index: i} }

func TestInferFusedElementwise(t *testing.T) {
	g := New()
	x := g.Input("x", tensor.F32, 2, 3)
	b := g.Input("b", tensor.F32, 3)
	m := g.Input("m", tensor.Bool, 2, 1)
	prog := []ElemInstr{
		elem(OpAdd, inp(0), inp(1)),
		{Op: OpClip, Args: []ElemRef{res(0)}, Min: -1, Max: 1},
		elem(OpGreater, res(1), inp(1)),
		elem(OpAnd, res(2), inp(2)),
		{Op: OpCast, Args: []ElemRef{res(3)}, To: tensor.F64},
	}
	n, err := g.Insert(OpFusedElementwise, Attrs{Program: prog}, x, b, m)
	if err != nil {
		t.Fatal(err)
	}
	if n.DType != tensor.F64 || !n.Shape.Equal(tensor.Shape{2, 3}) {
		t.Errorf("result %v %v, want f64 [2 3]", n.DType, n.Shape)
	}
	want := []tensor.DType{tensor.F32, tensor.F32, tensor.Bool, tensor.Bool, tensor.F64}
	for i, in := range n.Attrs.Program {
		if in.DType != want[i] {
			t.Errorf("instruction %d dtype %v, want %v", i, in.DType, want[i])
		}
	}
	if prog[0].DType != 0 {
		t.Error("Insert changed the caller's program")
	}
	// The node's program is its own: changing the caller's slice or a
	// clone's does not reach it.
	prog[0].Args[0] = inp(2)
	c := g.Clone()
	cn, _ := c.Lookup(n.Name)
	cn.Attrs.Program[0].Args[1] = inp(0)
	if n.Attrs.Program[0].Args[0] != inp(0) || n.Attrs.Program[0].Args[1] != inp(1) {
		t.Errorf("program shared: %v", n.Attrs.Program[0].Args)
	}
	g.Output(n)
	if err := Verify(g); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(Dump(g), "FusedElementwise(x, b, m)") {
		t.Errorf("dump:\n%s", Dump(g))
	}
}

func TestInferFusedErrors(t *testing.T) {
	g := New()
	x := g.Input("x", tensor.F32, 2, 3)
	y := g.Input("y", tensor.F32, 4)
	i := g.Input("i", tensor.I64, 2, 3)
	w := g.Param("w", tensor.F32, 3, 5)
	bias := g.Param("bias", tensor.F32, 5)
	for _, c := range []struct {
		name string
		op   Op
		a    Attrs
		ins  []*Node
		want string
	}{
		{"empty program", OpFusedElementwise, Attrs{}, []*Node{x}, "needs inputs"},
		{"no broadcast", OpFusedElementwise, Attrs{Program: []ElemInstr{elem(OpNeg, inp(0))}}, []*Node{x, y}, "broadcast"},
		{"later result", OpFusedElementwise, Attrs{Program: []ElemInstr{elem(OpNeg, res(0))}}, []*Node{x}, "earlier result"},
		{"bad input", OpFusedElementwise, Attrs{Program: []ElemInstr{elem(OpNeg, inp(3))}}, []*Node{x}, "does not refer"},
		{"not elementwise", OpFusedElementwise, Attrs{Program: []ElemInstr{elem(OpSoftmax, inp(0))}}, []*Node{x}, "not an elementwise op"},
		{"arity", OpFusedElementwise, Attrs{Program: []ElemInstr{elem(OpAdd, inp(0))}}, []*Node{x}, "not an elementwise op"},
		{"dtype", OpFusedElementwise, Attrs{Program: []ElemInstr{elem(OpExp, inp(0))}}, []*Node{i}, "not supported"},
		{"clip bounds", OpFusedElementwise, Attrs{Program: []ElemInstr{{Op: OpClip, Args: []ElemRef{inp(0)}, Min: 2, Max: 1}}}, []*Node{x}, "min 2 > max 1"},
		{"act", OpFusedMatMul, Attrs{Epilogue: Epilogue{Act: OpExp}}, []*Node{x, w}, "activation"},
		{"missing bias", OpFusedMatMul, Attrs{Epilogue: Epilogue{Bias: true}}, []*Node{x, w}, "extra inputs"},
		{"bias shape", OpFusedMatMul, Attrs{Epilogue: Epilogue{Bias: true}}, []*Node{x, w, y}, "along the last axis"},
		{"residual shape", OpFusedMatMul, Attrs{Epilogue: Epilogue{Bias: true, Residual: true}}, []*Node{x, w, bias, x}, "output shape"},
		{"trans rank", OpFusedMatMul, Attrs{TransB: true}, []*Node{x, y}, "rank >= 2"},
		{"inner dims", OpFusedMatMul, Attrs{TransA: true}, []*Node{x, w}, "inner dims"},
		{"norm residual", OpAddLayerNorm, Attrs{Axis: -1}, []*Node{x, y}, "does not broadcast"},
		{"norm inputs", OpAddRMSNorm, Attrs{Axis: -1}, []*Node{x}, "wrong number"},
		{"conv inputs", OpFusedConv2D, Attrs{Epilogue: Epilogue{Residual: true}}, []*Node{x, w}, "wrong number"},
	} {
		n, err := g.Insert(c.op, c.a, c.ins...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: node %v, error %v; want one containing %q", c.name, n, err, c.want)
		}
	}
	if g.Err() != nil {
		t.Errorf("Insert recorded an error on the graph: %v", g.Err())
	}
	// Apply records the error, as for every builder op.
	g.Apply(OpFusedMatMul, Attrs{}, x, y)
	if g.Err() == nil {
		t.Error("Apply of a bad FusedMatMul did not record an error")
	}
}

func TestInferFusedShapes(t *testing.T) {
	g := New()
	a := g.Input("a", tensor.F32, 2, 1, 7, 5) // stored [k, m] per batch: TransA
	b := g.Param("b", tensor.F32, 3, 6, 7)    // stored [n, k]: TransB
	bias := g.Param("bias", tensor.F32, 1, 6)
	r := g.Input("r", tensor.F32, 2, 3, 5, 6)
	mm, err := g.Insert(OpFusedMatMul, Attrs{TransA: true, TransB: true,
		Epilogue: Epilogue{Bias: true, Act: OpGelu, Residual: true}}, a, b, bias, r)
	if err != nil {
		t.Fatal(err)
	}
	if !mm.Shape.Equal(tensor.Shape{2, 3, 5, 6}) {
		t.Errorf("FusedMatMul shape %v", mm.Shape)
	}
	x := g.Input("x", tensor.F32, 2, 9, 8)
	rr := g.Input("rr", tensor.F32, 9, 8)
	s := g.Param("s", tensor.F32, 8)
	ln, err := g.Insert(OpAddLayerNorm, Attrs{Axis: -1, Eps: 1e-5}, x, rr, s, s)
	if err != nil || ln.Attrs.Axis != 2 || !ln.Shape.Equal(x.Shape) {
		t.Fatalf("AddLayerNorm %v attrs %+v: %v", ln, ln.Attrs, err)
	}
	img := g.Input("img", tensor.F32, 1, 3, 8, 8)
	w := g.Param("w", tensor.F32, 4, 3, 3, 3)
	cb := g.Param("cb", tensor.F32, 4)
	cv, err := g.Insert(OpFusedConv2D, Attrs{Strides: []int{2, 2}, Epilogue: Epilogue{Bias: true, Act: OpRelu}}, img, w, cb)
	if err != nil || !cv.Shape.Equal(tensor.Shape{1, 4, 3, 3}) || cv.Attrs.Groups != 1 {
		t.Fatalf("FusedConv2D %v attrs %+v: %v", cv, cv.Attrs, err)
	}
	g.Output(mm, ln, cv)
	if err := Verify(g); err != nil {
		t.Fatal(err)
	}
	// Resize re-infers fused nodes like any other.
	rg, err := Resize(g, 9, 5)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := rg.Lookup(ln.Name); !n.Shape.Equal(tensor.Shape{2, 5, 8}) {
		t.Errorf("resized AddLayerNorm %v", n.Shape)
	}
}

// TestInsertAnyCount inserts every op with zero to eight operands of
// several dtypes and ranks and zero attributes: each gets a node or an
// error, never a panic (a fused op's inference once indexed operands the
// arity check had not counted).
func TestInsertAnyCount(t *testing.T) {
	g := New()
	pool := []*Node{
		g.Input("x", tensor.F32, 2, 3), g.Input("img", tensor.F32, 1, 2, 4, 4), g.Input("q", tensor.U8),
		g.Input("w", tensor.I8, 3, 2), g.Input("i", tensor.I32, 2), g.Input("s", tensor.F32),
	}
	for op := OpInvalid + 1; op < numOps; op++ {
		if op.IsSource() {
			continue
		}
		for n := 0; n <= 8; n++ {
			for first := range pool {
				ins := make([]*Node, n)
				for k := range ins {
					ins[k] = pool[(first+k)%len(pool)]
				}
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%v with %d operands from %s: panic %v", op, n, pool[first].Name, r)
						}
					}()
					_, _ = g.Insert(op, Attrs{}, ins...)
				}()
			}
		}
	}
}
