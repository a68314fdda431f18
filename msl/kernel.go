package msl

import (
	"fmt"
	"math"
	"strings"
)

// Buffer is one kernel argument: a device pointer bound with
// setBuffer:offset:atIndex: at its position in Kernel.Buffers.
type Buffer struct {
	Name  string
	Type  string // MSL storage type of the elements, e.g. "float", "half"
	Const bool   // read only
}

// Kernel is one generated kernel function and how to dispatch it.
type Kernel struct {
	Name    string
	Source  string   // the kernel function (Library adds the shared header)
	Buffers []Buffer // argument i is [[buffer(i)]]; out is 0
	Groups  [3]int   // threadgroups per grid (dispatchThreadgroups)
	Threads [3]int   // threads per threadgroup
	Variant string   // "elementwise", "simdgroup", "tiled", ...
}

// Dispatch limits every emitter stays within.
const (
	MaxThreads  = 1024      // threads per threadgroup on every Apple GPU
	MaxElements = 1<<31 - 1 // elements indexed with 32-bit ints
	SimdWidth   = 32        // threads per simdgroup on Apple GPUs
)

// CeilDiv is ⌈a/b⌉ for positive b.
func CeilDiv(a, b int) int { return (a + b - 1) / b }

// Library joins kernels into one MSL source with the shared header, the
// unit newLibraryWithSource:options:error: compiles.
func Library(ks ...*Kernel) string {
	var b strings.Builder
	b.WriteString(Header)
	for _, k := range ks {
		b.WriteString("\n")
		b.WriteString(k.Source)
	}
	return b.String()
}

// Header is the prelude of every library: helpers the kernels share
// (erf, expm1, log1p, bfloat16 conversion, threadgroup reductions over
// simdgroups).
const Header = `#include <metal_stdlib>
using namespace metal;

// erf to ~1.5e-7 (Abramowitz–Stegun 7.1.26): MSL has no erf.
static inline float kiln_erf(float x) {
    float s = x < 0.0f ? -1.0f : 1.0f;
    float a = fabs(x);
    float t = 1.0f / (1.0f + 0.3275911f * a);
    float y = 1.0f - (((((1.061405429f * t - 1.453152027f) * t) + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t * exp(-a * a);
    return s * y;
}

// e^x - 1 and log(1 + x) (x >= 0) without the cancellation of exp(x) - 1
// and log(1 + x) near 0 (MSL has neither): Taylor polynomials there,
// which fast math cannot reassociate into the cancelling forms.
static inline float kiln_expm1(float x) {
    if (fabs(x) >= 0.5f) { return exp(x) - 1.0f; }
    float p = 1.0f / 362880.0f;
    p = p * x + 1.0f / 40320.0f; p = p * x + 1.0f / 5040.0f; p = p * x + 1.0f / 720.0f;
    p = p * x + 1.0f / 120.0f; p = p * x + 1.0f / 24.0f; p = p * x + 1.0f / 6.0f; p = p * x + 0.5f;
    return x * (p * x + 1.0f);
}
static inline float kiln_log1p(float x) {
    if (!(x < 0.01f)) { return log(1.0f + x); }
    return x * (1.0f - x * (0.5f - x * (1.0f / 3.0f - x * 0.25f)));
}

static inline float kiln_bf16_load(ushort v) { return as_type<float>(uint(v) << 16); }

// round to nearest even, NaN kept quiet
static inline ushort kiln_bf16_store(float f) {
    uint u = as_type<uint>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) { return ushort((u >> 16) | 0x40u); }
    u += 0x7fffu + ((u >> 16) & 1u);
    return ushort(u >> 16);
}

// NaN test on the bits: under fast math (the compiler's default) x != x
// and isnan may be folded to false.
static inline bool kiln_isnan(float x) { return (as_type<uint>(x) & 0x7fffffffu) > 0x7f800000u; }

// Threadgroup reductions: every simdgroup reduces with simd_*, lane 0
// parks its partial in sh (one float per simdgroup), then every
// simdgroup reduces the partials, so all threads get the result.
#define KILN_TG_REDUCE(NAME, SIMD, IDENT) \
static inline float NAME(float v, threadgroup float* sh, uint tid, uint ntg) { \
    v = SIMD(v); \
    uint lane = tid % 32u, sg = tid / 32u, nsg = (ntg + 31u) / 32u; \
    if (lane == 0u) { sh[sg] = v; } \
    threadgroup_barrier(mem_flags::mem_threadgroup); \
    v = lane < nsg ? sh[lane] : IDENT; \
    v = SIMD(v); \
    threadgroup_barrier(mem_flags::mem_threadgroup); \
    return v; \
}
KILN_TG_REDUCE(kiln_tg_sum, simd_sum, 0.0f)
KILN_TG_REDUCE(kiln_tg_max, simd_max, -INFINITY)
KILN_TG_REDUCE(kiln_tg_min, simd_min, INFINITY)
KILN_TG_REDUCE(kiln_tg_prod, simd_product, 1.0f)
`

// sig writes a kernel's signature from its buffers plus the thread
// position attributes it asks for.
func sig(name string, bufs []Buffer, attrs ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kernel void %s(\n", name)
	for i, bf := range bufs {
		q := "device "
		if bf.Const {
			q = "device const "
		}
		fmt.Fprintf(&b, "    %s%s* %s [[buffer(%d)]],\n", q, bf.Type, bf.Name, i)
	}
	for i, a := range attrs {
		sep := ",\n"
		if i == len(attrs)-1 {
			sep = ")\n"
		}
		b.WriteString("    " + a + sep)
	}
	return b.String()
}

// Thread position attributes used by the emitters.
const (
	attrGid   = "uint gid [[thread_position_in_grid]]"
	attrTid   = "uint tid [[thread_index_in_threadgroup]]"
	attrGroup = "uint3 grp [[threadgroup_position_in_grid]]"
	attrTid2  = "uint2 tid2 [[thread_position_in_threadgroup]]"
	attrSg    = "uint sg [[simdgroup_index_in_threadgroup]]"
	attrLane  = "uint lane [[thread_index_in_simdgroup]]"
)

// linear is the launch of one thread per element, 256 to a group.
func linear(n int) ([3]int, [3]int) {
	return [3]int{CeilDiv(n, 256), 1, 1}, [3]int{256, 1, 1}
}

func product(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

func checkCount(name string, n int) error {
	if n > MaxElements {
		return fmt.Errorf("msl: %s: %d elements exceed 32-bit indexing", name, n)
	}
	return nil
}

func sqrt64(x float64) float64 { return math.Sqrt(x) }
