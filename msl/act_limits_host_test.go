package msl

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/mslhost"
)

// TestHostGatedActivationLimits compiles the MSL forms of the x·gate(x)
// activations as C++ (IEEE arithmetic, no fast math) and checks them at
// the infinities against kiln's semantics (graph.Silu): NaN at -Inf
// (-Inf·0), +Inf at +Inf, NaN for NaN, -0 in the finite negative tail.
// The forms are the plain formulas, so they give these values without a
// gate; a limit gate added later (-0 at -Inf) would fail here.
func TestHostGatedActivationLimits(t *testing.T) {
	mslhost.NeedCompiler(t)
	inf := math.Inf(1)
	xs := []float64{-inf, inf, math.NaN(), -1e30, 1e30}
	ops := []graph.Op{graph.OpGelu, graph.OpGeluTanh, graph.OpSilu}
	in := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(float32(x)))
	}
	var progs []*mslhost.Program
	for _, op := range ops {
		expr, err := floatUnary(op, "x", graph.Attrs{})
		if err != nil {
			t.Fatal(err)
		}
		k := &mslhost.Kernel{Name: "act", Buffers: []string{"float", "float"}, Groups: [3]int{1, 1, 1}, Threads: [3]int{len(xs), 1, 1},
			Source: fmt.Sprintf("kernel void act(device float* y [[buffer(0)]], device const float* xs [[buffer(1)]], uint gid [[thread_position_in_grid]]) {\n    float x = xs[gid];\n    y[gid] = %s;\n}\n", expr)}
		progs = append(progs, &mslhost.Program{Regions: [][]byte{make([]byte, len(in)), in}, Steps: []mslhost.Step{{Kernel: k, Args: []mslhost.Arg{{Region: 0}, {Region: 1}}}}})
	}
	if err := mslhost.Run(Header, progs); err != nil {
		t.Fatal(err)
	}
	for i, op := range ops {
		for j, x := range xs {
			got := float64(math.Float32frombits(binary.LittleEndian.Uint32(progs[i].Regions[0][4*j:])))
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
