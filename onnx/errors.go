package onnx

import (
	"fmt"
	"strings"
)

// UnsupportedOp is one node kiln cannot import.
type UnsupportedOp struct {
	Node   string // the node's name, or "#i" (its index) when it has none
	OpType string
	Domain string // "" is the default ai.onnx domain
	Opset  int64  // the model's opset for that domain
	Reason string // empty: kiln has no mapping for the op; else the feature it lacks
}

// unknownOp is how String words an empty Reason.
const unknownOp = "unknown op (kiln has no mapping for it)"

func (u UnsupportedOp) String() string {
	dom := u.Domain
	if dom == "" {
		dom = "ai.onnx"
	}
	s := fmt.Sprintf("%s (node %q, %s opset %d)", u.OpType, u.Node, dom, u.Opset)
	if u.Reason != "" {
		return s + ": " + u.Reason
	}
	return s + ": " + unknownOp
}

// UnsupportedError lists every node of a model that kiln cannot import,
// so that one attempt shows all the work a model needs.
type UnsupportedError struct {
	Ops []UnsupportedOp
}

func (e *UnsupportedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "onnx: %d unsupported node(s):", len(e.Ops))
	for _, u := range e.Ops {
		b.WriteString("\n  ")
		b.WriteString(u.String())
	}
	return b.String()
}

// featureError marks a node kiln knows but cannot import with the
// attributes or inputs it has (ceil_mode, a run-time Pad value, ...).
// The importer collects these with the unknown ops instead of stopping.
type featureError struct{ reason string }

func (e *featureError) Error() string { return e.reason }

func unsupportedf(format string, args ...any) error {
	return &featureError{reason: fmt.Sprintf(format, args...)}
}
