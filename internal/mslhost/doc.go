// Package mslhost runs kiln's generated Metal Shading Language kernels
// on the host, with no Metal: it compiles them as C++ (g++ or $CXX)
// behind a shim that maps MSL's address spaces, attributes, scalar types
// and builtins onto C++, and runs lowered programs (a list of kernel
// dispatches over byte regions, as driver/metal.Lower makes them) in
// the compiled binary.
//
// Kernels that take only thread_position_in_grid run one thread at a
// time. Kernels that take a threadgroup or simdgroup position run each
// threadgroup's threads as real threads: threadgroup arrays are shared by
// the group, threadgroup_barrier is a barrier of the group, and simd_sum,
// simd_max, simd_min and simd_product combine the values of the calling
// simdgroup's lanes (32 to a simdgroup, in lane order). The shim's
// simd_* and simdgroup_matrix operations are group-wide steps, so every
// thread of the group must reach them (kiln's kernels call them
// uniformly); a group whose threads disagree fails after a timeout
// instead of hanging. simdgroup_float8x8 is held whole by every lane.
//
// The host's libm stands in for Metal's (precise:: is the C++ library,
// and there is no fast-math), so this checks the generated code — its
// indexing, barriers, reductions, conversions and formulas — not Apple's
// math library. MSL's long is C++'s long, 64 bits on the LP64 hosts the
// tests run on (Linux, macOS) but not on Windows.
//
// It is test tooling: package msl's host tests and the backend × op
// matrix (internal/conformance) use it. It imports no kiln package, so
// msl's own tests can.
package mslhost
