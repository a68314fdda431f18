package ptxemu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// The elementwise sweep mirrors the ptxas sweep of the ptx package
// (elementwiseVariants): every float unary op, broadcasting binaries,
// integer ops, comparisons, logic, Where, every cast pair and the fused
// chains, on small shapes, with NaN, ±Inf, ±0 and subnormals in the data.

var unaryFloatOps = []graph.Op{
	graph.OpNeg, graph.OpAbs, graph.OpExp, graph.OpLog, graph.OpSqrt, graph.OpRsqrt,
	graph.OpReciprocal, graph.OpTanh, graph.OpSigmoid, graph.OpRelu, graph.OpLeakyRelu,
	graph.OpGelu, graph.OpGeluTanh, graph.OpSilu, graph.OpErf, graph.OpFloor, graph.OpCeil,
	graph.OpRound, graph.OpClip,
}

var binaryOps = []graph.Op{graph.OpAdd, graph.OpSub, graph.OpMul, graph.OpDiv, graph.OpMax, graph.OpMin}

var allDTypes = []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.I8, tensor.U8, tensor.I32, tensor.I64, tensor.Bool}

func elementwiseCases() []*ptx.Elementwise {
	var es []*ptx.Elementwise
	add := func(e *ptx.Elementwise) { es = append(es, e) }
	shape := []int{4, 5, 6}
	full := []int{30, 6, 1}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16} {
		for _, op := range unaryFloatOps {
			add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("u_%v_%v", op, dt), Shape: shape, Out: dt,
				Inputs: []ptx.Operand{{DType: dt, Strides: full}},
				Body:   []ptx.Instr{{Op: op, Args: []int{0}, DType: dt, Attrs: graph.Attrs{Alpha: 0.1, Min: -1, Max: 2}}}}})
		}
		for _, op := range binaryOps {
			add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("b_%v_%v", op, dt), Shape: shape, Out: dt,
				Inputs: []ptx.Operand{{DType: dt, Strides: full}, {DType: dt, Strides: []int{0, 0, 1}}},
				Body:   []ptx.Instr{{Op: op, Args: []int{0, 1}, DType: dt}}}})
			add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("bm_%v_%v", op, dt), Shape: shape, Out: dt,
				Inputs: []ptx.Operand{{DType: dt, Strides: []int{6, 0, 1}}, {DType: dt, Strides: full}},
				Body:   []ptx.Instr{{Op: op, Args: []int{0, 1}, DType: dt}}}})
		}
	}
	for _, dt := range []tensor.DType{tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
		for _, op := range []graph.Op{graph.OpNeg, graph.OpAbs, graph.OpRelu, graph.OpClip} {
			if dt == tensor.U8 && op != graph.OpClip {
				continue
			}
			add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("i_%v_%v", op, dt), Shape: shape, Out: dt,
				Inputs: []ptx.Operand{{DType: dt, Strides: full}},
				Body:   []ptx.Instr{{Op: op, Args: []int{0}, DType: dt, Attrs: graph.Attrs{Min: -3, Max: 7}}}}})
		}
		for _, op := range binaryOps {
			add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("ib_%v_%v", op, dt), Shape: shape, Out: dt,
				Inputs: []ptx.Operand{{DType: dt, Strides: full}, {DType: dt, Strides: []int{0, 1, 0}}},
				Body:   []ptx.Instr{{Op: op, Args: []int{0, 1}, DType: dt}}}})
		}
	}
	for _, op := range []graph.Op{graph.OpEqual, graph.OpLess, graph.OpLessOrEqual, graph.OpGreater, graph.OpGreaterOrEqual} {
		for _, dt := range []tensor.DType{tensor.F32, tensor.I64} {
			add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("c_%v_%v", op, dt), Shape: shape, Out: tensor.Bool,
				Inputs: []ptx.Operand{{DType: dt, Strides: full}, {DType: dt, Strides: []int{0, 0, 0}}},
				Body:   []ptx.Instr{{Op: op, Args: []int{0, 1}, DType: tensor.Bool}}}})
		}
	}
	add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: "logic", Shape: shape, Out: tensor.Bool,
		Inputs: []ptx.Operand{{DType: tensor.Bool, Strides: full}, {DType: tensor.Bool, Strides: []int{1, 0, 0}}},
		Body: []ptx.Instr{{Op: graph.OpAnd, Args: []int{0, 1}, DType: tensor.Bool},
			{Op: graph.OpNot, Args: []int{2}, DType: tensor.Bool},
			{Op: graph.OpOr, Args: []int{3, 0}, DType: tensor.Bool}}}})
	for _, dt := range []tensor.DType{tensor.F16, tensor.I64} {
		add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: "where_" + dt.String(), Shape: shape, Out: dt,
			Inputs: []ptx.Operand{{DType: tensor.Bool, Strides: []int{0, 6, 1}}, {DType: dt, Strides: full}, {DType: dt, Strides: []int{0, 0, 0}}},
			Body:   []ptx.Instr{{Op: graph.OpWhere, Args: []int{0, 1, 2}, DType: dt}}}})
	}
	for _, from := range allDTypes {
		for _, to := range allDTypes {
			add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("cast_%v_%v", from, to), Shape: []int{77}, Out: to,
				Inputs: []ptx.Operand{{DType: from, Strides: []int{1}}},
				Body:   []ptx.Instr{{Op: graph.OpCast, Args: []int{0}, DType: to}}}})
		}
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.BF16} {
		add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: "chain_bias_gelu_" + dt.String(), Shape: []int{6, 40}, Out: dt,
			Inputs: []ptx.Operand{{DType: dt, Strides: []int{40, 1}}, {DType: dt, Strides: []int{0, 1}}},
			Body: []ptx.Instr{{Op: graph.OpAdd, Args: []int{0, 1}, DType: dt},
				{Op: graph.OpGelu, Args: []int{2}, DType: dt}}}})
		add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: "chain_swiglu_" + dt.String(), Shape: []int{4, 64}, Out: dt,
			Inputs: []ptx.Operand{{DType: dt, Strides: []int{64, 1}}, {DType: dt, Strides: []int{64, 1}}},
			Body: []ptx.Instr{{Op: graph.OpSilu, Args: []int{0}, DType: dt},
				{Op: graph.OpMul, Args: []int{2, 1}, DType: dt}}}})
		add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: "chain_residual_" + dt.String(), Shape: []int{2, 8, 16}, Out: dt,
			Inputs: []ptx.Operand{{DType: dt, Strides: []int{128, 16, 1}}, {DType: dt, Strides: []int{0, 0, 0}}, {DType: dt, Strides: []int{128, 1, 8}}},
			Body: []ptx.Instr{{Op: graph.OpMul, Args: []int{0, 1}, DType: dt},
				{Op: graph.OpAdd, Args: []int{3, 2}, DType: dt}}}})
		// A Cast to F16 inside an F32 chain rounds mid-chain.
		add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: "chain_cast_" + dt.String(), Shape: []int{50}, Out: dt,
			Inputs: []ptx.Operand{{DType: dt, Strides: []int{1}}},
			Body: []ptx.Instr{{Op: graph.OpExp, Args: []int{0}, DType: dt},
				{Op: graph.OpCast, Args: []int{1}, DType: tensor.F16},
				{Op: graph.OpCast, Args: []int{2}, DType: dt}}}})
	}
	long := &ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: "chain_all_unary", Shape: []int{300}, Out: tensor.F32,
		Inputs: []ptx.Operand{{DType: tensor.F32, Strides: []int{1}}}}}
	for i, op := range unaryFloatOps {
		long.Body = append(long.Body, ptx.Instr{Op: op, Args: []int{i}, DType: tensor.F32, Attrs: graph.Attrs{Alpha: 0.2, Min: -5, Max: 5}})
	}
	add(long)
	// Other block sizes: a partial block, several blocks, a grid-stride
	// loop that wraps (block 32 over 10000 elements uses 313 blocks).
	for _, b := range []int{32, 128, 1024} {
		add(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("block%d", b), Shape: []int{3000}, Out: tensor.F32, Inputs: []ptx.Operand{{DType: tensor.F32, Strides: []int{1}}}, Body: []ptx.Instr{{Op: graph.OpExp, Args: []int{0}, DType: tensor.F32}}}, Block: b})
	}
	return es
}

// refElementwise evaluates a fused region with the reference kernels:
// strided inputs materialised, floats widened to F32 (the kernel computes
// in f32), a Cast to F16/BF16 inside the chain rounding and widening
// again, the result converted to the output dtype at the end.
func refElementwise(t testing.TB, e *ptx.Elementwise, ins []tensor.Tensor) tensor.Tensor {
	g := graph.New()
	feeds := map[string]tensor.Tensor{}
	var vals []*graph.Node
	for i, op := range e.Inputs {
		x := widen(gatherStrided(ins[i], e.Shape, op.Strides, 0))
		nm := fmt.Sprintf("in%d", i)
		feeds[nm] = x
		vals = append(vals, g.Input(nm, x.DType, e.Shape...))
	}
	for _, in := range e.Body {
		args := make([]*graph.Node, len(in.Args))
		for a, v := range in.Args {
			args[a] = vals[v]
		}
		var n *graph.Node
		switch {
		case in.Op == graph.OpCast && wideType(in.DType) != in.DType:
			n = g.Cast(g.Cast(args[0], in.DType), tensor.F32)
		case in.Op == graph.OpCast:
			n = g.Cast(args[0], in.DType)
		default:
			n = g.Apply(in.Op, in.Attrs, args...)
		}
		vals = append(vals, n)
	}
	g.Output(vals[len(vals)-1])
	return castTo(interpret(t, g, feeds)[0], e.Out)
}

// inputsFor makes seeded data for every operand, avoiding integer zeros
// in a divisor (the reference fails on them; the GPU kernel's value is
// unspecified).
func inputsFor(r *rand.Rand, e *ptx.Elementwise, specials bool) []tensor.Tensor {
	ins := make([]tensor.Tensor, len(e.Inputs))
	for i, op := range e.Inputs {
		ins[i] = randTensor(r, op.DType, specials, spanOf(e.Shape, op.Strides))
	}
	for _, in := range e.Body {
		if in.Op == graph.OpDiv && len(in.Args) == 2 && in.Args[1] < len(ins) && !ins[in.Args[1]].DType.IsFloat() {
			d := ins[in.Args[1]]
			v := d.Float64s()
			for j := range v {
				if v[j] == 0 {
					v[j] = 3
				}
			}
			ins[in.Args[1]], _ = tensor.FromFloat64s(d.DType, d.Shape, v)
		}
	}
	return ins
}

// knownMismatch lists sweep cases where the emulator shows the emitted
// kernel disagreeing with the CPU reference, with the reason. The test
// requires them to still disagree, so a fix prompts removing the entry.
var knownMismatch = map[string]string{}

func TestSweepElementwise(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, e := range elementwiseCases() {
		k, err := ptx.EmitElementwise(e)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		ins := inputsFor(r, e, true)
		got := sentinel(e.Out, e.Shape...)
		if err := runKernel(t, k, Options{}, got, ins...); err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		want := refElementwise(t, e, ins)
		if why, known := knownMismatch[e.Name]; known {
			if compareTensors(&quietT{TB: t}, e.Name, got, want, tolFor(e.Out)) {
				t.Errorf("%s now matches the reference: remove it from knownMismatch (%s)", e.Name, why)
			}
			continue
		}
		compareTensors(t, e.Name, got, want, tolFor(e.Out))
	}
}

// quietT swallows errors, to ask whether a comparison would pass.
type quietT struct{ testing.TB }

func (q *quietT) Errorf(string, ...any) {}
func (q *quietT) Helper()               {}
