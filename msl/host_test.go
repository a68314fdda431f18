package msl

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// hostShim lets a C++ compiler build the one-thread-per-element kernels:
// MSL's address spaces and attributes vanish, its scalar types and the
// few builtins they use map onto C++. The threadgroup helpers of Header
// compile but are not meaningful, so kernels that use them are not run.
const hostShim = `#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <algorithm>
using namespace std;
#define kernel
#define device
#define constant const
#define threadgroup
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef _Float16 half;
template <class T, class U> static inline T as_type(U u) { T t; memcpy(&t, &u, sizeof t); return t; }
struct int2 { int x, y; int2(int a, int b) : x(a), y(b) {} };
static inline int2 operator+(int2 a, int b) { return int2(a.x + b, a.y + b); }
namespace mem_flags { const int mem_threadgroup = 0; }
static inline void threadgroup_barrier(int) {}
static inline float simd_sum(float v) { return v; }
static inline float simd_max(float v) { return v; }
static inline float simd_min(float v) { return v; }
static inline float simd_product(float v) { return v; }
`

// hostCase is one graph node, its inputs and the kernel emitted for it.
type hostCase struct {
	node *graph.Node
	ins  []tensor.Tensor
	k    *Kernel
	tol  float64 // relative, on float outputs; integers are exact
}

// runHost compiles every case's kernel into one host program that runs
// each over its whole grid and prints the output bytes in order.
func runHost(t *testing.T, cases []hostCase) [][]byte {
	t.Helper()
	cxx, err := osexec.LookPath("g++")
	if err != nil {
		t.Skipf("no g++ to run the kernels on the host: %v", err)
	}
	var b strings.Builder
	b.WriteString(hostShim)
	b.WriteString(Header[strings.Index(Header, "using namespace metal;")+len("using namespace metal;"):])
	for _, c := range cases {
		b.WriteString(c.k.Source)
	}
	b.WriteString("int main() {\n")
	for i, c := range cases {
		fmt.Fprintf(&b, "  {\n")
		out := c.node.Shape.NumElements() * c.node.DType.Size()
		fmt.Fprintf(&b, "    static %s out[%d];\n", c.k.Buffers[0].Type, out/c.node.DType.Size()+1)
		args := []string{"out"}
		for j, in := range c.ins {
			bf := c.k.Buffers[j+1]
			fmt.Fprintf(&b, "    alignas(16) static const unsigned char raw%d[] = {%s0};\n", j, byteList(in.Data))
			fmt.Fprintf(&b, "    const %s* in%d = (const %s*)raw%d;\n", bf.Type, j, bf.Type, j)
			args = append(args, fmt.Sprintf("in%d", j))
		}
		total := c.k.Groups[0] * c.k.Threads[0]
		fmt.Fprintf(&b, "    for (uint g = 0; g < %du; g++) { %s(%s, g); }\n", total, c.k.Name, strings.Join(args, ", "))
		fmt.Fprintf(&b, "    fwrite(out, 1, %d, stdout); // case %d\n  }\n", out, i)
	}
	b.WriteString("  return 0;\n}\n")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "k.cpp"), filepath.Join(dir, "k")
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := osexec.Command(cxx, "-std=c++17", "-O1", "-fno-strict-aliasing", "-Wno-attributes", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, msg)
	}
	raw, err := osexec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	outs := make([][]byte, len(cases))
	for i, c := range cases {
		n := c.node.Shape.NumElements() * c.node.DType.Size()
		if len(raw) < n {
			t.Fatalf("host program wrote %d bytes too few", n-len(raw))
		}
		outs[i], raw = raw[:n], raw[n:]
	}
	return outs
}

func byteList(data []byte) string {
	var b strings.Builder
	for _, v := range data {
		fmt.Fprintf(&b, "%d,", v)
	}
	return b.String()
}

// hostData makes an input: normal floats, or small integers (ties) of
// any dtype when ints is set, with every nanEvery-th element NaN.
func hostData(rng *rand.Rand, dt tensor.DType, s tensor.Shape, ints bool, nanEvery int) tensor.Tensor {
	wide := tensor.New(tensor.F32, s...)
	v := wide.F32()
	for i := range v {
		if ints {
			v[i] = float32(rng.IntN(4))
		} else {
			v[i] = float32(rng.NormFloat64())
		}
		if nanEvery > 0 && i%nanEvery == nanEvery-1 {
			v[i] = float32(math.NaN())
		}
	}
	if dt == tensor.F32 {
		return wide
	}
	out := tensor.New(dt, s...)
	if err := tensor.Convert(out, wide); err != nil {
		panic(err)
	}
	return out
}

// compareHost checks a kernel's output against the reference kernel's.
func compareHost(t *testing.T, c hostCase, got []byte) {
	t.Helper()
	ref, err := ops.PrepareReference(c.node)
	if err != nil {
		t.Fatal(err)
	}
	want := tensor.New(c.node.DType, c.node.Shape...)
	if err := ref(c.ins, want); err != nil {
		t.Fatal(err)
	}
	if !isFloat(c.node.DType) {
		if !bytes.Equal(got, want.Data) {
			t.Errorf("%s: got %v, want %v", c.node, got, want.Data)
		}
		return
	}
	g, w := tensor.New(tensor.F32, c.node.Shape...), tensor.New(tensor.F32, c.node.Shape...)
	gv, _ := tensor.View(c.node.DType, c.node.Shape, got)
	if tensor.Convert(g, gv) != nil || tensor.Convert(w, want) != nil {
		t.Fatal("convert")
	}
	bad := 0
	for i, wv := range w.F32() {
		a, e := float64(g.F32()[i]), float64(wv)
		if approx.Far(a, e, c.tol*(1+math.Abs(e))) {
			if bad++; bad <= 5 {
				t.Errorf("%s [%d]: host kernel %g, reference %g", c.node, i, a, e)
			}
		}
	}
}
