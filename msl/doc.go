// Package msl writes the Metal Shading Language kernels kiln's Metal
// backend (driver/metal) compiles at run time.
//
// It mirrors package ptx: emitters (Elementwise, Reduce, Softmax, Norm,
// Copy, Concat, Gather, Pad, Gemm, Attention, Conv, ConvTranspose, Pool,
// CumSum, Arg, BatchNorm, RoPE, Resize) take the descriptors internal/kdesc makes from graph
// nodes (these types are kdesc's own) and return a Kernel: the source of
// one kernel function, its buffer list (buffer i is argument i, out
// first) and its dispatch geometry. Emit dispatches any descriptor
// through one table keyed by its kind, EmitNode runs a node through
// kdesc.Describe and Emit, and Ops, Supports and CheckNode, derived from
// that table, say what Metal can lower on any OS (kiln inspect --device
// metal). Shapes and strides are baked into the source as constants
// (kiln compiles a graph for fixed shapes), so the only arguments are
// buffers. The package needs no Metal and no darwin: it is plain text
// generation, tested on every OS, and its index arithmetic lives in Go
// functions (Collapse, Offset, PadSource, kdesc.Window) that tests check
// against independent references. The kernels are also compiled as C++
// and run on the host (internal/mslhost, when a C++ compiler is present),
// threadgroups and all, against the CPU reference kernels of package ops.
//
// It is a top-level package, beside ptx, rather than inside driver/metal
// so that tools and tests can generate and inspect kernels without
// importing the purego bindings.
package msl
