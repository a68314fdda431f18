package graph

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/tensor"
)

// RNNCell picks the recurrence Graph.Recurrent unrolls (ONNX's RNN, GRU
// and LSTM, with their gate orders: GRU z, r, h; LSTM i, o, f, c).
type RNNCell int

// The recurrences.
const (
	CellRNN  RNNCell = iota // Hₜ = f(Xₜ·Wᵀ + Hₜ₋₁·Rᵀ + Wb + Rb)
	CellGRU                 // update z, reset r, candidate h
	CellLSTM                // input i, output o, forget f, cell c; optional peepholes
)

// Gates is the number of gate blocks stacked in W, R and each half of B.
func (c RNNCell) Gates() int { return [...]int{1, 3, 4}[c] }

// acts is the number of activation functions per direction.
func (c RNNCell) acts() int { return [...]int{1, 2, 3}[c] }

// String names the cell as ONNX does.
func (c RNNCell) String() string {
	if c < CellRNN || c > CellLSTM {
		return fmt.Sprintf("RNNCell(%d)", int(c))
	}
	return [...]string{"RNN", "GRU", "LSTM"}[c]
}

// RNNDirection is the order the sequence is read in.
type RNNDirection int

// The directions; Bidirectional runs both and stacks their outputs on the
// direction axis (forward first).
const (
	RNNForward RNNDirection = iota
	RNNReverse
	RNNBidirectional
)

// RNNActivation is one of ONNX's recurrent activation functions (Relu,
// Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh,
// HardSigmoid, Elu, Softsign, Softplus; names compare case-insensitively)
// with the alpha and beta of those that take them. The caller supplies
// the defaults (ONNX's: LeakyRelu 0.01, ThresholdedRelu 1, HardSigmoid
// 0.2 and 0.5, Elu 1).
type RNNActivation struct {
	Name        string
	Alpha, Beta float32
}

// RNNOpts configures Graph.Recurrent.
type RNNOpts struct {
	Cell      RNNCell
	Direction RNNDirection
	Hidden    int
	// Activations lists the cell's functions for each direction in turn
	// (RNN: f; GRU: f, g; LSTM: f, g, h); nil means the defaults (RNN
	// Tanh; GRU and LSTM Sigmoid then Tanh), and one direction's list
	// serves both directions of a bidirectional layer.
	Activations       []RNNActivation
	Clip              float32 // > 0 clips every gate's pre-activation to [-Clip, Clip]
	InputForget       bool    // LSTM: the forget gate is 1 - the input gate
	LinearBeforeReset bool    // GRU: r ⊙ (Hₜ₋₁·Rhᵀ + Rbh) instead of (r ⊙ Hₜ₋₁)·Rhᵀ
	BatchFirst        bool    // ONNX layout 1: X [B, S, I], Y [B, S, D, H], states [B, D, H]
}

// RNNInputs are Graph.Recurrent's operands, with ONNX's shapes (S steps,
// B batch, I inputs, H hidden, G gates, D directions): X [S, B, I]; W
// [D, G·H, I]; R [D, G·H, H]; optional B [D, 2·G·H] (Wb then Rb),
// SeqLens [B] (I32 or I64; steps at or past a row's length leave its
// state alone and give zeros in Y), H0 and C0 [D, B, H], and the LSTM's
// peepholes P [D, 3·H] (i, o, f).
type RNNInputs struct {
	X, W, R, B, SeqLens, H0, C0, P *Node
}

// MaxRNNSteps is the longest sequence Graph.Recurrent unrolls.
const MaxRNNSteps = 4096

// Recurrent builds an RNN, GRU or LSTM layer as a composition of kiln's
// ops, unrolled over the (static) sequence length. It returns Y [S, D, B,
// H], the last hidden state Y_h [D, B, H] and, for an LSTM, the last cell
// state Y_c (nil otherwise); BatchFirst swaps the batch axis to the front
// of each.
//
// Why unrolled compositions rather than a dedicated op: the input
// projection of every step is one GEMM ([S·B, I]·Wᵀ, which fuse turns into
// one FusedMatMul with the bias as its epilogue), each step's recurrent
// product is a small MatMul whose Add of that step's projection fuse makes
// the FusedMatMul's residual, and the gate arithmetic between products
// fuses into FusedElementwise kernels. So the layer runs on the fast GEMM
// and elementwise kernels on every backend that has them (CPU, CUDA,
// Metal) with no new kernel, descriptor or lowering to keep in step, and
// the planner reuses each step's buffers. The cost is graph size (about
// twenty nodes per step and direction), which MaxRNNSteps bounds.
func (g *Graph) Recurrent(in RNNInputs, o RNNOpts) (y, yh, yc *Node) {
	bad := &Node{Op: OpInvalid}
	if g.err != nil {
		return bad, bad, bad
	}
	r, err := g.newRNN(in, o)
	if err != nil {
		g.fail("%s: %v", o.Cell, err)
		return bad, bad, bad
	}
	return r.build()
}

// rnn is one Recurrent call's state while it builds.
type rnn struct {
	g                 *Graph
	in                RNNInputs
	o                 RNNOpts
	dt                tensor.DType
	steps, batch, hid int
	dirs              int
	acts              []RNNActivation // per direction: o.Cell.acts() each
}

func (g *Graph) newRNN(in RNNInputs, o RNNOpts) (*rnn, error) {
	if in.X == nil || in.W == nil || in.R == nil {
		return nil, fmt.Errorf("X, W and R are required")
	}
	for _, n := range []*Node{in.X, in.W, in.R, in.B, in.SeqLens, in.H0, in.C0, in.P} {
		if n != nil && (!n.Valid() || n.graph != g) {
			return nil, fmt.Errorf("input %s is invalid or belongs to another graph", n)
		}
	}
	if o.Cell < CellRNN || o.Cell > CellLSTM || o.Direction < RNNForward || o.Direction > RNNBidirectional {
		return nil, fmt.Errorf("cell %d or direction %d unknown", o.Cell, o.Direction)
	}
	x := in.X
	if !x.DType.IsFloat() || x.Shape.Rank() != 3 {
		return nil, fmt.Errorf("X must be a 3-D float tensor, got %v %v", x.DType, x.Shape)
	}
	r := &rnn{g: g, in: in, o: o, dt: x.DType, steps: x.Shape[0], batch: x.Shape[1], hid: o.Hidden, dirs: 1}
	if o.BatchFirst {
		r.steps, r.batch = r.batch, r.steps
	}
	if o.Direction == RNNBidirectional {
		r.dirs = 2
	}
	if r.hid <= 0 {
		return nil, fmt.Errorf("hidden size %d must be positive", r.hid)
	}
	if r.steps > MaxRNNSteps {
		return nil, fmt.Errorf("sequence length %d is past the %d steps kiln unrolls", r.steps, MaxRNNSteps)
	}
	gh, D, B, H := o.Cell.Gates()*r.hid, r.dirs, r.batch, r.hid
	states := []int{D, B, H}
	if o.BatchFirst {
		states = []int{B, D, H}
	}
	want := []struct {
		name  string
		n     *Node
		shape []int
	}{
		{"W", in.W, []int{D, gh, x.Shape[2]}}, {"R", in.R, []int{D, gh, H}}, {"B", in.B, []int{D, 2 * gh}},
		{"initial_h", in.H0, states}, {"initial_c", in.C0, states}, {"P", in.P, []int{D, 3 * H}},
	}
	for _, w := range want {
		if w.n == nil {
			continue
		}
		if w.n.DType != r.dt || !w.n.Shape.Equal(tensor.Shape(w.shape)) {
			return nil, fmt.Errorf("%s is %v %v, want %v %v", w.name, w.n.DType, w.n.Shape, r.dt, tensor.Shape(w.shape))
		}
	}
	if (in.C0 != nil || in.P != nil) && o.Cell != CellLSTM {
		return nil, fmt.Errorf("initial_c and P belong to an LSTM")
	}
	if s := in.SeqLens; s != nil && ((s.DType != tensor.I32 && s.DType != tensor.I64) || !s.Shape.Equal(tensor.Shape{B})) {
		return nil, fmt.Errorf("sequence_lens is %v %v, want I32 or I64 [%d]", s.DType, s.Shape, B)
	}
	acts, err := rnnActs(o, r.dirs)
	if err != nil {
		return nil, err
	}
	r.acts = acts
	return r, nil
}

// rnnActs expands o.Activations to one list per direction, checking names.
func rnnActs(o RNNOpts, dirs int) ([]RNNActivation, error) {
	n := o.Cell.acts()
	acts := o.Activations
	if acts == nil {
		acts = []RNNActivation{{Name: "Sigmoid"}, {Name: "Tanh"}, {Name: "Tanh"}}[:n]
		if o.Cell == CellRNN {
			acts = []RNNActivation{{Name: "Tanh"}}
		}
	}
	if len(acts) == n && dirs == 2 {
		acts = append(append([]RNNActivation(nil), acts...), acts...)
	}
	if len(acts) != n*dirs {
		return nil, fmt.Errorf("%d activations for %d direction(s), want %d", len(acts), dirs, n*dirs)
	}
	for _, a := range acts {
		if !IsRNNActivation(a.Name) {
			return nil, fmt.Errorf("activation %q is not one of ONNX's recurrent activations", a.Name)
		}
	}
	return acts, nil
}

// IsRNNActivation reports whether name (in any case) is one of the
// recurrent activations RNNActivation accepts.
func IsRNNActivation(name string) bool { return rnnActNames[strings.ToLower(name)] }

var rnnActNames = map[string]bool{
	"relu": true, "tanh": true, "sigmoid": true, "affine": true, "leakyrelu": true, "thresholdedrelu": true,
	"scaledtanh": true, "hardsigmoid": true, "elu": true, "softsign": true, "softplus": true,
}

// num is a scalar constant of the layer's dtype.
func (r *rnn) num(v float64) *Node {
	t, err := tensor.FromFloat64s(r.dt, tensor.Shape{}, []float64{v})
	if err != nil {
		return r.g.fail("%s: constant %v: %v", r.o.Cell, v, err)
	}
	return r.g.Constant(t)
}

// act applies activation a through kiln's elementwise ops (fuse merges
// them with the gate arithmetic around them); Affine, ScaledTanh and
// HardSigmoid, which have no op of their own, are spelled out.
func (r *rnn) act(a RNNActivation, x *Node) *Node {
	g, al, be := r.g, float64(a.Alpha), float64(a.Beta)
	switch strings.ToLower(a.Name) {
	case "relu":
		return g.Relu(x)
	case "tanh":
		return g.Tanh(x)
	case "sigmoid":
		return g.Sigmoid(x)
	case "affine":
		return g.Add(g.Mul(x, r.num(al)), r.num(be))
	case "leakyrelu":
		return g.LeakyRelu(x, a.Alpha)
	case "thresholdedrelu":
		return g.ThresholdedRelu(x, a.Alpha)
	case "scaledtanh":
		return g.Mul(g.Tanh(g.Mul(x, r.num(be))), r.num(al))
	case "hardsigmoid":
		return g.Clip(g.Add(g.Mul(x, r.num(al)), r.num(be)), 0, 1)
	case "elu":
		return g.Elu(x, a.Alpha)
	case "softsign":
		return g.Softsign(x)
	case "softplus":
		return g.Softplus(x)
	}
	return g.fail("%s: activation %q", r.o.Cell, a.Name) // rnnActs checked the names
}

// clip applies the layer's clip to a pre-activation.
func (r *rnn) clip(x *Node) *Node {
	if r.o.Clip <= 0 {
		return x
	}
	return r.g.Clip(x, -r.o.Clip, r.o.Clip)
}

// pick is x[d] of a per-direction operand, with the direction axis
// dropped (the state operands are moved to direction-first first).
func (r *rnn) pick(x *Node, d int, dims ...int) *Node {
	if x == nil {
		return nil
	}
	return r.g.Reshape(r.g.Slice(x, SliceSpec{Axes: []int{0}, Starts: []int{d}, Ends: []int{d + 1}}), dims...)
}

// cols is x[:, lo:hi].
func (r *rnn) cols(x *Node, lo, hi int) *Node {
	return r.g.Slice(x, SliceSpec{Axes: []int{1}, Starts: []int{lo}, Ends: []int{hi}})
}

// sum adds the non-nil terms (nil stands for zero; all nil gives nil).
func (r *rnn) sum(ts ...*Node) *Node {
	var s *Node
	for _, t := range ts {
		switch {
		case t == nil:
		case s == nil:
			s = t
		default:
			s = r.g.Add(s, t)
		}
	}
	return s
}

// build unrolls every direction and assembles the outputs.
func (r *rnn) build() (y, yh, yc *Node) {
	g, o := r.g, r.o
	x, h0, c0 := r.in.X, r.in.H0, r.in.C0
	if o.BatchFirst {
		x = g.Transpose(x, 1, 0, 2)
		if h0 != nil {
			h0 = g.Transpose(h0, 1, 0, 2)
		}
		if c0 != nil {
			c0 = g.Transpose(c0, 1, 0, 2)
		}
	}
	x2 := g.Reshape(x, r.steps*r.batch, x.Shape[2])
	var mask []*Node // per step, [B, 1] Bool: the step is inside the row's sequence
	if s := r.in.SeqLens; s != nil && !fullLengths(s, r.steps) {
		s2 := g.Reshape(s, r.batch, 1)
		for t := range r.steps {
			tt, err := tensor.FromFloat64s(s.DType, tensor.Shape{}, []float64{float64(t)})
			if err != nil {
				g.fail("%s: %v", o.Cell, err)
				return
			}
			mask = append(mask, g.Less(g.Constant(tt), s2))
		}
	}
	ys := make([][]*Node, r.steps) // [t][d]: [1, 1, B, H]
	var hs, cs []*Node             // per direction: [1, B, H]
	for d := range r.dirs {
		reverse := o.Direction == RNNReverse || d == 1
		outs, h, c := r.direction(d, reverse, x2, r.pick(h0, d, r.batch, r.hid), r.pick(c0, d, r.batch, r.hid), mask)
		for t, yt := range outs {
			ys[t] = append(ys[t], g.Reshape(yt, 1, 1, r.batch, r.hid))
		}
		hs = append(hs, g.Reshape(h, 1, r.batch, r.hid))
		if c != nil {
			cs = append(cs, g.Reshape(c, 1, r.batch, r.hid))
		}
	}
	steps := make([]*Node, r.steps)
	for t, yt := range ys {
		steps[t] = g.Concat(1, yt...)
	}
	y, yh = g.Concat(0, steps...), g.Concat(0, hs...)
	if cs != nil {
		yc = g.Concat(0, cs...)
	}
	if o.BatchFirst {
		y, yh = g.Transpose(y, 2, 0, 1, 3), g.Transpose(yh, 1, 0, 2)
		if yc != nil {
			yc = g.Transpose(yc, 1, 0, 2)
		}
	}
	return y, yh, yc
}

// fullLengths reports whether sequence lengths known at build time are
// all the full length, so no step needs a mask.
func fullLengths(s *Node, steps int) bool {
	if s.Op != OpConstant || s.Value == nil {
		return false
	}
	for _, v := range s.Value.Float64s() {
		if int(v) != steps {
			return false
		}
	}
	return true
}
