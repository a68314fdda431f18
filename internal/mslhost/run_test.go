package mslhost

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
)

// header stands in for msl.Header: Run keeps what follows its
// "using namespace metal;".
const header = "#include <metal_stdlib>\nusing namespace metal;\nstatic inline float twice(float x) { return 2.0f * x; }\n"

func f32s(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func floats(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func needCompiler(t *testing.T) {
	t.Helper()
	NeedCompiler(t)
}

// TestRunThreadgroups runs kernels whose results depend on the shim's
// threadgroup semantics: a reversal through a threadgroup array (wrong
// without a shared array and a real barrier), simd_sum per simdgroup
// (wrong if lanes of another simdgroup or group leak in), a
// simdgroup_float8x8 product, and a one-thread-per-element kernel with a
// bounds check, over two programs whose kernels share a name.
func TestRunThreadgroups(t *testing.T) {
	needCompiler(t)
	rev := &Kernel{Name: "k0", Buffers: []string{"float", "float"}, Groups: [3]int{3, 1, 1}, Threads: [3]int{64, 1, 1}, Source: `kernel void k0(
    device float* out [[buffer(0)]],
    device const float* x [[buffer(1)]],
    uint3 grp [[threadgroup_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]])
{
    threadgroup float sh[64];
    uint i = grp.x * 64u + tid;
    sh[tid] = x[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = sh[63u - tid] + 1000.0f * simd_sum(x[i]);
}
`}
	mm := &Kernel{Name: "k1", Buffers: []string{"float", "float", "float"}, Groups: [3]int{1, 1, 1}, Threads: [3]int{32, 1, 1}, Source: `kernel void k1(
    device float* out [[buffer(0)]],
    device const float* a [[buffer(1)]],
    device const float* b [[buffer(2)]],
    uint lane [[thread_index_in_simdgroup]])
{
    simdgroup_float8x8 fa, fb, acc = make_filled_simdgroup_matrix<float, 8, 8>(1.0f);
    simdgroup_load(fa, a, 8);
    simdgroup_load(fb, b, 8);
    simdgroup_multiply_accumulate(acc, fa, fb, acc);
    simdgroup_store(acc, out, 8);
}
`}
	twice := &Kernel{Name: "k0", Buffers: []string{"float", "float"}, Groups: [3]int{3, 1, 1}, Threads: [3]int{4, 1, 1}, Source: `kernel void k0(
    device float* out [[buffer(0)]],
    device const float* x [[buffer(1)]],
    uint gid [[thread_position_in_grid]])
{
    if (gid >= 10u) { return; }
    out[gid] = twice(x[gid]);
}
`}
	x := make([]float32, 192)
	for i := range x {
		x[i] = float32(i%13) - 6
	}
	a, b := make([]float32, 64), make([]float32, 64)
	for i := range a {
		a[i], b[i] = float32(i%5-2), float32(i%7-3)
	}
	p0 := &Program{Regions: [][]byte{make([]byte, 4*192+4*64), f32s(append(append(x, a...), b...))},
		Steps: []Step{{rev, []Arg{{0, 0}, {1, 0}}}, {mm, []Arg{{0, 4 * 192}, {1, 4 * 192}, {1, 4 * 256}}}}}
	p1 := &Program{Regions: [][]byte{append(f32s(x[:12]), make([]byte, 4*12)...)}, Steps: []Step{{twice, []Arg{{0, 48}, {0, 0}}}}}
	if err := Run(header, []*Program{p0, p1}); err != nil {
		t.Fatal(err)
	}
	got := floats(p0.Regions[0])
	for i := range 192 {
		g, tid := i/64, i%64
		var sum float32
		for j := range 32 {
			sum += x[g*64+tid/32*32+j]
		}
		if want := x[g*64+63-tid] + 1000*sum; got[i] != want {
			t.Errorf("reversal and simd_sum [%d] = %v, want %v", i, got[i], want)
		}
	}
	for i := range 8 {
		for j := range 8 {
			want := float32(1)
			for k := range 8 {
				want += a[i*8+k] * b[k*8+j]
			}
			if g := got[192+i*8+j]; g != want {
				t.Errorf("simdgroup product [%d][%d] = %v, want %v", i, j, g, want)
			}
		}
	}
	if out := floats(p1.Regions[0][48:]); !slices.Equal(out[:10], twiceOf(x[:10])) || out[10] != 0 || out[11] != 0 {
		t.Errorf("one thread per element: %v", out)
	}
	if got := floats(p1.Regions[0][:48]); !slices.Equal(got, x[:12]) {
		t.Errorf("the input changed: %v", got)
	}
}

func twiceOf(v []float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = 2 * x
	}
	return out
}

// TestRunErrors checks what Run refuses before compiling anything it
// could not run faithfully, and reports a compiler error.
func TestRunErrors(t *testing.T) {
	needCompiler(t)
	k := &Kernel{Name: "k", Buffers: []string{"float"}, Groups: [3]int{2, 2, 1}, Threads: [3]int{4, 1, 1},
		Source: "kernel void k(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) { out[gid] = 1.0f; }\n"}
	for _, c := range []struct {
		name, header, want string
		p                  *Program
	}{
		{"no metal header", "#include <metal_stdlib>\n", "has no", &Program{}},
		{"2-D grid position", header, "one dimension only", &Program{Regions: [][]byte{make([]byte, 64)}, Steps: []Step{{k, []Arg{{0, 0}}}}}},
		{"argument count", header, "1 buffers", &Program{Regions: [][]byte{make([]byte, 64)}, Steps: []Step{{k, []Arg{{0, 0}, {0, 4}}}}}},
		{"outside memory", header, "outside", &Program{Regions: [][]byte{make([]byte, 64)}, Steps: []Step{{k, []Arg{{1, 0}}}}}},
		{"compile error", header, "nope", &Program{Regions: [][]byte{make([]byte, 16)}, Steps: []Step{{&Kernel{Name: "k", Buffers: []string{"float"},
			Groups: [3]int{1, 1, 1}, Threads: [3]int{4, 1, 1}, Source: "kernel void k(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) { out[gid] = nope; }\n"}, []Arg{{0, 0}}}}}},
	} {
		if err := Run(c.header, []*Program{c.p}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
