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

// affine is y = reshape(x·2 + b, [6]) on x [2, 3] and a param b [3]: one
// view (no step of its own) and two kernels.
func affine() *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	b := g.Param("b", tensor.F32, 3)
	g.Output(g.Reshape(g.Add(g.Mul(x, g.Scalar(2)), b), 6))
	return g
}

func lower(t *testing.T, g *graph.Graph, opt exec.Options) *exec.Program {
	t.Helper()
	p, err := plan.Make(g, plan.Options{InPlace: ops.InPlace}) // as a session plans
	if err != nil {
		t.Fatal(err)
	}
	pr, err := exec.Lower(g, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func node(g *graph.Graph, name string) *graph.Node {
	n, _ := g.Lookup(name)
	return n
}

func TestProgramRun(t *testing.T) {
	for name, opt := range map[string]exec.Options{
		"default":   {},
		"reference": {Reference: true},
		"pool1":     {Pool: exec.NewPool(1)},
	} {
		t.Run(name, func(t *testing.T) {
			g := affine()
			pr := lower(t, g, opt)
			if err := pr.Write(node(g, "x"), tensor.Bytes([]float32{1, 2, 3, 4, 5, 6})); err != nil {
				t.Fatal(err)
			}
			if err := pr.Write(node(g, "b"), tensor.Bytes([]float32{0.5, 0, -1})); err != nil {
				t.Fatal(err)
			}
			if err := pr.Run(); err != nil {
				t.Fatal(err)
			}
			out := g.Outputs()[0]
			dst := make([]float32, 6)
			if err := pr.Read(out, tensor.Bytes(dst)); err != nil {
				t.Fatal(err)
			}
			want := []float32{2.5, 4, 5, 8.5, 10, 11}
			for i := range want {
				if dst[i] != want[i] || pr.Values[out.ID].F32()[i] != want[i] {
					t.Fatalf("out = %v (view %v), want %v", dst, pr.Values[out.ID].F32(), want)
				}
			}
			st := pr.Stats()
			if st.Steps != 2 || len(pr.Steps) != 2 {
				t.Errorf("%d steps (%d in Stats), want 2: the reshape should be a free view", len(pr.Steps), st.Steps)
			}
			n := 0
			for k, c := range st.Variants {
				n += c
				if opt.Reference && !strings.HasSuffix(k, "/reference") {
					t.Errorf("variant %s with Reference set", k)
				}
			}
			if n != st.Steps {
				t.Errorf("variants count %d steps, want %d", n, st.Steps)
			}
			if uintptr(unsafe.Pointer(unsafe.SliceData(pr.Arena)))%64 != 0 {
				t.Error("arena is not 64-byte aligned")
			}
			if allocs := testing.AllocsPerRun(20, func() { _ = pr.Run() }); allocs != 0 {
				t.Errorf("Run allocates %v times", allocs)
			}
		})
	}
}

// TestLowerMismatch lowers graphs with plans made for other graphs.
func TestLowerMismatch(t *testing.T) {
	g := affine()
	p, err := plan.Make(g, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Fewer nodes.
	small := graph.New()
	small.Output(small.Neg(small.Input("x", tensor.F32, 3)))
	if _, err := exec.Lower(small, p, exec.Options{}); err == nil {
		t.Error("plan of a 6-node graph lowered onto a 2-node graph")
	}
	// The same structure, other nodes: a clone of g.
	if _, err := exec.Lower(g.Clone(), p, exec.Options{}); err == nil || !strings.Contains(err.Error(), "match") {
		t.Errorf("plan lowered onto a clone of its graph: %v, want a mismatch error", err)
	}
	// The same node count but bigger values: the slots are too small.
	big := graph.New()
	xb := big.Input("x", tensor.F32, 20, 30)
	bb := big.Param("b", tensor.F32, 30)
	big.Output(big.Reshape(big.Add(big.Mul(xb, big.Scalar(2)), bb), 600))
	if len(big.Nodes) != len(g.Nodes) {
		t.Fatalf("test setup: %d and %d nodes", len(big.Nodes), len(g.Nodes))
	}
	if _, err := exec.Lower(big, p, exec.Options{}); err == nil {
		t.Error("plan of small values lowered onto a graph of big ones")
	}
	// The plan's own graph lowers fine.
	if _, err := exec.Lower(g, p, exec.Options{}); err != nil {
		t.Errorf("Lower onto the plan's own graph: %v", err)
	}
	if _, err := exec.CPU().Lower(small, p); err == nil {
		t.Error("the CPU backend lowered a mismatched plan")
	}
}

func TestProgramErrors(t *testing.T) {
	g := affine()
	pr := lower(t, g, exec.Options{})
	x, out := node(g, "x"), g.Outputs()[0]
	if err := pr.Write(x, make([]byte, 23)); err == nil {
		t.Error("Write of 23 bytes to a 24-byte input: no error")
	}
	if err := pr.Write(out, make([]byte, 24)); err == nil {
		t.Error("Write to a computed node: no error")
	}
	other := affine()
	if err := pr.Write(node(other, "x"), make([]byte, 24)); err == nil {
		t.Error("Write of another graph's node: no error")
	}
	if err := pr.Write(nil, nil); err == nil {
		t.Error("Write(nil): no error")
	}
	if err := pr.Read(out, make([]byte, 4)); err == nil {
		t.Error("Read into a short buffer: no error")
	}
	if err := pr.Sync(); err != nil {
		t.Errorf("Sync: %v", err)
	}
	if err := pr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pr.Run(); err == nil {
		t.Error("Run after Close: no error")
	}
	if err := pr.Write(x, make([]byte, 24)); err == nil {
		t.Error("Write after Close: no error")
	}
	if err := pr.Read(out, make([]byte, 24)); err == nil {
		t.Error("Read after Close: no error")
	}
	if _, err := pr.Clone(); err == nil {
		t.Error("Clone after Close: no error")
	}
}

// TestProgramClone checks that a clone shares the weight region and owns
// its arena.
func TestProgramClone(t *testing.T) {
	g := affine()
	pr := lower(t, g, exec.Options{})
	x, b, out := node(g, "x"), node(g, "b"), g.Outputs()[0]
	if err := pr.Write(b, tensor.Bytes([]float32{1, 1, 1})); err != nil {
		t.Fatal(err)
	}
	cx, err := pr.Clone()
	if err != nil {
		t.Fatal(err)
	}
	c := cx.(*exec.Program)
	if unsafe.SliceData(c.Weights) != unsafe.SliceData(pr.Weights) {
		t.Error("clone does not share the weights")
	}
	if unsafe.SliceData(c.Arena) == unsafe.SliceData(pr.Arena) {
		t.Error("clone shares the arena")
	}
	if err := pr.Write(x, tensor.Bytes([]float32{1, 1, 1, 1, 1, 1})); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(x, tensor.Bytes([]float32{2, 2, 2, 2, 2, 2})); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*exec.Program{pr, c} {
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := pr.Values[out.ID].F32()[0], float32(3); got != want {
		t.Errorf("original: %v, want %v", got, want)
	}
	if got, want := c.Values[out.ID].F32()[0], float32(5); got != want {
		t.Errorf("clone: %v, want %v", got, want)
	}
	// A weight written through the clone is seen by the original. (Its
	// input is written again: a run may reuse an input's arena bytes
	// once its last reader is done.)
	if err := c.Write(b, tensor.Bytes([]float32{10, 10, 10})); err != nil {
		t.Fatal(err)
	}
	if err := pr.Write(x, tensor.Bytes([]float32{1, 1, 1, 1, 1, 1})); err != nil {
		t.Fatal(err)
	}
	if err := pr.Run(); err != nil {
		t.Fatal(err)
	}
	if got, want := pr.Values[out.ID].F32()[0], float32(12); got != want {
		t.Errorf("original after the clone set b: %v, want %v", got, want)
	}
}

func TestBackends(t *testing.T) {
	if k := exec.Kinds(); len(k) == 0 || k[0] != "cpu" {
		t.Errorf("Kinds() = %v, want cpu first", k)
	}
	if b, err := exec.OpenBackend("cpu", 0); err != nil || b.Name() != "cpu" {
		t.Errorf("OpenBackend(cpu) = %v, %v", b, err)
	}
	_, err := exec.OpenBackend("nosuch", 0)
	if err == nil || !strings.Contains(err.Error(), "driver/nosuch") {
		t.Errorf("OpenBackend(nosuch) = %v, want an error with an import hint", err)
	}
}

// TestProgramWriteLarge: inputs and params of a MiB and more are copied
// by the pool's workers in chunks (the last one short), byte for byte,
// without allocating; with one worker they are copied as before.
func TestProgramWriteLarge(t *testing.T) {
	const n = 1<<18 + 12345 // floats: 1 MiB and a short last chunk
	for _, workers := range []int{1, 2, 3} {
		g := graph.New()
		x := g.Input("x", tensor.F32, n)
		b := g.Param("b", tensor.F32, n)
		g.Output(g.Add(x, b))
		pr := lower(t, g, exec.Options{Pool: exec.NewPool(workers)})
		xs, bs := make([]float32, n), make([]float32, n)
		for i := range xs {
			xs[i], bs[i] = float32(i), float32(-2*i)
		}
		if err := pr.Write(x, tensor.Bytes(xs)); err != nil {
			t.Fatal(err)
		}
		if err := pr.Write(b, tensor.Bytes(bs)); err != nil {
			t.Fatal(err)
		}
		if err := pr.Run(); err != nil {
			t.Fatal(err)
		}
		for i, v := range pr.Values[g.Outputs()[0].ID].F32() {
			if v != float32(-i) {
				t.Fatalf("%d workers: out[%d] = %v, want %v", workers, i, v, float32(-i))
			}
		}
		if allocs := testing.AllocsPerRun(5, func() { _ = pr.Write(x, tensor.Bytes(xs)) }); allocs != 0 {
			t.Errorf("%d workers: Write allocates %v times", workers, allocs)
		}
	}
}
