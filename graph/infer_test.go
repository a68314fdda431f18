package graph

import (
	"math"
	"slices"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// inferCase builds one node through the builder; dt and shape are the
// expected result, worked out by hand from numpy/ONNX rules. attrs, when
// set, checks the normalised attributes the builder stored.
type inferCase struct {
	name  string
	build func(g *Graph) *Node
	dt    tensor.DType
	shape tensor.Shape
	attrs func(t *testing.T, a Attrs)
}

func wantAxes(want ...int) func(*testing.T, Attrs) {
	return func(t *testing.T, a Attrs) {
		if !slices.Equal(a.Axes, want) {
			t.Errorf("Axes %v, want %v", a.Axes, want)
		}
	}
}

func wantAxis(want int) func(*testing.T, Attrs) {
	return func(t *testing.T, a Attrs) {
		if a.Axis != want {
			t.Errorf("Axis %d, want %d", a.Axis, want)
		}
	}
}

func unaryCases() []inferCase {
	type u struct {
		op    Op
		build func(g *Graph, x *Node) *Node
	}
	all := []u{
		{OpNeg, (*Graph).Neg}, {OpAbs, (*Graph).Abs}, {OpExp, (*Graph).Exp}, {OpLog, (*Graph).Log},
		{OpSqrt, (*Graph).Sqrt}, {OpRsqrt, (*Graph).Rsqrt}, {OpReciprocal, (*Graph).Reciprocal},
		{OpTanh, (*Graph).Tanh}, {OpSigmoid, (*Graph).Sigmoid}, {OpRelu, (*Graph).Relu},
		{OpLeakyRelu, func(g *Graph, x *Node) *Node { return g.LeakyRelu(x, 0.1) }},
		{OpGelu, (*Graph).Gelu}, {OpGeluTanh, (*Graph).GeluTanh}, {OpSilu, (*Graph).Silu},
		{OpErf, (*Graph).Erf}, {OpSin, (*Graph).Sin}, {OpCos, (*Graph).Cos},
		{OpFloor, (*Graph).Floor}, {OpCeil, (*Graph).Ceil}, {OpRound, (*Graph).Round},
		{OpClip, func(g *Graph, x *Node) *Node { return g.Clip(x, -1, 1) }},
		{OpElu, func(g *Graph, x *Node) *Node { return g.Elu(x, 1) }},
		{OpSelu, func(g *Graph, x *Node) *Node { return g.Selu(x, 1.67, 1.05) }},
		{OpCelu, func(g *Graph, x *Node) *Node { return g.Celu(x, 2) }},
		{OpThresholdedRelu, func(g *Graph, x *Node) *Node { return g.ThresholdedRelu(x, 1) }},
		{OpShrink, func(g *Graph, x *Node) *Node { return g.Shrink(x, 0.5, 0) }},
		{OpSoftplus, (*Graph).Softplus}, {OpSoftsign, (*Graph).Softsign}, {OpTan, (*Graph).Tan},
		{OpSinh, (*Graph).Sinh}, {OpCosh, (*Graph).Cosh}, {OpAsin, (*Graph).Asin}, {OpAcos, (*Graph).Acos},
		{OpAtan, (*Graph).Atan}, {OpAsinh, (*Graph).Asinh}, {OpAcosh, (*Graph).Acosh}, {OpAtanh, (*Graph).Atanh},
		{OpSign, (*Graph).Sign},
	}
	var cs []inferCase
	// Every float unary op keeps dtype and shape, for each float dtype.
	for _, c := range all {
		for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.F64} {
			cs = append(cs, inferCase{
				name:  c.op.String() + "/" + dt.String(),
				build: func(g *Graph) *Node { return c.build(g, in(g, dt, 2, 0, 3)) },
				dt:    dt, shape: sh(2, 0, 3),
			})
		}
	}
	// The integer and bool cases the op list documents.
	ints := []struct {
		op    Op
		build func(g *Graph, x *Node) *Node
		dt    tensor.DType
	}{
		{OpNeg, (*Graph).Neg, tensor.I32}, {OpNeg, (*Graph).Neg, tensor.I8},
		{OpAbs, (*Graph).Abs, tensor.I64}, {OpRelu, (*Graph).Relu, tensor.I32},
		{OpClip, func(g *Graph, x *Node) *Node { return g.Clip(x, 0, 5) }, tensor.U8},
		{OpClip, func(g *Graph, x *Node) *Node { return g.ClipMin(x, 0) }, tensor.I64},
		{OpNot, (*Graph).Not, tensor.Bool},
		{OpSign, (*Graph).Sign, tensor.I8}, {OpSign, (*Graph).Sign, tensor.U8},
	}
	for _, c := range ints {
		cs = append(cs, inferCase{
			name:  c.op.String() + "/" + c.dt.String(),
			build: func(g *Graph) *Node { return c.build(g, in(g, c.dt, 4)) },
			dt:    c.dt, shape: sh(4),
		})
	}
	cs = append(cs, inferCase{
		name:  "Clip/equal-bounds-scalar",
		build: func(g *Graph) *Node { return g.Clip(f32(g), 2, 2) },
		dt:    tensor.F32, shape: sh(),
		attrs: func(t *testing.T, a Attrs) {
			if a.Min != 2 || a.Max != 2 {
				t.Errorf("Min, Max = %v, %v", a.Min, a.Max)
			}
		},
	})
	return cs
}

func binaryCases() []inferCase {
	bin := func(name string, f func(g *Graph, x, y *Node) *Node, dt tensor.DType, a, b tensor.Shape, out tensor.DType, want tensor.Shape) inferCase {
		return inferCase{
			name:  name,
			build: func(g *Graph) *Node { return f(g, in(g, dt, a...), in(g, dt, b...)) },
			dt:    out, shape: want,
		}
	}
	F, B := tensor.F32, tensor.Bool
	return []inferCase{
		bin("Add/rank-extend", (*Graph).Add, F, sh(2, 3, 4), sh(3, 1), F, sh(2, 3, 4)),
		bin("Add/both-ways", (*Graph).Add, F, sh(2, 1, 5), sh(3, 1), F, sh(2, 3, 5)),
		bin("Sub/scalar", (*Graph).Sub, tensor.F64, sh(4), sh(), tensor.F64, sh(4)),
		bin("Mul/zero-dim", (*Graph).Mul, tensor.I32, sh(0, 3), sh(1), tensor.I32, sh(0, 3)),
		bin("Div/i64", (*Graph).Div, tensor.I64, sh(1, 6), sh(5, 1), tensor.I64, sh(5, 6)),
		bin("Pow/f16", (*Graph).Pow, tensor.F16, sh(7), sh(7), tensor.F16, sh(7)),
		bin("Max/u8", (*Graph).Max, tensor.U8, sh(2, 2), sh(2), tensor.U8, sh(2, 2)),
		bin("Min/bf16", (*Graph).Min, tensor.BF16, sh(), sh(), tensor.BF16, sh()),
		bin("Equal/f32", (*Graph).Equal, F, sh(3, 1), sh(4), B, sh(3, 4)),
		bin("Equal/bool", (*Graph).Equal, B, sh(2), sh(2), B, sh(2)),
		bin("Less/i32", (*Graph).Less, tensor.I32, sh(2, 3), sh(3), B, sh(2, 3)),
		bin("LessOrEqual/i8", (*Graph).LessOrEqual, tensor.I8, sh(1), sh(5), B, sh(5)),
		bin("Greater/f64", (*Graph).Greater, tensor.F64, sh(4, 1, 2), sh(3, 1), B, sh(4, 3, 2)),
		bin("GreaterOrEqual/u8", (*Graph).GreaterOrEqual, tensor.U8, sh(6), sh(6), B, sh(6)),
		bin("And", (*Graph).And, B, sh(2, 1), sh(1, 3), B, sh(2, 3)),
		bin("Or", (*Graph).Or, B, sh(), sh(4), B, sh(4)),
		bin("Xor", (*Graph).Xor, B, sh(3, 1), sh(2), B, sh(3, 2)),
		bin("Mod/i32", (*Graph).Mod, tensor.I32, sh(2, 3), sh(3), tensor.I32, sh(2, 3)),
		bin("Fmod/f64", (*Graph).Fmod, tensor.F64, sh(4), sh(), tensor.F64, sh(4)),
		bin("ShiftLeft/u8", (*Graph).ShiftLeft, tensor.U8, sh(2, 1), sh(3), tensor.U8, sh(2, 3)),
		bin("ShiftRight/u8", (*Graph).ShiftRight, tensor.U8, sh(5), sh(1), tensor.U8, sh(5)),
		{
			name: "Where/three-way",
			build: func(g *Graph) *Node {
				return g.Where(in(g, B, 2, 1, 4), f32(g, 3, 1), f32(g))
			},
			dt: F, shape: sh(2, 3, 4),
		},
		{
			name: "Where/i64",
			build: func(g *Graph) *Node {
				return g.Where(in(g, B, 5), in(g, tensor.I64, 1), in(g, tensor.I64, 5))
			},
			dt: tensor.I64, shape: sh(5),
		},
		{
			name:  "Cast/f32-f16",
			build: func(g *Graph) *Node { return g.Cast(f32(g, 2, 3), tensor.F16) },
			dt:    tensor.F16, shape: sh(2, 3),
		},
		{
			name:  "Cast/bool-i64",
			build: func(g *Graph) *Node { return g.Cast(in(g, B), tensor.I64) },
			dt:    tensor.I64, shape: sh(),
		},
	}
}

func linalgCases() []inferCase {
	mm := func(name string, dt tensor.DType, a, b, want tensor.Shape) inferCase {
		return inferCase{
			name:  "MatMul/" + name,
			build: func(g *Graph) *Node { return g.MatMul(in(g, dt, a...), in(g, dt, b...)) },
			dt:    dt, shape: want,
		}
	}
	gemm := func(name string, a, b, c tensor.Shape, ta, tb bool, want tensor.Shape) inferCase {
		return inferCase{
			name: "Gemm/" + name,
			build: func(g *Graph) *Node {
				var cn *Node
				if c != nil {
					cn = f32(g, c...)
				}
				return g.Gemm(f32(g, a...), f32(g, b...), cn, 1, 1, ta, tb)
			},
			dt: tensor.F32, shape: want,
		}
	}
	F := tensor.F32
	return []inferCase{
		mm("2d", F, sh(3, 4), sh(4, 5), sh(3, 5)),
		mm("vec-mat", F, sh(4), sh(4, 5), sh(5)),
		mm("mat-vec", F, sh(3, 4), sh(4), sh(3)),
		mm("vec-vec", F, sh(4), sh(4), sh()),
		mm("vec-batch", F, sh(4), sh(2, 4, 6), sh(2, 6)),
		mm("batch-vec", F, sh(2, 3, 4), sh(4), sh(2, 3)),
		mm("batch-broadcast", F, sh(2, 1, 3, 4), sh(5, 4, 6), sh(2, 5, 3, 6)),
		mm("batch-both-ways", F, sh(7, 1, 3, 4), sh(1, 6, 4, 2), sh(7, 6, 3, 2)),
		mm("batch-2d", tensor.F16, sh(8, 3, 4), sh(4, 2), sh(8, 3, 2)),
		mm("zero-k", tensor.F64, sh(3, 0), sh(0, 2), sh(3, 2)),
		gemm("plain", sh(3, 4), sh(4, 5), nil, false, false, sh(3, 5)),
		gemm("transA", sh(4, 3), sh(4, 5), nil, true, false, sh(3, 5)),
		gemm("transB", sh(3, 4), sh(5, 4), sh(5), false, true, sh(3, 5)),
		gemm("both", sh(4, 3), sh(5, 4), sh(3, 1), true, true, sh(3, 5)),
		gemm("scalar-C", sh(2, 4), sh(4, 6), sh(), false, false, sh(2, 6)),
		gemm("full-C", sh(2, 4), sh(4, 6), sh(2, 6), false, false, sh(2, 6)),
	}
}

func reduceCases() []inferCase {
	x := func(g *Graph) *Node { return f32(g, 2, 3, 4, 5) }
	F := tensor.F32
	return []inferCase{
		{name: "ReduceSum/all", build: func(g *Graph) *Node { return g.ReduceSum(x(g), false) },
			dt: F, shape: sh(), attrs: wantAxes(0, 1, 2, 3)},
		{name: "ReduceSum/all-keep", build: func(g *Graph) *Node { return g.ReduceSum(x(g), true) },
			dt: F, shape: sh(1, 1, 1, 1), attrs: wantAxes(0, 1, 2, 3)},
		{name: "ReduceMean/last-negative", build: func(g *Graph) *Node { return g.ReduceMean(x(g), false, -1) },
			dt: F, shape: sh(2, 3, 4), attrs: wantAxes(3)},
		{name: "ReduceMax/unsorted-keep", build: func(g *Graph) *Node { return g.ReduceMax(x(g), true, -1, 0) },
			dt: F, shape: sh(1, 3, 4, 1), attrs: wantAxes(0, 3)},
		{name: "ReduceMin/middle", build: func(g *Graph) *Node { return g.ReduceMin(x(g), false, 2, 1) },
			dt: F, shape: sh(2, 5), attrs: wantAxes(1, 2)},
		{name: "ReduceProd/i32", build: func(g *Graph) *Node { return g.ReduceProd(in(g, tensor.I32, 2, 3, 4, 5), true, -3) },
			dt: tensor.I32, shape: sh(2, 1, 4, 5), attrs: wantAxes(1)},
		{name: "ReduceSum/empty-axis", build: func(g *Graph) *Node { return g.ReduceSum(f32(g, 3, 0), false, 1) },
			dt: F, shape: sh(3), attrs: wantAxes(1)},
		{name: "ReduceSum/scalar", build: func(g *Graph) *Node { return g.ReduceSum(f32(g), false) },
			dt: F, shape: sh()},
		{name: "ArgMax/last", build: func(g *Graph) *Node { return g.ArgMax(f32(g, 2, 3, 4), -1, false) },
			dt: tensor.I64, shape: sh(2, 3), attrs: wantAxis(2)},
		{name: "ArgMin/keep-i32", build: func(g *Graph) *Node { return g.ArgMin(in(g, tensor.I32, 2, 3, 4), 0, true) },
			dt: tensor.I64, shape: sh(1, 3, 4), attrs: wantAxis(0)},
		{name: "Softmax/last", build: func(g *Graph) *Node { return g.Softmax(f32(g, 2, 7), -1) },
			dt: F, shape: sh(2, 7), attrs: wantAxis(1)},
		{name: "LogSoftmax/first-f64", build: func(g *Graph) *Node { return g.LogSoftmax(in(g, tensor.F64, 2, 7), 0) },
			dt: tensor.F64, shape: sh(2, 7), attrs: wantAxis(0)},
		{name: "TopK/values", build: func(g *Graph) *Node { v, _ := g.TopK(f32(g, 2, 7, 3), 4, -2, false); return v },
			dt: F, shape: sh(2, 4, 3), attrs: func(t *testing.T, a Attrs) {
				if a.Axis != 1 || a.K != 4 || a.Index != 0 || a.Smallest {
					t.Errorf("attrs %+v", a)
				}
			}},
		{name: "TopK/indices-i32", build: func(g *Graph) *Node { _, i := g.TopK(in(g, tensor.I32, 5, 2), 0, 0, true); return i },
			dt: tensor.I64, shape: sh(0, 2), attrs: func(t *testing.T, a Attrs) {
				if a.Axis != 0 || a.K != 0 || a.Index != 1 || !a.Smallest {
					t.Errorf("attrs %+v", a)
				}
			}},
		{name: "CumSum/i64", build: func(g *Graph) *Node { return g.CumSum(in(g, tensor.I64, 3, 4, 5), -2, true, true) },
			dt: tensor.I64, shape: sh(3, 4, 5), attrs: func(t *testing.T, a Attrs) {
				if a.Axis != 1 || !a.Exclusive || !a.Reverse {
					t.Errorf("attrs %+v", a)
				}
			}},
	}
}

func normCases() []inferCase {
	F := tensor.F32
	return []inferCase{
		{name: "LayerNorm/scale-bias", build: func(g *Graph) *Node {
			return g.LayerNorm(f32(g, 2, 5, 8), f32(g, 8), f32(g, 8), -1, 1e-5)
		}, dt: F, shape: sh(2, 5, 8), attrs: wantAxis(2)},
		{name: "LayerNorm/two-axes-scale", build: func(g *Graph) *Node {
			return g.LayerNorm(f32(g, 2, 5, 8), f32(g, 5, 8), nil, 1, 1e-5)
		}, dt: F, shape: sh(2, 5, 8), attrs: wantAxis(1)},
		{name: "LayerNorm/bias-only", build: func(g *Graph) *Node {
			n := g.LayerNorm(in(g, tensor.F16, 3, 4), nil, in(g, tensor.F16, 4), -1, 0)
			// The builder supplies a ones scale so the bias stays input 2.
			if len(n.Inputs) != 3 || n.Inputs[1].DType != tensor.F16 || !n.Inputs[1].Shape.Equal(sh(4)) {
				return g.fail("bias-only LayerNorm inputs %v", n.Inputs)
			}
			return n
		}, dt: tensor.F16, shape: sh(3, 4), attrs: wantAxis(1)},
		{name: "LayerNorm/plain", build: func(g *Graph) *Node {
			return g.LayerNorm(f32(g, 6), nil, nil, 0, 1e-6)
		}, dt: F, shape: sh(6), attrs: wantAxis(0)},
		{name: "RMSNorm/scale", build: func(g *Graph) *Node {
			return g.RMSNorm(f32(g, 4, 6), f32(g, 6), -1, 1e-6)
		}, dt: F, shape: sh(4, 6), attrs: wantAxis(1)},
		{name: "RMSNorm/none", build: func(g *Graph) *Node {
			return g.RMSNorm(in(g, tensor.BF16, 2, 3, 4), nil, -2, 1e-6)
		}, dt: tensor.BF16, shape: sh(2, 3, 4), attrs: wantAxis(1)},
		{name: "BatchNorm", build: func(g *Graph) *Node {
			return g.BatchNorm(f32(g, 2, 3, 5, 5), f32(g, 3), f32(g, 3), f32(g, 3), f32(g, 3), 1e-5)
		}, dt: F, shape: sh(2, 3, 5, 5)},
		{name: "BatchNorm/rank2", build: func(g *Graph) *Node {
			return g.BatchNorm(f32(g, 4, 3), f32(g, 3), f32(g, 3), f32(g, 3), f32(g, 3), 1e-5)
		}, dt: F, shape: sh(4, 3)},
		{name: "InstanceNorm/f16", build: func(g *Graph) *Node {
			return g.InstanceNorm(in(g, tensor.F16, 2, 3, 5), in(g, tensor.F16, 3), in(g, tensor.F16, 3), 1e-5)
		}, dt: tensor.F16, shape: sh(2, 3, 5)},
	}
}

func convCases() []inferCase {
	conv := func(name string, x, w tensor.Shape, bias bool, o ConvOpts, want tensor.Shape) inferCase {
		return inferCase{
			name: "Conv2D/" + name,
			build: func(g *Graph) *Node {
				var b *Node
				if bias {
					b = f32(g, w[0])
				}
				return g.Conv2D(f32(g, x...), f32(g, w...), b, o)
			},
			dt: tensor.F32, shape: want,
		}
	}
	pool := func(name string, avg bool, x tensor.Shape, o PoolOpts, want tensor.Shape) inferCase {
		return inferCase{
			name: name,
			build: func(g *Graph) *Node {
				if avg {
					return g.AvgPool2D(f32(g, x...), o)
				}
				return g.MaxPool2D(f32(g, x...), o)
			},
			dt: tensor.F32, shape: want,
		}
	}
	defaults := conv("defaults", sh(1, 3, 32, 32), sh(16, 3, 3, 3), false, ConvOpts{}, sh(1, 16, 30, 30))
	defaults.attrs = checkConvDefaults
	return []inferCase{
		defaults,
		// (32 + 1 + 1 - 3) / 2 + 1 = 16
		conv("stride2-pad1", sh(1, 3, 32, 32), sh(16, 3, 3, 3), true,
			ConvOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}, sh(1, 16, 16, 16)),
		// dilated span 2*(3-1)+1 = 5: 32 - 5 + 1 = 28
		conv("dilation2", sh(1, 3, 32, 32), sh(8, 3, 3, 3), false,
			ConvOpts{Dilations: []int{2, 2}}, sh(1, 8, 28, 28)),
		// H: (10 + 1 + 2 - 3)/2 + 1 = 6; W: span 2*(2-1)+1 = 3, (7 + 0 + 1 - 3)/3 + 1 = 2
		conv("groups-asymmetric", sh(2, 4, 10, 7), sh(6, 2, 3, 2), true,
			ConvOpts{Strides: []int{2, 3}, Pads: []int{1, 0, 2, 1}, Dilations: []int{1, 2}, Groups: 2}, sh(2, 6, 6, 2)),
		conv("depthwise", sh(1, 8, 5, 5), sh(8, 1, 3, 3), true,
			ConvOpts{Pads: []int{1, 1, 1, 1}, Groups: 8}, sh(1, 8, 5, 5)),
		conv("depthwise-multiplier", sh(1, 4, 6, 6), sh(8, 1, 1, 1), false,
			ConvOpts{Groups: 4, Strides: []int{4, 4}}, sh(1, 8, 2, 2)),
		// (7 - 3)/2 + 1 = 3
		pool("MaxPool2D/3x3s2", false, sh(1, 3, 7, 7), PoolOpts{Kernel: []int{3, 3}, Strides: []int{2, 2}}, sh(1, 3, 3, 3)),
		// (9 - 2)/2 + 1 = 4 (floor), (8 - 2)/2 + 1 = 4
		pool("MaxPool2D/floor", false, sh(2, 4, 9, 8), PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 2}}, sh(2, 4, 4, 4)),
		// H: 5 + 1 + 1 - 3 + 1 = 5; W: 4 + 0 + 1 - 2 + 1 = 4
		pool("AvgPool2D/pads", true, sh(1, 1, 5, 4), PoolOpts{Kernel: []int{3, 2}, Pads: []int{1, 0, 1, 1}, CountPad: true}, sh(1, 1, 5, 4)),
		{name: "GlobalAvgPool/4d", build: func(g *Graph) *Node { return g.GlobalAvgPool(f32(g, 2, 3, 5, 6)) },
			dt: tensor.F32, shape: sh(2, 3, 1, 1)},
		{name: "GlobalAvgPool/3d", build: func(g *Graph) *Node { return g.GlobalAvgPool(in(g, tensor.F64, 2, 3, 5)) },
			dt: tensor.F64, shape: sh(2, 3, 1)},
		{name: "GlobalAvgPool/5d", build: func(g *Graph) *Node { return g.GlobalAvgPool(f32(g, 1, 2, 3, 4, 5)) },
			dt: tensor.F32, shape: sh(1, 2, 1, 1, 1)},
	}
}

// slice1 slices axis 0 of a [10 8 6] input.
func slice1(start, end, step int) func(g *Graph) *Node {
	return func(g *Graph) *Node {
		return g.Slice(f32(g, 10, 8, 6), SliceSpec{Starts: []int{start}, Ends: []int{end}, Steps: []int{step}})
	}
}

func shapeCases() []inferCase {
	F := tensor.F32
	x234 := func(g *Graph) *Node { return f32(g, 2, 3, 4) }
	return []inferCase{
		{name: "Reshape/infer", build: func(g *Graph) *Node { return g.Reshape(x234(g), 4, -1) }, dt: F, shape: sh(4, 6),
			attrs: func(t *testing.T, a Attrs) {
				if !a.Shape.Equal(sh(4, 6)) {
					t.Errorf("Shape %v not resolved", a.Shape)
				}
			}},
		{name: "Reshape/flat", build: func(g *Graph) *Node { return g.Reshape(x234(g), -1) }, dt: F, shape: sh(24)},
		{name: "Reshape/zero-dim", build: func(g *Graph) *Node { return g.Reshape(in(g, tensor.I8, 0, 3), 3, 0) }, dt: tensor.I8, shape: sh(3, 0)},
		{name: "Reshape/to-scalar", build: func(g *Graph) *Node { return g.Reshape(f32(g, 1, 1)) }, dt: F, shape: sh()},
		{name: "Transpose/default", build: func(g *Graph) *Node { return g.Transpose(x234(g)) }, dt: F, shape: sh(4, 3, 2),
			attrs: func(t *testing.T, a Attrs) {
				if !slices.Equal(a.Perm, []int{2, 1, 0}) {
					t.Errorf("Perm %v", a.Perm)
				}
			}},
		{name: "Transpose/perm", build: func(g *Graph) *Node { return g.Transpose(x234(g), 1, 2, 0) }, dt: F, shape: sh(3, 4, 2)},
		{name: "Concat/last", build: func(g *Graph) *Node { return g.Concat(-1, f32(g, 2, 3), f32(g, 2, 5), f32(g, 2, 0)) },
			dt: F, shape: sh(2, 8), attrs: wantAxis(1)},
		{name: "Concat/one-bool", build: func(g *Graph) *Node { return g.Concat(0, in(g, tensor.Bool, 4)) },
			dt: tensor.Bool, shape: sh(4)},
		{name: "Split/first", build: func(g *Graph) *Node { return g.Split(f32(g, 10, 4), 0, 3, 7)[0] }, dt: F, shape: sh(3, 4)},
		{name: "Split/second", build: func(g *Graph) *Node { return g.Split(f32(g, 10, 4), 0, 3, 7)[1] }, dt: F, shape: sh(7, 4),
			attrs: func(t *testing.T, a Attrs) {
				if a.Index != 1 || a.Axis != 0 || !slices.Equal(a.Sizes, []int{3, 7}) {
					t.Errorf("attrs %+v", a)
				}
			}},
		{name: "Split/negative-axis", build: func(g *Graph) *Node { return g.Split(f32(g, 10, 4), -1, 1, 3)[1] },
			dt: F, shape: sh(10, 3), attrs: wantAxis(1)},
		{name: "Split/empty-piece", build: func(g *Graph) *Node { return g.Split(f32(g, 10, 4), 0, 0, 10)[0] }, dt: F, shape: sh(0, 4)},
		{name: "SplitEqual", build: func(g *Graph) *Node {
			p := g.SplitEqual(in(g, tensor.I32, 10, 4), -1, 2)
			if len(p) != 2 {
				return g.fail("%d pieces", len(p))
			}
			return p[1]
		}, dt: tensor.I32, shape: sh(10, 2), attrs: wantAxis(1)},
		// Slice lengths are Python's len(range(10)[start:end:step]).
		{name: "Slice/2:7", build: slice1(2, 7, 1), dt: F, shape: sh(5, 8, 6),
			attrs: func(t *testing.T, a Attrs) {
				if !slices.Equal(a.Axes, []int{0}) || !slices.Equal(a.Starts, []int{2}) || !slices.Equal(a.Ends, []int{7}) || !slices.Equal(a.Steps, []int{1}) {
					t.Errorf("attrs %+v", a)
				}
			}},
		{name: "Slice/::2", build: slice1(0, 100, 2), dt: F, shape: sh(5, 8, 6)},
		{name: "Slice/1::3", build: slice1(1, 10, 3), dt: F, shape: sh(3, 8, 6)}, // 1, 4, 7
		{name: "Slice/-100:100", build: slice1(-100, 100, 1), dt: F, shape: sh(10, 8, 6)},
		{name: "Slice/3:3", build: slice1(3, 3, 1), dt: F, shape: sh(0, 8, 6)},
		{name: "Slice/5:-100", build: slice1(5, -100, 1), dt: F, shape: sh(0, 8, 6)},
		{name: "Slice/-100:-200:-1", build: slice1(-100, -200, -1), dt: F, shape: sh(0, 8, 6)},
		{name: "Slice/-100:5:-1", build: slice1(-100, 5, -1), dt: F, shape: sh(0, 8, 6)},
		{name: "Slice/-100:-9", build: slice1(-100, -9, 1), dt: F, shape: sh(1, 8, 6)},
		{name: "Slice/7:2", build: slice1(7, 2, 1), dt: F, shape: sh(0, 8, 6)},
		{name: "Slice/2:7:-1", build: slice1(2, 7, -1), dt: F, shape: sh(0, 8, 6)},
		{name: "Slice/-1:-1000:-1", build: slice1(-1, -1000, -1), dt: F, shape: sh(10, 8, 6),
			attrs: func(t *testing.T, a Attrs) {
				// Clamped: start 9, end -1 ("through index 0").
				if a.Starts[0] != 9 || a.Ends[0] != -1 {
					t.Errorf("starts %v ends %v", a.Starts, a.Ends)
				}
			}},
		{name: "Slice/100:0:-1", build: slice1(100, 0, -1), dt: F, shape: sh(9, 8, 6)}, // 9 .. 1
		{name: "Slice/-1:-11:-1", build: slice1(-1, -11, -1), dt: F, shape: sh(10, 8, 6)},
		{name: "Slice/-1:-10:-1", build: slice1(-1, -10, -1), dt: F, shape: sh(9, 8, 6)},
		{name: "Slice/-1:-1:-1", build: slice1(-1, -1, -1), dt: F, shape: sh(0, 8, 6)},
		{name: "Slice/8:1:-3", build: slice1(8, 1, -3), dt: F, shape: sh(3, 8, 6)},     // 8, 5, 2
		{name: "Slice/-2::-4", build: slice1(-2, -100, -4), dt: F, shape: sh(3, 8, 6)}, // 8, 4, 0
		{name: "Slice/step-maxint", build: slice1(0, 10, math.MaxInt), dt: F, shape: sh(1, 8, 6)},
		{name: "Slice/step-minint", build: slice1(9, -100, math.MinInt), dt: F, shape: sh(1, 8, 6)},
		{name: "Slice/axes", build: func(g *Graph) *Node {
			return g.Slice(f32(g, 10, 8, 6), SliceSpec{Axes: []int{-1, 0}, Starts: []int{1, -3}, Ends: []int{5, 10}})
		}, dt: F, shape: sh(3, 8, 4), attrs: func(t *testing.T, a Attrs) {
			if !slices.Equal(a.Axes, []int{2, 0}) || !slices.Equal(a.Starts, []int{1, 7}) || !slices.Equal(a.Steps, []int{1, 1}) {
				t.Errorf("attrs %+v", a)
			}
		}},
		{name: "Slice/empty-dim-reverse", build: func(g *Graph) *Node {
			return g.Slice(f32(g, 0, 2), SliceSpec{Starts: []int{-1}, Ends: []int{-100}, Steps: []int{-1}})
		}, dt: F, shape: sh(0, 2)},
		{name: "Gather/2d-indices", build: func(g *Graph) *Node { return g.Gather(f32(g, 5, 4, 3), in(g, tensor.I64, 2, 6), 1) },
			dt: F, shape: sh(5, 2, 6, 3), attrs: wantAxis(1)},
		{name: "Gather/scalar-index", build: func(g *Graph) *Node { return g.Gather(in(g, tensor.U8, 5, 4, 3), in(g, tensor.I32), 0) },
			dt: tensor.U8, shape: sh(4, 3)},
		{name: "Gather/last", build: func(g *Graph) *Node { return g.Gather(f32(g, 5, 4, 3), in(g, tensor.I32, 7), -1) },
			dt: F, shape: sh(5, 4, 7), attrs: wantAxis(2)},
		{name: "Expand/rank-up", build: func(g *Graph) *Node { return g.Expand(f32(g, 3, 1), 2, 1, 4) }, dt: F, shape: sh(2, 3, 4),
			attrs: func(t *testing.T, a Attrs) {
				if !a.Shape.Equal(sh(2, 3, 4)) {
					t.Errorf("Shape %v, want the broadcast result", a.Shape)
				}
			}},
		{name: "Expand/both-ways", build: func(g *Graph) *Node { return g.Expand(f32(g, 1, 4), 3, 1) }, dt: F, shape: sh(3, 4)},
		{name: "Expand/smaller-target", build: func(g *Graph) *Node { return g.Expand(f32(g, 5, 1, 1), 1, 2) }, dt: F, shape: sh(5, 1, 2)},
		{name: "Expand/none", build: func(g *Graph) *Node { return g.Expand(in(g, tensor.Bool, 2, 3)) }, dt: tensor.Bool, shape: sh(2, 3)},
		{name: "Squeeze/all", build: func(g *Graph) *Node { return g.Squeeze(f32(g, 1, 3, 1, 2, 1)) }, dt: F, shape: sh(3, 2),
			attrs: wantAxes(0, 2, 4)},
		{name: "Squeeze/last", build: func(g *Graph) *Node { return g.Squeeze(f32(g, 1, 3, 1, 2, 1), -1) }, dt: F, shape: sh(1, 3, 1, 2),
			attrs: wantAxes(4)},
		{name: "Squeeze/two", build: func(g *Graph) *Node { return g.Squeeze(f32(g, 1, 3, 1, 2, 1), 2, 0) }, dt: F, shape: sh(3, 2, 1),
			attrs: wantAxes(0, 2)},
		{name: "Squeeze/none-to-drop", build: func(g *Graph) *Node { return g.Squeeze(f32(g, 3, 2)) }, dt: F, shape: sh(3, 2)},
		{name: "Unsqueeze/front", build: func(g *Graph) *Node { return g.Unsqueeze(f32(g, 3, 4), 0) }, dt: F, shape: sh(1, 3, 4)},
		{name: "Unsqueeze/back", build: func(g *Graph) *Node { return g.Unsqueeze(f32(g, 3, 4), -1) }, dt: F, shape: sh(3, 4, 1),
			attrs: wantAxes(2)},
		{name: "Unsqueeze/two", build: func(g *Graph) *Node { return g.Unsqueeze(f32(g, 3, 4), 1, -1) }, dt: F, shape: sh(3, 1, 4, 1),
			attrs: wantAxes(1, 3)},
		{name: "Unsqueeze/unsorted", build: func(g *Graph) *Node { return g.Unsqueeze(f32(g, 3, 4), 2, 0) }, dt: F, shape: sh(1, 3, 1, 4),
			attrs: wantAxes(0, 2)},
		{name: "Unsqueeze/scalar", build: func(g *Graph) *Node { return g.Unsqueeze(f32(g), 0, 1) }, dt: F, shape: sh(1, 1)},
		{name: "Flatten/0", build: func(g *Graph) *Node { return g.Flatten(x234(g), 0) }, dt: F, shape: sh(1, 24), attrs: wantAxis(0)},
		{name: "Flatten/1", build: func(g *Graph) *Node { return g.Flatten(x234(g), 1) }, dt: F, shape: sh(2, 12)},
		{name: "Flatten/rank", build: func(g *Graph) *Node { return g.Flatten(x234(g), 3) }, dt: F, shape: sh(24, 1), attrs: wantAxis(3)},
		{name: "Flatten/-1", build: func(g *Graph) *Node { return g.Flatten(x234(g), -1) }, dt: F, shape: sh(6, 4), attrs: wantAxis(2)},
		{name: "Flatten/-3", build: func(g *Graph) *Node { return g.Flatten(x234(g), -3) }, dt: F, shape: sh(1, 24), attrs: wantAxis(0)},
		{name: "Flatten/scalar", build: func(g *Graph) *Node { return g.Flatten(f32(g), 0) }, dt: F, shape: sh(1, 1)},
		{name: "Pad/constant", build: func(g *Graph) *Node { return g.Pad(f32(g, 2, 3), []int{1, 0, 2, 3}, PadConstant, 7) }, dt: F, shape: sh(5, 6)},
		{name: "Pad/reflect", build: func(g *Graph) *Node { return g.Pad(f32(g, 2, 3), []int{0, 2, 1, 2}, PadReflect, 0) }, dt: F, shape: sh(3, 7)},
		{name: "Pad/edge", build: func(g *Graph) *Node { return g.Pad(in(g, tensor.I32, 2, 3), []int{3, 3, 3, 3}, PadEdge, 0) }, dt: tensor.I32, shape: sh(8, 9)},
		{name: "Pad/reflect-unpadded-size1", build: func(g *Graph) *Node { return g.Pad(f32(g, 1, 3), []int{0, 1, 0, 1}, PadReflect, 0) }, dt: F, shape: sh(1, 5)},
		{name: "Tile", build: func(g *Graph) *Node { return g.Tile(f32(g, 2, 3), 3, 2) }, dt: F, shape: sh(6, 6)},
		{name: "Tile/zero", build: func(g *Graph) *Node { return g.Tile(in(g, tensor.Bool, 2, 3), 0, 1) }, dt: tensor.Bool, shape: sh(0, 3)},
	}
}

func blockCases() []inferCase {
	F := tensor.F32
	return []inferCase{
		{name: "Attention/gqa", build: func(g *Graph) *Node {
			return g.Attention(f32(g, 2, 8, 5, 16), f32(g, 2, 2, 7, 16), f32(g, 2, 2, 7, 32), nil, AttentionOpts{})
		}, dt: F, shape: sh(2, 8, 5, 32)},
		{name: "Attention/bool-mask", build: func(g *Graph) *Node {
			return g.Attention(f32(g, 1, 4, 5, 8), f32(g, 1, 4, 7, 8), f32(g, 1, 4, 7, 8), in(g, tensor.Bool, 5, 7), AttentionOpts{Causal: true})
		}, dt: F, shape: sh(1, 4, 5, 8), attrs: func(t *testing.T, a Attrs) {
			if !a.Causal {
				t.Error("Causal lost")
			}
		}},
		{name: "Attention/additive-mask", build: func(g *Graph) *Node {
			return g.Attention(f32(g, 2, 4, 3, 8), f32(g, 2, 1, 6, 8), f32(g, 2, 1, 6, 4), f32(g, 2, 1, 1, 6), AttentionOpts{Scale: 0.5})
		}, dt: F, shape: sh(2, 4, 3, 4), attrs: func(t *testing.T, a Attrs) {
			if a.Scale != 0.5 {
				t.Errorf("Scale %v", a.Scale)
			}
		}},
		{name: "Attention/f16-full-mask", build: func(g *Graph) *Node {
			h := tensor.F16
			return g.Attention(in(g, h, 1, 2, 3, 4), in(g, h, 1, 2, 3, 4), in(g, h, 1, 2, 3, 4), in(g, h, 1, 2, 3, 3), AttentionOpts{})
		}, dt: tensor.F16, shape: sh(1, 2, 3, 4)},
		{name: "RoPE", build: func(g *Graph) *Node {
			return g.RoPE(f32(g, 2, 4, 6, 8), f32(g, 6, 4), f32(g, 6, 4), false)
		}, dt: F, shape: sh(2, 4, 6, 8)},
		{name: "RoPE/interleaved-2d", build: func(g *Graph) *Node {
			return g.RoPE(in(g, tensor.F64, 3, 2), in(g, tensor.F64, 3, 1), in(g, tensor.F64, 3, 1), true)
		}, dt: tensor.F64, shape: sh(3, 2), attrs: func(t *testing.T, a Attrs) {
			if !a.Interleaved {
				t.Error("Interleaved lost")
			}
		}},
	}
}

func sourceCases() []inferCase {
	return []inferCase{
		{name: "Input", build: func(g *Graph) *Node { return g.Input("x", tensor.I64, 3, 0) }, dt: tensor.I64, shape: sh(3, 0)},
		{name: "Param", build: func(g *Graph) *Node { return g.Param("w", tensor.BF16) }, dt: tensor.BF16, shape: sh()},
		{name: "Constant", build: func(g *Graph) *Node {
			t, _ := tensor.FromI32(sh(2, 2), []int32{1, 2, 3, 4})
			return g.Constant(t)
		}, dt: tensor.I32, shape: sh(2, 2)},
		{name: "Scalar", build: func(g *Graph) *Node { return g.Scalar(3) }, dt: tensor.F32, shape: sh()},
		{name: "ConstF32", build: func(g *Graph) *Node { return g.ConstF32(sh(3), []float32{1, 2, 3}) }, dt: tensor.F32, shape: sh(3)},
	}
}

func allInferCases() []inferCase {
	var cs []inferCase
	for _, f := range []func() []inferCase{sourceCases, unaryCases, binaryCases, linalgCases, reduceCases, normCases, convCases, shapeCases, indexCases, blockCases, resizeCases, poolNDCases, detectCases, loopCases, quantCases, moeCases} {
		cs = append(cs, f()...)
	}
	return cs
}

func TestInferShapes(t *testing.T) {
	covered := map[Op]bool{}
	for _, c := range allInferCases() {
		t.Run(c.name, func(t *testing.T) {
			g := New()
			n := c.build(g)
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			if !n.Valid() {
				t.Fatal("invalid node without an error")
			}
			covered[n.Op] = true
			if n.DType != c.dt || !n.Shape.Equal(c.shape) {
				t.Errorf("got %v%v, want %v%v", n.DType, n.Shape, c.dt, c.shape)
			}
			if c.attrs != nil {
				c.attrs(t, n.Attrs)
			}
			// Every well-built graph verifies, which re-runs inference on
			// the stored (normalised) attributes.
			g.Output(n)
			if err := Verify(g); err != nil {
				t.Errorf("Verify: %v", err)
			}
		})
	}
	for _, op := range Ops() {
		if !covered[op] {
			t.Errorf("no inference case for %v", op)
		}
	}
}

// TestSliceLenPython checks SliceLen against Python's range semantics,
// computed here by stepping through the indices one by one.
func TestSliceLenPython(t *testing.T) {
	count := func(st, en, step int) int {
		n := 0
		for i := st; (step > 0 && i < en) || (step < 0 && i > en); i += step {
			n++
		}
		return n
	}
	for st := -1; st <= 6; st++ {
		for en := -1; en <= 6; en++ {
			for _, step := range []int{-7, -3, -2, -1, 1, 2, 3, 7} {
				if got, want := SliceLen(st, en, step), count(st, en, step); got != want {
					t.Errorf("SliceLen(%d, %d, %d) = %d, want %d", st, en, step, got, want)
				}
			}
		}
	}
}

// checkConvDefaults checks that a 2-D conv's (or ConvTranspose's) unset
// window attributes were filled in: stride 1, no padding, dilation 1,
// one group.
func checkConvDefaults(t *testing.T, a Attrs) {
	if !slices.Equal(a.Strides, []int{1, 1}) || !slices.Equal(a.Pads, []int{0, 0, 0, 0}) ||
		!slices.Equal(a.Dilations, []int{1, 1}) || a.Groups != 1 {
		t.Errorf("defaults not filled in: %+v", a)
	}
}
