package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestInspectDevice: kiln inspect --device cuda and metal ask the
// emitters about every kernel of the fused model, with no GPU, and
// compile only where the device opens (never on this test's machines
// for Metal off macOS).
func TestInspectDevice(t *testing.T) {
	for _, dev := range []string{"cuda", "metal"} {
		out, _, err := capture(t, runInspect, filepath.Join(modelsDir, "bert", "model.onnx"), "--device", dev)
		if err != nil {
			t.Fatalf("%s: %v\n%s", dev, err, out)
		}
		if !regexp.MustCompile(`(?m)^` + dev + `: all [1-9][0-9]* kernels lower$`).MatchString(out) {
			t.Errorf("%s: output lacks the lowering check:\n%s", dev, out)
		}
		if !strings.Contains(out, "not compiled on "+dev) && !strings.Contains(out, "kernels:") {
			t.Errorf("%s: neither compiled nor said why not:\n%s", dev, out)
		}
	}
}

// TestInspectDeviceUnlowered: every node a device has no kernel for is
// listed with the emitter's reason, and the inspection fails. CUDA has
// integer sums but no F64 kernels; Metal has neither.
func TestInspectDeviceUnlowered(t *testing.T) {
	g := graph.New()
	g.Output(g.Relu(g.Input("x", tensor.F64, 2, 3)))
	g.Output(g.ReduceSum(g.Input("i", tensor.I32, 2, 3), false, 1))
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dev   kiln.Device
		lines int
		want  []string
	}{
		{kiln.CUDA(0), 1, []string{"cuda: 1 of 2 kernels would not lower:\n", "  Relu(", "f64"}},
		{kiln.Metal(), 2, []string{"metal: 2 of 2 kernels would not lower:\n", "  Relu(", "  ReduceSum(", "reductions of i32 are not supported on Metal"}},
	} {
		var out bytes.Buffer
		compile, err := inspectDevice(&out, g, c.dev)
		if !errors.Is(err, errUnlowered) || compile {
			t.Errorf("%v: compile %v, error %v; want errUnlowered", c.dev, compile, err)
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: output lacks %q:\n%s", c.dev, w, out.String())
			}
		}
		if got := strings.Count(out.String(), "\n  "); got != c.lines {
			t.Errorf("%v: %d nodes listed, want %d:\n%s", c.dev, got, c.lines, out.String())
		}
	}
	if compile, err := inspectDevice(&bytes.Buffer{}, g, kiln.CPU); !compile || err != nil {
		t.Errorf("cpu: compile %v, error %v; want a plain compile", compile, err)
	}
}
