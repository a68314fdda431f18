// Package kdesc holds the backend-neutral half of GPU kernel lowering:
// the descriptors of GEMM, attention, fused elementwise chains and
// strided copies, how graph nodes map onto them, and the index
// arithmetic (dim collapsing, broadcast strides, offsets) their
// emitters share. The ptx and msl emitters and the CUDA and Metal
// drivers all build on it, so the mapping is written once; it has no
// device or purego dependency and runs on every OS.
package kdesc
