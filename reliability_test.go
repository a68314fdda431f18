package kiln_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/npy"
	"github.com/kilnml/kiln/onnx"
	"github.com/kilnml/kiln/safetensors"
	"github.com/kilnml/kiln/tensor"
)

// The reliability suite: every public entry point given bad input returns
// an error rather than panicking, a failed run leaves the compiled graph
// able to run correctly, and clones survive concurrent stress (CI runs
// the stress test under -race). api_errors_test.go covers the messages
// and arena preservation of the run-time checks; this file widens the net.

// mustErr calls f, failing the test if it panics or returns nil.
func mustErr(t *testing.T, name string, f func() error) {
	t.Helper()
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s: panic: %v", name, r)
				err = fmt.Errorf("panicked")
			}
		}()
		err = f()
	}()
	if err == nil {
		t.Errorf("%s: no error", name)
	}
}

// TestClosedGraphCalls checks that every method of a closed graph returns
// an error (or nil for the views), and that Close is idempotent.
func TestClosedGraphCalls(t *testing.T) {
	g, feeds := smallMLP(t)
	cg := compileSet(t, kiln.NewSession(kiln.CPU), g, feeds)
	x := feeds["x"].F32()
	if _, err := cg.RunSlots(x); err != nil {
		t.Fatal(err)
	}
	if err := cg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cg.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for name, f := range map[string]func() error{
		"Run":             func() error { _, err := cg.Run(kiln.In("x", x)); return err },
		"RunTyped":        func() error { _, err := cg.RunTyped(typedInputs(g, feeds)...); return err },
		"RunSlots":        func() error { _, err := cg.RunSlots(x); return err },
		"RunRaw":          func() error { _, err := cg.RunRaw(kiln.In("x", x)); return err },
		"SetParam":        func() error { return cg.SetParam("b2", feeds["b2"].F32()) },
		"SetParamTyped":   func() error { return cg.SetParamTyped("b2", feeds["b2"].Data, tensor.F32) },
		"BindHandle":      func() error { return cg.BindHandle("x", x) },
		"FeedHandle":      func() error { return cg.FeedHandle("x", 0) },
		"ReadHandle":      func() error { _, err := cg.ReadHandle("x"); return err },
		"SetActiveExtent": func() error { return cg.SetActiveExtent(1, 2) },
		"Clone":           func() error { _, err := cg.Clone(); return err },
		"OutputTensor":    func() error { _, err := cg.OutputTensor(0); return err },
		"CommitNoWait":    func() error { return cg.CommitNoWait(kiln.In("x", x)) },
	} {
		mustErr(t, name, f)
	}
	if out := cg.Output(0); out != nil {
		t.Errorf("Output(0) after Close = %v, want nil", out)
	}
}

// TestBadArguments is a table of bad calls on an open graph that
// api_errors_test.go does not cover: params, typed params, outputs,
// extents and handles.
func TestBadArguments(t *testing.T) {
	g, feeds := smallMLP(t)
	cg := compileSet(t, kiln.NewSession(kiln.CPU), g, feeds)
	b2 := feeds["b2"].F32()
	cases := map[string]func() error{
		"SetParam nil":                 func() error { return cg.SetParam("b2", nil) },
		"SetParam empty name":          func() error { return cg.SetParam("", b2) },
		"SetParam on an input":         func() error { return cg.SetParam("x", feeds["x"].F32()) },
		"SetParamTyped invalid dtype":  func() error { return cg.SetParamTyped("b2", make([]byte, 8), tensor.Invalid) },
		"SetParamTyped odd bytes":      func() error { return cg.SetParamTyped("b2", make([]byte, 7), tensor.F32) },
		"SetParamTyped short f16":      func() error { return cg.SetParamTyped("b2", make([]byte, 2), tensor.F16) },
		"SetParamTyped nil":            func() error { return cg.SetParamTyped("b2", nil, tensor.F32) },
		"SetParamTyped unknown dtype":  func() error { return cg.SetParamTyped("b2", make([]byte, 8), tensor.DType(200)) },
		"OutputTensor -1":              func() error { _, err := cg.OutputTensor(-1); return err },
		"OutputTensor 1":               func() error { _, err := cg.OutputTensor(1); return err },
		"SetActiveExtent no such dim":  func() error { return cg.SetActiveExtent(1, 7) },
		"SetActiveExtent zero":         func() error { return cg.SetActiveExtent(0, 2) },
		"SetActiveExtent above upper":  func() error { return cg.SetActiveExtent(3, 2) },
		"SetActiveExtent negative":     func() error { return cg.SetActiveExtent(-1, -1) },
		"BindHandle unknown":           func() error { return cg.BindHandle("nope", b2) },
		"BindHandle nil":               func() error { return cg.BindHandle("x", nil) },
		"FeedHandle huge output index": func() error { return cg.FeedHandle("x", 1<<40) },
		"RunTyped nil data":            func() error { _, err := cg.RunTyped(kiln.TypedInput{Name: "x", DType: tensor.F32}); return err },
		"RunTyped unknown name": func() error {
			_, err := cg.RunTyped(kiln.TypedInput{Name: "q", Data: make([]byte, 24), DType: tensor.F32})
			return err
		},
		"RunRaw missing": func() error { _, err := cg.RunRaw(); return err },
	}
	for name, f := range cases {
		mustErr(t, name, f)
		if _, err := cg.RunSlots(feeds["x"].F32()); err != nil {
			t.Fatalf("%s: good run afterwards: %v", name, err)
		}
		if !equal(cg.Output(0), smallMLPWant) {
			t.Fatalf("%s: good run afterwards: %v, want %v", name, cg.Output(0), smallMLPWant)
		}
	}
	if out := cg.Output(5); out != nil {
		t.Errorf("Output(5) = %v, want nil", out)
	}
	if out := cg.Output(-1); out != nil {
		t.Errorf("Output(-1) = %v, want nil", out)
	}
}

// TestBuilderBadNodes feeds the graph builder nil nodes, nodes of another
// graph and invalid attributes: each must record an error (no panic), and
// compiling the graph must fail with it.
func TestBuilderBadNodes(t *testing.T) {
	cases := map[string]func(g *graph.Graph, x *graph.Node){
		"Relu nil":           func(g *graph.Graph, x *graph.Node) { g.Output(g.Relu(nil)) },
		"Add nil right":      func(g *graph.Graph, x *graph.Node) { g.Output(g.Add(x, nil)) },
		"MatMul nil left":    func(g *graph.Graph, x *graph.Node) { g.Output(g.MatMul(nil, x)) },
		"Reshape nil":        func(g *graph.Graph, x *graph.Node) { g.Output(g.Reshape(nil, -1)) },
		"Reshape bad size":   func(g *graph.Graph, x *graph.Node) { g.Output(g.Reshape(x, 5, 5)) },
		"Reshape two -1":     func(g *graph.Graph, x *graph.Node) { g.Output(g.Reshape(x, -1, -1)) },
		"Gather nil indices": func(g *graph.Graph, x *graph.Node) { g.Output(g.Gather(x, nil, 0)) },
		"Gather f32 indices": func(g *graph.Graph, x *graph.Node) { g.Output(g.Gather(x, x, 0)) },
		"Output nil":         func(g *graph.Graph, x *graph.Node) { g.Output(nil) },
		"Softmax bad axis":   func(g *graph.Graph, x *graph.Node) { g.Output(g.Softmax(x, 5)) },
		"Transpose bad perm": func(g *graph.Graph, x *graph.Node) { g.Output(g.Transpose(x, 0, 0)) },
		"Concat nothing":     func(g *graph.Graph, x *graph.Node) { g.Output(g.Concat(0)) },
		"Concat nil":         func(g *graph.Graph, x *graph.Node) { g.Output(g.Concat(0, x, nil)) },
		"Input negative dim": func(g *graph.Graph, x *graph.Node) { g.Output(g.Relu(g.Input("y", tensor.F32, -2))) },
		"Input duplicate":    func(g *graph.Graph, x *graph.Node) { g.Output(g.Add(x, g.Input("x", tensor.F32, 2, 3))) },
		"Input invalid type": func(g *graph.Graph, x *graph.Node) { g.Output(g.Input("y", tensor.Invalid, 2)) },
		"Param duplicate": func(g *graph.Graph, x *graph.Node) {
			g.Param("w", tensor.F32, 3)
			g.Output(g.Add(x, g.Param("w", tensor.F32, 3)))
		},
		"other graph's node": func(g *graph.Graph, x *graph.Node) {
			other := graph.New()
			g.Output(g.Add(x, other.Input("z", tensor.F32, 2, 3)))
		},
		"error then more ops": func(g *graph.Graph, x *graph.Node) {
			y := g.Relu(nil)
			g.Output(g.Exp(g.Add(y, x)))
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			var g *graph.Graph
			mustErr(t, "build", func() error {
				g = graph.New()
				build(g, g.Input("x", tensor.F32, 2, 3))
				return g.Err()
			})
			if g == nil {
				return
			}
			mustErr(t, "Compile", func() error {
				cg, err := kiln.NewSession(kiln.CPU).Compile(g)
				if err == nil {
					cg.Close()
				}
				return err
			})
		})
	}
}

// TestReadersGarbage gives the file readers truncated, random and
// adversarial bytes: each must return an error without panicking.
func TestReadersGarbage(t *testing.T) {
	inputs := map[string][]byte{
		"empty":        nil,
		"one byte":     {0},
		"text":         []byte("not a model at all"),
		"all ones":     bytesOf(0xff, 64),
		"npy magic":    []byte("\x93NUMPY\x01\x00\xff\xff{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"),
		"npy huge":     []byte("\x93NUMPY\x01\x00\x46\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }   \n"),
		"st huge len":  {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}'},
		"st bad json":  append([]byte{4, 0, 0, 0, 0, 0, 0, 0}, "{{{{"...),
		"st bad range": append([]byte{54, 0, 0, 0, 0, 0, 0, 0}, `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,99]}}`...),
		"proto varint": bytesOf(0x80, 20),
		"proto length": {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2},
	}
	for name, b := range inputs {
		mustErr(t, "onnx.Parse "+name, func() error { _, err := onnx.Parse(b); return err })
		mustErr(t, "npy.Decode "+name, func() error { _, err := npy.Decode(b); return err })
		mustErr(t, "safetensors.Parse "+name, func() error { _, err := safetensors.Parse(b); return err })
	}
}

func bytesOf(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

// TestRunAfterFailures interleaves failed runs of every kind (bad
// shapes, unknown names, a Gather index out of range inside a kernel)
// with good runs of a graph mixing Gather, MatMul and Softmax, and checks
// each good run against the reference interpreter.
func TestRunAfterFailures(t *testing.T) {
	g := graph.New()
	table := g.Param("table", tensor.F32, 6, 4)
	idx := g.Input("idx", tensor.I64, 3)
	x := g.Input("x", tensor.F32, 3, 4)
	h := g.Add(g.Gather(table, idx, 0), x)
	g.Output(g.Softmax(g.MatMul(h, g.Param("w", tensor.F32, 4, 5)), -1))
	feeds := randomFeeds(t, g, 3)
	cg := compileSet(t, kiln.NewSession(kiln.CPU), g, feeds)
	xs := feeds["x"].F32()
	good := func(ids ...int64) {
		t.Helper()
		f := map[string]tensor.Tensor{"table": feeds["table"], "w": feeds["w"], "x": feeds["x"]}
		f["idx"], _ = tensor.FromI64(tensor.Shape{3}, ids)
		out, err := cg.RunTyped(typedInputs(g, f)...)
		if err != nil {
			t.Fatalf("good run %v: %v", ids, err)
		}
		checkOutputs(t, out, interpret(t, g, f))
	}
	ti := func(ids ...int64) kiln.TypedInput {
		return kiln.TypedInput{Name: "idx", Data: tensor.Bytes(ids), DType: tensor.I64}
	}
	xin := kiln.TypedInput{Name: "x", Data: tensor.Bytes(xs), DType: tensor.F32}
	bad := []func() error{
		func() error { _, err := cg.RunTyped(ti(0, 6, 1), xin); return err },         // index past the end
		func() error { _, err := cg.RunTyped(ti(-7, 0, 1), xin); return err },        // index before the start
		func() error { _, err := cg.RunTyped(ti(0, 1), xin); return err },            // short idx
		func() error { _, err := cg.RunTyped(ti(0, 1, 2)); return err },              // missing x
		func() error { _, err := cg.Run(kiln.In("x", xs)); return err },              // idx is not f32
		func() error { _, err := cg.RunSlots(xs, xs); return err },                   // i64 slot as f32
		func() error { _, err := cg.RunTyped(ti(5, 5, 5), ti(1, 1, 1)); return err }, // idx twice
	}
	good(0, 1, 2)
	for i, f := range bad {
		mustErr(t, fmt.Sprintf("bad run %d", i), f)
		good(int64(i%6), 5, int64(-1-i%6))
	}
}

// TestCloneStress runs four clones of an MLP at once, 50 runs each, every
// run on its own input and checked against the interpreter; with the
// race detector on it also proves that clones share nothing mutable.
func TestCloneStress(t *testing.T) {
	g := testmodels.MLP(4, 16, 32, 8)
	base := randomFeeds(t, g, 1)
	cg := compileSet(t, kiln.NewSession(kiln.CPU), g, base)
	const workers, runs = 4, 50
	type job struct {
		x    []float32
		want []float32
	}
	jobs := make([][]job, workers)
	for w := range workers {
		for r := range runs {
			f := randomFeeds(t, g, uint64(100+w*runs+r))
			for k, v := range base {
				if k != "x" {
					f[k] = v
				}
			}
			jobs[w] = append(jobs[w], job{x: f["x"].F32(), want: interpret(t, g, f)[0].F32()})
		}
	}
	clones := make([]*kiln.CompiledGraph, workers)
	for w := range clones {
		c, err := cg.Clone()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		clones[w] = c
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			for r, j := range jobs[w] {
				var got []float32
				if r%2 == 0 {
					out, err := clones[w].Run(kiln.In("x", j.x))
					if err != nil {
						errs[w] = fmt.Errorf("run %d: %w", r, err)
						return
					}
					got = out[0]
				} else {
					if _, err := clones[w].RunSlots(j.x); err != nil {
						errs[w] = fmt.Errorf("run %d: %w", r, err)
						return
					}
					got = clones[w].Output(0)
				}
				if err := closeTo(got, j.want, refTol); err != nil {
					errs[w] = fmt.Errorf("run %d: %w", r, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("clone %d: %v", w, err)
		}
	}
}
