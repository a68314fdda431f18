package conformance

import (
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// The elementwise rows come from the op list itself: every unary and
// binary op of graph.Ops gets cases for the dtypes its catalogue entry
// takes, so a new one joins the matrix with no edit here. Give it a
// domain (unaryInputs, binaryInputs) or attributes (unaryApply) when
// [-3, 3) or none are wrong for it.

// unaryApply builds the unary ops that take attributes.
var unaryApply = map[graph.Op]func(g *graph.Graph, x *graph.Node) *graph.Node{
	graph.OpLeakyRelu: func(g *graph.Graph, x *graph.Node) *graph.Node { return g.LeakyRelu(x, 0.1) },
	graph.OpClip:      func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Clip(x, -1, 1.5) },
	graph.OpElu:       func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Elu(x, 0.7) },
	graph.OpSelu:      func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Selu(x, 1.6732632, 1.050701) },
	graph.OpCelu:      func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Celu(x, 1.5) },
	graph.OpThresholdedRelu: func(g *graph.Graph, x *graph.Node) *graph.Node {
		return g.ThresholdedRelu(x, 0.75)
	},
	graph.OpShrink: func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Shrink(x, 0.5, 0.25) },
}

// unaryInputs draws a float unary op's input where it is not [-3, 3).
var unaryInputs = map[graph.Op]func(b *builder, dt tensor.DType, dims ...int) *graph.Node{
	graph.OpLog:   positive,
	graph.OpSqrt:  positive,
	graph.OpRsqrt: positive,
	graph.OpFloor: quarters,
	graph.OpCeil:  quarters,
	graph.OpRound: quarters, // halves: ties to even
	graph.OpAsin:  unit,
	graph.OpAcos:  unit,
	graph.OpAtanh: unit,
	graph.OpAcosh: func(b *builder, dt tensor.DType, dims ...int) *graph.Node { return b.ranged(dt, 1, 6, dims...) },
	graph.OpSign:  quarters, // zeros
}

// unit is the domain [-1, 1] of Asin, Acos and Atanh, ends included.
func unit(b *builder, dt tensor.DType, dims ...int) *graph.Node {
	return b.steps(dt, -1, 1, 1.0/64, dims...)
}

func positive(b *builder, dt tensor.DType, dims ...int) *graph.Node {
	return b.ranged(dt, 0.05, 4, dims...)
}

func quarters(b *builder, dt tensor.DType, dims ...int) *graph.Node {
	return b.steps(dt, -3, 3, 0.25, dims...)
}

// binaryInputs draws a binary op's two inputs where [-3, 3) is wrong.
var binaryInputs = map[graph.Op]func(b *builder, dt tensor.DType, da, db []int) (*graph.Node, *graph.Node){
	graph.OpPow: func(b *builder, dt tensor.DType, da, db []int) (*graph.Node, *graph.Node) {
		if dt.IsFloat() {
			return b.ranged(dt, 0.2, 3, da...), b.ranged(dt, -2, 2, db...)
		}
		return b.ranged(dt, -5, 5, da...), b.ranged(dt, 0, 5, db...)
	},
	graph.OpDiv:  divisor,
	graph.OpMod:  divisor,
	graph.OpFmod: divisor,
	// Shift counts past the width (8 and 9) give 0.
	graph.OpShiftLeft: func(b *builder, dt tensor.DType, da, db []int) (*graph.Node, *graph.Node) {
		return b.ranged(dt, 0, 256, da...), b.ranged(dt, 0, 10, db...)
	},
	graph.OpShiftRight: func(b *builder, dt tensor.DType, da, db []int) (*graph.Node, *graph.Node) {
		return b.ranged(dt, 0, 256, da...), b.ranged(dt, 0, 10, db...)
	},
}

// divisor draws a dividend and a divisor: non-zero for integers.
func divisor(b *builder, dt tensor.DType, da, db []int) (*graph.Node, *graph.Node) {
	if dt.IsFloat() {
		return b.in(dt, da...), b.in(dt, db...)
	}
	return b.in(dt, da...), b.nonzero(dt, db...)
}

// ties draws comparison inputs on a grid, so that equal pairs occur.
func ties(b *builder, dt tensor.DType, da, db []int) (*graph.Node, *graph.Node) {
	return b.steps(dt, -2, 2, 0.5, da...), b.steps(dt, -2, 2, 0.5, db...)
}

// takes reports whether op's catalogue entry handles dt natively.
func takes(op graph.Op, dt tensor.DType) bool {
	e, err := ops.Lookup(op)
	return err == nil && slices.Contains(e.DTypes, dt)
}

func unaryCases() []opCase {
	var cs []opCase
	for _, op := range graph.Ops() {
		if !op.IsUnary() {
			continue
		}
		apply := func(g *graph.Graph, x *graph.Node) *graph.Node { return g.Apply(op, graph.Attrs{}, x) }
		if f, ok := unaryApply[op]; ok {
			apply = f
		}
		if !takes(op, tensor.F32) {
			cs = append(cs, opCase{op, "bool", func(b *builder) { b.out(apply(b.g, b.in(tensor.Bool, 3, 5, 7))) }})
			continue
		}
		input := func(b *builder, dt tensor.DType, dims ...int) *graph.Node { return b.in(dt, dims...) }
		if f, ok := unaryInputs[op]; ok {
			input = f
		}
		cs = append(cs,
			opCase{op, "f32", func(b *builder) { b.out(apply(b.g, input(b, tensor.F32, 3, 5, 7))) }},
			opCase{op, "f16", func(b *builder) { b.out(apply(b.g, input(b, tensor.F16, 2, 9))) }},
			opCase{op, "f32 edges", func(b *builder) { b.out(apply(b.g, b.edges(tensor.F32, 6, 16))) }})
		if takes(op, tensor.I32) {
			cs = append(cs, opCase{op, "i32", func(b *builder) { b.out(apply(b.g, b.in(tensor.I32, 4, 6))) }})
		}
	}
	return cs
}

func binaryCases() []opCase {
	var cs []opCase
	for _, op := range graph.Ops() {
		if !op.IsBinary() {
			continue
		}
		input := func(b *builder, dt tensor.DType, da, db []int) (*graph.Node, *graph.Node) {
			return b.in(dt, da...), b.in(dt, db...)
		}
		switch f, ok := binaryInputs[op]; {
		case ok:
			input = f
		case op.IsCompare():
			input = ties
		}
		// case adds "name": op on inputs of dt shaped da and db.
		add := func(name string, dt tensor.DType, da, db []int) {
			cs = append(cs, opCase{op, name, func(b *builder) {
				x, y := input(b, dt, da, db)
				b.out(b.g.Apply(op, graph.Attrs{}, x, y))
			}})
		}
		if takes(op, tensor.U8) && !takes(op, tensor.F32) {
			add("u8 broadcast", tensor.U8, []int{2, 3, 1, 5}, []int{4, 1})
			continue
		}
		if !takes(op, tensor.F32) {
			add("bool broadcast", tensor.Bool, []int{2, 3, 1, 5}, []int{4, 1})
			continue
		}
		// Both sides broadcast; then the forms the CPU's vector kernels
		// take: y one value per row of x, the same shapes.
		add("f32 broadcast", tensor.F32, []int{2, 3, 1, 5}, []int{4, 1})
		add("f32 rows", tensor.F32, []int{3, 4, 6}, []int{4, 1})
		cs = append(cs, opCase{op, "f32 edges", func(b *builder) {
			b.out(b.g.Apply(op, graph.Attrs{}, b.edges(tensor.F32, 6, 16), b.edges(tensor.F32, 6, 16)))
		}})
		add("bf16 scalar", tensor.BF16, []int{3, 4}, []int{1})
		if takes(op, tensor.I32) {
			add("i32 broadcast", tensor.I32, []int{1, 6}, []int{4, 1})
		}
		if op == graph.OpMod || op == graph.OpFmod {
			add("i8 broadcast", tensor.I8, []int{1, 6}, []int{4, 1})
			add("i64 broadcast", tensor.I64, []int{1, 6}, []int{4, 1})
		}
		if takes(op, tensor.Bool) {
			add("bool", tensor.Bool, []int{3, 5}, []int{3, 5})
		}
	}
	return cs
}

func whereCastCases() []opCase {
	cs := []opCase{
		{graph.OpWhere, "f32 broadcast", func(b *builder) {
			b.out(b.g.Where(b.in(tensor.Bool, 3, 1, 5), b.x(1, 4, 5), b.x(3, 4, 1)))
		}},
		{graph.OpWhere, "i64", func(b *builder) {
			b.out(b.g.Where(b.in(tensor.Bool, 4, 6), b.in(tensor.I64, 4, 6), b.in(tensor.I64, 6)))
		}},
		{graph.OpWhere, "f16", func(b *builder) {
			b.out(b.g.Where(b.in(tensor.Bool, 2, 7), b.in(tensor.F16, 2, 7), b.in(tensor.F16, 1)))
		}},
	}
	for _, c := range []struct {
		from, to tensor.DType
		lo, hi   float64
	}{
		{tensor.F32, tensor.I32, -100, 100}, // truncation toward zero
		{tensor.F32, tensor.F16, -3, 3},
		{tensor.F32, tensor.BF16, -3, 3},
		{tensor.F16, tensor.F32, -3, 3},
		{tensor.I64, tensor.F32, -20, 20},
		{tensor.I32, tensor.I8, -300, 300}, // wraps
		{tensor.Bool, tensor.F32, 0, 1},
		{tensor.F32, tensor.Bool, -1, 1},
		{tensor.U8, tensor.I64, 0, 255},
	} {
		cs = append(cs, opCase{graph.OpCast, c.from.String() + " to " + c.to.String(), func(b *builder) {
			b.out(b.g.Cast(b.ranged(c.from, c.lo, c.hi, 3, 11), c.to))
		}})
	}
	return cs
}
