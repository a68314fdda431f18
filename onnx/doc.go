// Package onnx imports ONNX models into kiln graphs, in pure Go.
//
//	m, err := onnx.Load("model.onnx", onnx.WithShape("input_ids", 1, 128))
//	cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
//	err = m.SetParams(cg) // weights from the model's initializers
//	m.Close()             // unmaps the file once the params are set
//
// The protobuf wire format is decoded directly (with protowire) rather than
// through generated code: kiln needs ten messages and a fraction of their
// fields, tensor data stays a view into the memory-mapped file instead of
// being copied, and every allocation is bounded by the input's size
// (sub-graphs, the bodies of If, Loop and Scan, nest at most 16 deep).
//
// What is imported:
//
//   - opsets 11 to 23 of the default domain, with each op's semantics at
//     the model's opset (Softmax before 13 flattens to 2-D; reduction,
//     Squeeze, Unsqueeze, Split and Pad arguments move from attributes to
//     inputs at 13 or 18);
//   - initializers from raw_data, the typed fields or external-data files
//     (memory-mapped, confined to the model's directory). Floating-point
//     initializers with more than one element become graph Params named as
//     in the model (see WithConstantLimit); the rest become Constants;
//   - graph inputs with static shapes; symbolic or unknown dims are bound
//     with WithShape or WithDim;
//   - the ops in opTable (see TestEveryOpCovered): elementwise math and
//     comparisons, MatMul and Gemm, reductions, Softmax, normalisations,
//     Conv (1-D and 2-D, auto_pad), pooling (1-D to 3-D, auto_pad,
//     ceil_mode, dilations, MaxPool's Indices) and MaxUnpool,
//     ConvTranspose (1-D to 3-D), Resize and Upsample (scales, sizes and
//     roi known at import),
//     shape and movement ops, Cast, Where, Range, CumSum, Dropout, the
//     indexing ops (GatherElements, GatherND, ScatterElements, Scatter,
//     ScatterND), and as compositions of kiln's ops DepthToSpace,
//     SpaceToDepth, Einsum (a MatMul per pair of operands), ReverseSequence
//     (a Gather, or a GatherND over run-time lengths) and Compress (a
//     Gather of the positions its import-time condition selects), RNN,
//     GRU and LSTM (graph.Recurrent: unrolled, at most 4096 steps), the
//     inference forms of NegativeLogLikelihoodLoss and
//     SoftmaxCrossEntropyLoss (graph.NLLLoss, graph.SoftmaxCrossEntropy);
//     TopK; the quantization ops QuantizeLinear, DequantizeLinear,
//     DynamicQuantizeLinear, MatMulInteger and ConvInteger, and as their
//     compositions QLinearMatMul and QLinearConv (ops_quant.go); and built
//     from kiln's own ops (ops_composite.go) ReduceL1,
//     ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, Hardmax,
//     Trilu, EyeLike, OneHot, MeanVarianceNormalization, LRN;
//   - GridSample, RoiAlign, Det; DFT and STFT (graph.DFT, graph.STFT:
//     lengths and steps known at import); MelWeightMatrix (computed at
//     import); NonMaxSuppression with its thresholds known at import:
//     over run-time boxes and scores it is built at its upper bound and a
//     compiled graph returns its output trimmed to the selected rows;
//     nodes reading the selection row by row (a Gather of the selected
//     boxes by its column 2, Cast, arithmetic, Concat along a later axis)
//     compute at the same bound and their outputs are trimmed alike, any
//     other reader is refused (graph.CheckPadded); over known boxes and
//     scores it is selected at import;
//   - NonZero, Unique, and Compress's condition, whose output lengths
//     depend on values, only when that input is known at import (they are
//     computed there); over a run-time input they are reported unsupported
//     with the reason, as kiln's shapes are static;
//   - control flow (control.go, control_loop.go, control_scan.go): an
//     If whose condition is known imports its branch, one computed at run
//     time imports both and selects with Where (so its branches' outputs
//     must agree in dtype and shape; branches of more than 16 nodes run as
//     two loops gated by the condition, so only the taken one is
//     computed); a Loop whose trip count and conditions are known, and a
//     Scan, unroll (at most 65536 imported nodes). A Loop whose trip count
//     or condition is computed at run time, or too long to unroll, becomes
//     one graph.OpLoop: its body runs per iteration as a sub-program
//     planned into the parent's arena. Its loop-carried values must keep
//     their shapes; scan outputs get as many rows as a bound (the known
//     trip count, WithLoopBound, or the model's declared first dim), rows
//     past the iterations run being zero, and a run needing more
//     iterations fails with an error. A Scan's length is always known at
//     import (the static extent of its scan inputs); one too long to
//     unroll becomes the same graph.OpLoop, its trip count and bound that
//     length, each step's slices of the scan inputs gathered by the
//     iteration number.
//
// Shape sub-graphs fold away at import: Shape and Size are constants (every
// shape is static), and any node whose inputs are all constants is
// evaluated with kiln's reference interpreter, so Reshape, Expand, Slice
// and Tile targets are static by the time the graph is built. Constant
// expressions past a million elements stay in the graph and run at run
// time, unless a consumer needs their value at import (see foldLimit).
//
// A model kiln cannot import fails with an *UnsupportedError listing every
// offending node (name, op, domain, opset and the missing feature), not
// just the first. Malformed files (truncated, corrupted, wrong type,
// inconsistent tensor sizes, absurd dims, cycles, missing external data)
// are errors, never panics.
package onnx
