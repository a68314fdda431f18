package kdesc

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Attention describes softmax(Q·Kᵀ·Scale + mask)·V over contiguous
// [B, H, S, D] tensors, with grouped K/V heads (H a multiple of HK).
type Attention struct {
	Name             string
	DType            tensor.DType
	B, H, HK, SQ, SK int
	D, DV            int
	Scale            float32 // 0: 1/√D
	Causal           bool    // query i sees keys up to i + SK - SQ
	// Mask: MaskNone, MaskAdd (DType, added to the scores) or MaskBool
	// (false removes a key), read at element strides MaskStrides over
	// [B, H, SQ, SK] (0 broadcasts).
	Mask        int
	MaskStrides []int
	// KVLen: the last operand is I64 [B], each batch's count of keys in
	// use (clamped to [0, SK]); keys from there on are absent and
	// causality aligns to the count (graph.AttentionOpts.KVLen).
	KVLen bool
}

// Mask kinds of Attention.
const (
	MaskNone = iota
	MaskAdd
	MaskBool
)

// AttentionOf describes an Attention node: inputs q, k, v, then an
// optional mask (Bool removes keys, the node's dtype is added), then the
// KVLen input when Attrs.KVLen is set.
func AttentionOf(name string, n *graph.Node) (*Attention, error) {
	if len(n.Inputs) < 3 {
		return nil, fmt.Errorf("%s has %d inputs", n, len(n.Inputs))
	}
	q, k, v := n.Inputs[0].Shape, n.Inputs[1].Shape, n.Inputs[2].Shape
	if q.Rank() != 4 || k.Rank() != 4 || v.Rank() != 4 {
		return nil, fmt.Errorf("q %v, k %v, v %v must be 4-D", q, k, v)
	}
	at := &Attention{Name: name, DType: n.DType, B: q[0], H: q[1], HK: k[1], SQ: q[2], SK: k[2], D: q[3], DV: v[3],
		Scale: n.Attrs.Scale, Causal: n.Attrs.Causal, KVLen: n.Attrs.KVLen}
	masked := len(n.Inputs) > 3
	if at.KVLen {
		if len(n.Inputs) < 4 || n.Inputs[len(n.Inputs)-1].DType != tensor.I64 {
			return nil, fmt.Errorf("%s: KVLen set but the last input is not I64", n)
		}
		masked = len(n.Inputs) > 4
	}
	if masked {
		m := n.Inputs[3]
		switch m.DType {
		case tensor.Bool:
			at.Mask = MaskBool
		case n.DType:
			at.Mask = MaskAdd
		default:
			return nil, fmt.Errorf("mask dtype %v", m.DType)
		}
		at.MaskStrides = tensor.BroadcastStrides(m.Shape, tensor.Shape{at.B, at.H, at.SQ, at.SK})
	}
	return at, nil
}
