package onnx

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
)

func init() {
	register("RNN", 7, func(c *ctx) ([]*graph.Node, error) { return mapRecurrent(c, graph.CellRNN) })
	register("GRU", 7, func(c *ctx) ([]*graph.Node, error) { return mapRecurrent(c, graph.CellGRU) })
	register("LSTM", 7, func(c *ctx) ([]*graph.Node, error) { return mapRecurrent(c, graph.CellLSTM) })
}

// rnnActDefaults are ONNX's default alpha and beta of the recurrent
// activations that take them (the defaults of the ops of the same name).
var rnnActDefaults = map[string][2]float32{
	"affine": {1, 0}, "leakyrelu": {0.01, 0}, "thresholdedrelu": {1, 0},
	"scaledtanh": {1, 1}, "hardsigmoid": {0.2, 0.5}, "elu": {1, 0},
}

// rnnActTakes says which of alpha and beta an activation reads.
var rnnActTakes = map[string][2]bool{
	"affine": {true, true}, "leakyrelu": {true, false}, "thresholdedrelu": {true, false},
	"scaledtanh": {true, true}, "hardsigmoid": {true, true}, "elu": {true, false},
}

// mapRecurrent maps RNN, GRU and LSTM onto graph.Recurrent, which unrolls
// the layer over the sequence into GEMMs and fused gate arithmetic (its
// doc says why). Inputs: X, W, R, B, sequence_lens, initial_h, then for
// the LSTM initial_c and P; outputs Y, Y_h (and Y_c).
func mapRecurrent(c *ctx, cell graph.RNNCell) ([]*graph.Node, error) {
	var in graph.RNNInputs
	var err error
	for i, p := range []**graph.Node{&in.X, &in.W, &in.R} {
		if *p, err = c.need(i); err != nil {
			return nil, err
		}
	}
	if e, err := ops.Lookup(graph.OpMatMul); err != nil || !e.Supports(in.X.DType) {
		return nil, unsupportedf("%v on %v tensors", cell, in.X.DType)
	}
	in.B, in.SeqLens, in.H0 = c.in(3), c.in(4), c.in(5)
	if cell == graph.CellLSTM {
		in.C0, in.P = c.in(6), c.in(7)
	} else if len(c.ins) > 6 {
		return nil, fmt.Errorf("%d inputs, want at most 6", len(c.ins))
	}
	o := graph.RNNOpts{Cell: cell}
	if in.R.Shape.Rank() != 3 {
		return nil, fmt.Errorf("R is %v, want [num_directions, gates·hidden_size, hidden_size]", in.R.Shape)
	}
	// hidden_size may be left out: R [D, G·H, H] gives it.
	hidden, err := c.attrInt("hidden_size", int64(in.R.Shape[2]))
	if err != nil {
		return nil, err
	}
	if hidden <= 0 || hidden > 1<<24 {
		return nil, fmt.Errorf("attribute hidden_size %d is out of range", hidden)
	}
	o.Hidden = int(hidden)
	dir, err := c.attrString("direction", "forward")
	if err != nil {
		return nil, err
	}
	switch dir {
	case "forward":
		o.Direction = graph.RNNForward
	case "reverse":
		o.Direction = graph.RNNReverse
	case "bidirectional":
		o.Direction = graph.RNNBidirectional
	default:
		return nil, unsupportedf("attribute direction %q (want forward, reverse or bidirectional)", dir)
	}
	if o.Clip, err = c.attrFloat("clip", 0); err != nil {
		return nil, err
	}
	if _, set := c.attrs["clip"]; set && o.Clip <= 0 {
		return nil, unsupportedf("attribute clip %v: must be positive", o.Clip)
	}
	if o.InputForget, err = c.attrBool("input_forget", false); err != nil {
		return nil, err
	}
	if o.LinearBeforeReset, err = c.attrBool("linear_before_reset", false); err != nil {
		return nil, err
	}
	layout, err := c.attrInt("layout", 0)
	if err != nil {
		return nil, err
	}
	if layout != 0 && layout != 1 {
		return nil, unsupportedf("attribute layout %d (want 0 or 1)", layout)
	}
	o.BatchFirst = layout == 1
	if o.Activations, err = rnnActivations(c); err != nil {
		return nil, err
	}
	y, yh, yc := c.g.Recurrent(in, o)
	if err := c.g.Err(); err != nil {
		return nil, err
	}
	return []*graph.Node{y, yh, yc}, nil
}

// rnnActivations reads activations, activation_alpha and activation_beta.
// The alphas and betas are consumed in the order of the functions, each
// by a function that takes one (as ONNX Runtime reads them); a function
// with none left gets its default.
func rnnActivations(c *ctx) ([]graph.RNNActivation, error) {
	names, err := c.attr("activations", AttrStrings)
	if err != nil || names == nil {
		return nil, err
	}
	var alphas, betas []float32
	for _, ab := range []struct {
		name string
		dst  *[]float32
	}{{"activation_alpha", &alphas}, {"activation_beta", &betas}} {
		a, err := c.attr(ab.name, AttrFloats)
		if err != nil {
			return nil, err
		}
		if a != nil {
			*ab.dst = a.Floats
		}
	}
	acts := make([]graph.RNNActivation, len(names.Strings))
	for i, s := range names.Strings {
		name := strings.ToLower(string(s))
		if !graph.IsRNNActivation(name) {
			return nil, unsupportedf("attribute activations: %q is not one of ONNX's recurrent activations", s)
		}
		def, takes := rnnActDefaults[name], rnnActTakes[name]
		acts[i] = graph.RNNActivation{Name: string(s), Alpha: def[0], Beta: def[1]}
		if takes[0] && len(alphas) > 0 {
			acts[i].Alpha, alphas = alphas[0], alphas[1:]
		}
		if takes[1] && len(betas) > 0 {
			acts[i].Beta, betas = betas[0], betas[1:]
		}
	}
	return acts, nil
}
