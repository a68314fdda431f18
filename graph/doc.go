// Package graph is kiln's IR: a graph of nodes, each producing one tensor
// value of a known dtype and shape.
//
// The IR fits in a few files:
//
//	op.go     the op kinds and their families (unary, binary, reduce, ...)
//	attrs.go  the attributes an op may carry, in one struct
//	graph.go  Node and Graph: inputs, params, constants, outputs, errors
//	build*.go the builder: one method per op, numpy/ONNX semantics
//	infer.go  dtype and shape inference for every op
//	verify.go Verify: a well-formed DAG with consistent shapes
//	dump.go   a readable text dump
//
// Building never panics: the first error is recorded on the graph and
// returned by Err (and by Compile later); after an error every builder
// method returns an invalid placeholder node, so building code can stay a
// straight sequence of calls and check once at the end.
//
// Every node has exactly one output. Ops with several results in ONNX
// (Split) are expressed as one node per result, each selecting its piece.
package graph
