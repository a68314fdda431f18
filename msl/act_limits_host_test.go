package msl

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
)

// TestHostGatedActivationLimits compiles the MSL forms of the x·gate(x)
// activations as C++ (IEEE arithmetic, no fast math) and checks them at
// the infinities against kiln's semantics (graph.Silu): NaN at -Inf
// (-Inf·0), +Inf at +Inf, NaN for NaN, -0 in the finite negative tail.
// The forms are the plain formulas, so they give these values without a
// gate; a limit gate added later (-0 at -Inf) would fail here.
func TestHostGatedActivationLimits(t *testing.T) {
	cxx, err := osexec.LookPath("g++")
	if err != nil {
		t.Skipf("no g++ to run the MSL forms on the host: %v", err)
	}
	inf := math.Inf(1)
	xs := []float64{-inf, inf, math.NaN(), -1e30, 1e30}
	ops := []graph.Op{graph.OpGelu, graph.OpGeluTanh, graph.OpSilu}
	var b strings.Builder
	b.WriteString(hostShim)
	b.WriteString("namespace precise { using std::tanh; }\n")
	b.WriteString(Header[strings.Index(Header, "using namespace metal;")+len("using namespace metal;"):])
	b.WriteString("int main() {\n")
	for _, op := range ops {
		expr, err := floatUnary(op, "x", graph.Attrs{})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range xs {
			fmt.Fprintf(&b, "  { float x = as_type<float>(0x%08xu); float y = %s; fwrite(&y, 4, 1, stdout); }\n",
				math.Float32bits(float32(x)), expr)
		}
	}
	b.WriteString("  return 0;\n}\n")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "act.cpp"), filepath.Join(dir, "act")
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
	if len(raw) != 4*len(ops)*len(xs) {
		t.Fatalf("host program wrote %d bytes, want %d", len(raw), 4*len(ops)*len(xs))
	}
	for i, op := range ops {
		for j, x := range xs {
			got := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(i*len(xs)+j):])))
			var ok bool
			switch {
			case math.IsInf(x, -1), math.IsNaN(x):
				ok = math.IsNaN(got)
			case x < 0:
				ok = got == 0
			default:
				ok = got == float64(float32(x))
			}
			if !ok {
				t.Errorf("%v(%v) = %v", op, x, got)
			}
		}
	}
}
