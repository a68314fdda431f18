// Package kdesc is the backend-neutral half of GPU kernel lowering, and
// the only step from a graph node to a kernel descriptor: Describe maps
// every op a GPU kernel computes onto one descriptor (elementwise
// chains, reductions, softmax, norms, strided copies, concat, gather,
// pad, GEMM, attention, conv, pools, batch norm, RoPE, ArgMax/ArgMin,
// CumSum), with the validation each needs, and the index arithmetic
// (dim collapsing, broadcast strides, offsets, windows, lines) their
// emitters share.
//
// A backend is an Emitter: ptx and msl embed (or alias) these types,
// adding only their own launch choices (a block, a tile), and give
// NewEmitter one kernel writer per Kind. The Emitter runs a node through
// Describe and its writer (Lower) and derives the backend's list of ops
// from its table (Ops), so what CUDA or Metal can run is known before
// compiling (kiln inspect --device). The package has no device or
// purego dependency and runs on every OS.
package kdesc
