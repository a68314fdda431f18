package graph

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// The fused ops are made by the fuse passes, never by the builder: each
// stands for a subgraph of builder ops and computes exactly what that
// subgraph computes (the reference kernels are built from the same
// formulas). Their inputs:
//
//	FusedElementwise  any inputs; Attrs.Program is evaluated once per element
//	                  of the broadcast of all input shapes
//	FusedMatMul       a, b [, bias] [, residual]: numpy matmul of a (or aᵀ on
//	                  its last two dims with TransA) and b (bᵀ with TransB),
//	                  then Attrs.Epilogue
//	AddLayerNorm      x, r [, scale [, bias]]: LayerNorm(x + r), r
//	                  broadcasting to x
//	AddRMSNorm        x, r [, scale]: RMSNorm(x + r)
//	FusedConv2D       x, w [, bias] [, residual]: Conv2D (bias present when
//	                  Epilogue.Bias), then the epilogue's activation,
//	                  residual and post-residual activation, or
//	                  (Epilogue.Pool2x2) its activation and a 2×2 max
//	                  pooling
//	DynQuantMatMul    x, w, wZero, wScale [, bias]: ONNX Runtime's dynamic
//	                  quantization of a MatMul: DynamicQuantizeLinear(x) →
//	                  (q, s, z); MatMulInteger(q, w, z, wZero) → I32;
//	                  Cast to F32, times s·wScale, plus bias. x is F32
//	                  [..., K], w I8 or U8 [K, N], wZero (w's dtype) and
//	                  wScale (F32) scalars or [N], bias F32 [N].
//	QDQMatMul         x, xScale, xZero, w, wZero, wScale [, bias]: a MatMul
//	                  (or Gemm) between QuantizeLinear/DequantizeLinear
//	                  pairs, ONNX Runtime's static QDQ form: q =
//	                  QuantizeLinear(x, xScale, xZero) (U8, per tensor);
//	                  the I32 sums Σ_p (q - xZero)(w - wZero); times
//	                  float32(xScale·wScale), plus bias, then
//	                  Epilogue.Act. x is F32 [..., K], w I8 or U8 [K, N]
//	                  ([N, K] with TransB), wZero (w's dtype) and wScale
//	                  (F32) scalars or [N], bias F32 [N] (Epilogue.Bias).
//	QDQConv           x, xScale, xZero, w, wZero, wScale [, bias]: the same
//	                  for a Conv2D (Strides, Pads, Dilations, Groups as
//	                  Conv2D's): x F32 NCHW, w I8 or U8 [M, C/groups, kh,
//	                  kw], wZero and wScale scalars or [M], bias F32 [M].

// firstFused and lastFused bound the op kinds that only passes make.
const firstFused, lastFused = OpFusedElementwise, OpQDQConv

// FusedOps lists the op kinds that only fusion passes make.
func FusedOps() []Op {
	var out []Op
	for o := firstFused; o <= lastFused; o++ {
		out = append(out, o)
	}
	return out
}

// IsFused reports whether only fusion passes make the op.
func (o Op) IsFused() bool { return o >= firstFused && o <= lastFused }

// ElemRef is an operand of an ElemInstr: input Index of the fused node, or
// (Instr set) the result of the program's instruction Index, which must
// come earlier.
type ElemRef struct {
	Instr bool
	Index int
}

// ElemInstr is one elementwise op (unary, binary, Where or Cast) of a
// FusedElementwise program. Every instruction works at the node's output
// shape; node inputs broadcast to it.
type ElemInstr struct {
	Op       Op
	Args     []ElemRef
	Alpha    float32      // LeakyRelu, Elu, Selu, Celu, ThresholdedRelu, Shrink
	Beta     float32      // Selu's gamma, Shrink's bias
	Min, Max float32      // Clip
	To       tensor.DType // Cast
	// DType is the result's dtype; inference fills it in.
	DType tensor.DType
}

// Attrs are the instruction's attributes as the op's own node holds them.
func (in ElemInstr) Attrs() Attrs {
	return Attrs{Alpha: in.Alpha, Beta: in.Beta, Min: in.Min, Max: in.Max, To: in.To}
}

// ElemInstrOf makes the instruction computing node n's op (with its
// attributes) on args.
func ElemInstrOf(n *Node, args ...ElemRef) ElemInstr {
	return ElemInstr{Op: n.Op, Args: append([]ElemRef(nil), args...), Alpha: n.Attrs.Alpha,
		Beta: n.Attrs.Beta, Min: n.Attrs.Min, Max: n.Attrs.Max, To: n.Attrs.To, DType: n.DType}
}

func cloneProgram(p []ElemInstr) []ElemInstr {
	if p == nil {
		return nil
	}
	out := make([]ElemInstr, len(p))
	for i, in := range p {
		in.Args = append([]ElemRef(nil), in.Args...)
		out[i] = in
	}
	return out
}

// Epilogue is what FusedMatMul and FusedConv2D apply to the product, in
// this order: add the bias, apply the activation, add the residual, pool.
type Epilogue struct {
	// Bias: an extra input added along the output's last axis (FusedMatMul:
	// shape [N] or [1, ..., 1, N]) or channel axis (FusedConv2D: [M], the
	// conv's own bias input).
	Bias bool
	// Act is OpInvalid for none, or one of EpilogueActs, or (FusedConv2D
	// only) OpClip with bounds Min and Max.
	Act Op
	// Min and Max are the bounds of an OpClip Act (as Attrs.Min and
	// Attrs.Max of the Clip it stands for: ±Inf for an open side); zero
	// otherwise.
	Min, Max float32
	// Residual: an extra input of exactly the output's shape, added after
	// Act.
	Residual bool
	// PostAct (FusedConv2D only, with Residual) is OpInvalid for none, or
	// one of EpilogueActs applied after the residual add: a ResNet block
	// ends Relu(Conv + BN + identity), and applying it while the conv's
	// output tile is in cache spares a pass over the block's output.
	PostAct Op
	// Pool2x2 (FusedConv2D only, never with Residual): the result is max
	// pooled last, as MaxPool2D with a 2×2 window, stride 2 and no padding
	// does (floor mode), so the node's shape is the conv's with OH and OW
	// halved, rounding down. The ResNet stem's conv and pool then write
	// only the pooled output.
	Pool2x2 bool
}

// EpilogueActs are the activations an Epilogue may apply.
var EpilogueActs = []Op{OpRelu, OpGelu, OpGeluTanh, OpSilu, OpSigmoid, OpTanh}

// IsEpilogueAct reports whether op is one of EpilogueActs.
func IsEpilogueAct(op Op) bool {
	for _, a := range EpilogueActs {
		if a == op {
			return true
		}
	}
	return false
}

// ActAttrs are the attributes of Act's op as its own node holds them
// (Clip's bounds).
func (e Epilogue) ActAttrs() Attrs { return Attrs{Min: e.Min, Max: e.Max} }

// IsConvEpilogueAct reports whether op may be a FusedConv2D epilogue's
// Act: one of EpilogueActs, or OpClip (with the epilogue's bounds).
func IsConvEpilogueAct(op Op) bool { return op == OpClip || IsEpilogueAct(op) }

// Inputs is how many inputs the epilogue adds to the product's two.
func (e Epilogue) Inputs() int { return b2i(e.Bias) + b2i(e.Residual) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Insert adds a node of any non-source op, like Apply, but returns an
// inference error instead of recording it on the graph: a pass can try a
// rewrite and keep the graph usable when it does not fit.
func (g *Graph) Insert(op Op, a Attrs, ins ...*Node) (*Node, error) {
	if g.err != nil {
		return nil, g.err
	}
	if op.IsSource() || op == OpInvalid || op >= numOps {
		return nil, fmt.Errorf("graph: Insert: %v is not an op with inputs", op)
	}
	for i, in := range ins {
		if !g.owns(in) {
			return nil, fmt.Errorf("graph: Insert %v: input %d is not a node of this graph", op, i)
		}
	}
	a = a.clone()
	dt, s, err := infer(op, &a, ins)
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		return nil, fmt.Errorf("graph: Insert %v (inputs %s): %w", op, describe(ins), err)
	}
	n := g.append(&Node{Op: op, Inputs: append([]*Node(nil), ins...), Attrs: a, DType: dt, Shape: s})
	if !n.Valid() {
		return nil, g.err
	}
	return n, nil
}
