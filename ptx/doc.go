// Package ptx writes the PTX kernels kiln's CUDA backend launches, and
// reads PTX modules users supply.
//
// Emitters (Elementwise, Softmax, Norm, Reduce, Copy, Concat, Gather, Pad,
// Gemm, Attention, Conv, ConvTranspose, Pool, BatchNorm, RoPE, Arg,
// CumSum, Resize, Scatter, PoolND, GridSample, RoiAlign, Quantize,
// IntProduct) take plain shape descriptions and return a Kernel: the text of
// one .entry, its parameter list and its launch geometry. Each description embeds the
// backend-neutral descriptor internal/kdesc makes from a graph node,
// adding only ptx's launch choices (a block, a tile); Emit writes the
// kernel of any kdesc descriptor through one table keyed by its kind,
// EmitNode runs a node through kdesc.Describe and Emit, and Ops,
// Supports and CheckNode say what CUDA can lower, derived from that
// table, before anything is compiled (kiln inspect --device cuda).
// Shapes and strides are baked into the code as immediates (kiln compiles
// a graph for fixed shapes), so index arithmetic divides by constants and
// the only parameters are device pointers. Every kernel targets PTX ISA
// 7.8 and sm_80, so one module runs on Ampere, Hopper and newer GPUs
// (the driver JIT-compiles it for the device at load time).
//
// Parse reads a module's version, target and entry signatures; Pack lays
// out launch arguments against an entry's signature, so a user kernel's
// arguments are checked before the driver sees them.
package ptx
