// Package ptx writes the PTX kernels kiln's CUDA backend launches, and
// reads PTX modules users supply.
//
// Emitters (Elementwise, Softmax, Norm, Reduce, Copy, Concat, Gather, Pad,
// Gemm, Attention, Conv, Pool, BatchNorm, RoPE, Arg, CumSum) take plain
// shape descriptions and return a Kernel:
// the text of one .entry, its parameter list and its launch geometry.
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
