package exec_test

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// guardedChain is y = neg(relu(x·x)) on x [5]: three steps over buffers
// of 20 bytes, so each has slack up to its aligned size.
func guardedChain(t *testing.T) (*graph.Graph, *exec.Program) {
	t.Helper()
	g := graph.New()
	x := g.Input("x", tensor.F32, 5)
	g.Output(g.Neg(g.Relu(g.Mul(x, x))))
	p, err := plan.Make(g, plan.Options{Guard: 1, InPlace: ops.InPlace})
	if err != nil {
		t.Fatal(err)
	}
	if p.Guard != plan.Align {
		t.Fatalf("guard %d, want it rounded up to %d", p.Guard, plan.Align)
	}
	if err := p.Check(); err != nil {
		t.Fatalf("guarded plan fails Check: %v", err)
	}
	pr, err := exec.Lower(g, p, exec.Options{Pool: exec.NewPool(1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := pr.Write(node(g, "x"), tensor.Bytes([]float32{1, -2, 3, -4, 0.5})); err != nil {
		t.Fatal(err)
	}
	return g, pr
}

func runOut(t *testing.T, g *graph.Graph, pr *exec.Program) []float32 {
	t.Helper()
	out := make([]float32, 5)
	if err := pr.Read(g.Outputs()[0], tensor.Bytes(out)); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGuardCleanRun(t *testing.T) {
	g, pr := guardedChain(t)
	for range 2 { // the second run refills the zones the first left
		if err := pr.Run(); err != nil {
			t.Fatalf("clean guarded run: %v", err)
		}
		want := []float32{-1, -4, -9, -16, -0.25}
		for i, v := range runOut(t, g, pr) {
			if v != want[i] {
				t.Fatalf("out[%d] = %v, want %v", i, v, want[i])
			}
		}
	}
}

// stomp replaces step i's kernel with one that writes one float32 at
// element index at of its output (out of bounds when at < 0 or >= len).
func stomp(pr *exec.Program, i, at int) {
	s := &pr.Steps[i]
	s.Kernel = func(_ []tensor.Tensor, out tensor.Tensor) error {
		base := unsafe.Pointer(unsafe.SliceData(out.Data))
		*(*float32)(unsafe.Add(base, 4*at)) = 42
		return nil
	}
}

func TestGuardNamesStep(t *testing.T) {
	for _, tc := range []struct {
		name  string
		at    int
		where string
	}{
		{"one past the end", 5, "after"},
		{"past the aligned size", 17, "after"},
		{"before the start", -1, "before"},
		{"deep before", -15, "before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, pr := guardedChain(t)
			bad := pr.Steps[1]
			stomp(pr, 1, tc.at)
			err := pr.Run()
			if err == nil {
				t.Fatal("out-of-bounds write not caught")
			}
			msg := err.Error()
			if !strings.Contains(msg, "step 1 ") || !strings.Contains(msg, bad.Node.String()) || !strings.Contains(msg, tc.where) {
				t.Fatalf("error %q does not name step 1 (%s) and %q", msg, bad.Node, tc.where)
			}
			// A fixed kernel runs clean again: the zones are refilled.
			pr.Steps[1].Kernel = bad.Kernel
			if err := pr.Run(); err != nil {
				t.Fatalf("run after the fix: %v", err)
			}
			if got := runOut(t, g, pr)[2]; got != -9 {
				t.Fatalf("out[2] = %v after recovery, want -9", got)
			}
		})
	}
}

// An in-bounds write, however odd, is not an error.
func TestGuardInBoundsIsQuiet(t *testing.T) {
	_, pr := guardedChain(t)
	stomp(pr, 0, 4)
	if err := pr.Run(); err != nil {
		t.Fatalf("in-bounds write reported: %v", err)
	}
}
