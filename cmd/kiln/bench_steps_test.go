package main

import (
	"errors"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
)

// compiledNodes compiles a model as bench does and indexes the nodes of
// its compiled graph by name, to check what --steps names against.
func compiledNodes(t *testing.T, path string) (map[string]*graph.Node, int) {
	t.Helper()
	mf := modelFlags{threads: 1}
	c, err := mf.loadModel(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.cg.Close()
	nodes := map[string]*graph.Node{}
	for _, n := range c.cg.Graph().Nodes {
		nodes[n.Name] = n
	}
	return nodes, c.cg.Stats().Steps
}

// TestBenchStepsText: --steps 3 prints a table of three steps, each a
// node of the compiled model with its op, dtype and shape, costliest
// first, with cumulative shares that add up the shares.
func TestBenchStepsText(t *testing.T) {
	path := filepath.Join(modelsDir, "cnn", "model.onnx")
	nodes, nsteps := compiledNodes(t, path)
	out, _, err := capture(t, runBench, path, "--runs", "3", "--warmup", "1", "--threads", "1", "--steps", "3", "--progress", "off")
	if err != nil {
		t.Fatal(err)
	}
	head := "costliest 3 of " + strconv.Itoa(nsteps) + " steps"
	_, table, ok := strings.Cut(out, head)
	if !ok {
		t.Fatalf("output lacks %q:\n%s", head, out)
	}
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 1+1+3+1 || !strings.HasPrefix(lines[len(lines)-1], "steps total ") {
		t.Fatalf("want a header, 3 rows and a total line:\n%s", table)
	}
	var prevMs, cum float64 = math.Inf(1), 0
	for i, line := range lines[2:5] {
		f := strings.Fields(line)
		if len(f) < 8 || f[0] != strconv.Itoa(i+1) {
			t.Fatalf("row %d: %q", i+1, line)
		}
		ms, share, cumPct := num(t, f[1]), num(t, strings.TrimSuffix(f[2], "%")), num(t, strings.TrimSuffix(f[3], "%"))
		if ms > prevMs {
			t.Errorf("row %d: %v ms after %v ms: not costliest first", i+1, ms, prevMs)
		}
		prevMs, cum = ms, cum+share
		if approx.Far(cum, cumPct, 0.15) { // both rounded to 0.1
			t.Errorf("row %d: cumulative %v%%, the shares so far add to %v%%", i+1, cumPct, cum)
		}
		n, ok := nodes[f[5]]
		if !ok {
			t.Errorf("row %d: no node %q in the compiled model", i+1, f[5])
			continue
		}
		if out := n.DType.String() + n.Shape.String(); f[4] != n.Op.String() || strings.Join(f[6:len(f)-1], " ") != out {
			t.Errorf("row %d: %q, the node is %s %s", i+1, line, n.Op, out)
		}
	}
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestBenchStepsJSON: with --steps above the step count, the JSON lists
// every step once, ranked by time, with shares summing to 100 and means
// summing to the reported total.
func TestBenchStepsJSON(t *testing.T) {
	path := filepath.Join(modelsDir, "bert", "model.onnx")
	nodes, nsteps := compiledNodes(t, path)
	r, _ := benchJSON(t, path, "--runs", "3", "--warmup", "1", "--threads", "1", "--steps", "1000")
	if len(r.Steps) != nsteps {
		t.Fatalf("%d steps listed, the program has %d", len(r.Steps), nsteps)
	}
	seen := map[int]bool{}
	var share, sumMs float64
	for i, s := range r.Steps {
		if s.Rank != i+1 || seen[s.Step] || i > 0 && s.MeanMs > r.Steps[i-1].MeanMs {
			t.Errorf("step %d: %+v (rank, repeat or order)", i, s)
		}
		seen[s.Step] = true
		share += s.SharePct
		sumMs += s.MeanMs
		if n, ok := nodes[s.Node]; !ok || n.Op.String() != s.Op || n.DType.String() != s.DType || !n.Shape.Equal(s.Shape) {
			t.Errorf("step %d: %+v is not a node of the compiled model", i, s)
		}
	}
	if approx.Far(share, 100, 1e-6) || approx.Far(r.Steps[len(r.Steps)-1].CumPct, 100, 1e-6) {
		t.Errorf("shares add to %v%%, last cumulative %v%%, want 100", share, r.Steps[len(r.Steps)-1].CumPct)
	}
	if approx.Far(sumMs, r.StepsTotalMs, 1e-9*(1+r.StepsTotalMs)) || r.StepsTotalMs <= 0 {
		t.Errorf("step means add to %v ms, total %v ms", sumMs, r.StepsTotalMs)
	}
	// Three BERT runs cost CPU time, which the platform reports on unix.
	if _, ok := processCPUTime(); ok && r.CPUMs <= 0 {
		t.Errorf("cpu_ms %v, want the CPU time per run", r.CPUMs)
	}

	// Without --steps the JSON has no steps.
	if _, out := benchJSON(t, path, "--runs", "1", "--warmup", "0"); strings.Contains(out, `"steps`) {
		t.Errorf("steps in the JSON without --steps: %s", out)
	}
}

func TestBenchStepsUsage(t *testing.T) {
	_, _, err := capture(t, runBench, filepath.Join(modelsDir, "cnn", "model.onnx"), "--steps", "-1")
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--steps -1") {
		t.Errorf("--steps -1: %v, want a usage error naming it", err)
	}
}

// TestBenchStepsLoops: on two workers (tuning off, so that the loops run
// on the pool) --steps says where the time in the parallel loops went:
// loops in every run, the caller's body and wait within their wall time
// (whether the other worker took chunks is the scheduler's call:
// exec's TestMeasureLoops checks its count); the text says the same; one
// worker has no loops to report.
func TestBenchStepsLoops(t *testing.T) {
	t.Setenv("KILN_TUNE", "off")
	path := filepath.Join(modelsDir, "bert", "model.onnx")
	r, out := benchJSON(t, path, "--runs", "4", "--warmup", "1", "--threads", "2", "--steps", "1")
	l := r.Loops
	if l == nil || l.Workers != 2 || l.Loops < 1 || l.Loops != math.Trunc(l.Loops) {
		t.Fatalf("loops %+v, want a whole number of loops a run on 2 workers: %s", l, out)
	}
	if l.CallerBusyMs <= 0 || l.WorkerBusyMs < 0 || l.JoinWaitMs < 0 || l.CallerBusyMs+l.JoinWaitMs > l.WallMs*(1+1e-9) {
		t.Errorf("loops %+v: want the caller busy, its body and wait within the loops' wall time", l)
	}
	if l.WallMs > r.StepsTotalMs*(1+1e-9) {
		t.Errorf("loops %+v take longer than the steps that run them (%v ms a run)", l, r.StepsTotalMs)
	}
	text, _, err := capture(t, runBench, path, "--runs", "2", "--warmup", "1", "--threads", "2", "--steps", "1", "--progress", "off")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "pool of 2 workers: ") || !strings.Contains(text, " parallel loops per run, ") {
		t.Errorf("no loops line on 2 workers:\n%s", text)
	}
	if _, one := benchJSON(t, path, "--runs", "2", "--warmup", "1", "--threads", "1", "--steps", "1"); strings.Contains(one, `"loops"`) {
		t.Errorf("loops in the JSON on one worker: %s", one)
	}
}
