package kiln_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
)

// queueDev is a fake asynchronous device over the CPU executor: one
// shared arena, and commits that run only when waited on, in commit
// order, as a GPU queue does, all of them on the first wait. A front end that read outputs from the
// arena instead of each commit's snapshot would see the last run's.
type queueDev struct {
	exec.Executable
	queue    []*queuedRun // committed, not yet run
	inFlight int          // most commits ever queued at once
	released int
}

type queuedRun struct {
	d       *queueDev
	ins     map[*graph.Node][]byte
	outs    []*graph.Node
	snap    map[*graph.Node][]byte
	done    bool
	err     error
	dropped bool
}

func init() {
	exec.RegisterBackend("queuefake", func(int) (exec.Backend, error) { return queueBackend{}, nil })
}

type queueBackend struct{}

func (queueBackend) Name() string { return "queuefake" }

func (queueBackend) Lower(g *graph.Graph, p *plan.Plan) (exec.Executable, error) {
	x, err := exec.CPU().Lower(g, p)
	if err != nil {
		return nil, err
	}
	return &queueDev{Executable: x}, nil
}

// lastQueue is the device of the last compiled fake graph (tests run
// one at a time here).
var lastQueue *queueDev

func (d *queueDev) Commit(ins map[*graph.Node][]byte, outs []*graph.Node) (exec.Pending, error) {
	r := &queuedRun{d: d, ins: map[*graph.Node][]byte{}, outs: outs}
	for n, b := range ins {
		r.ins[n] = bytes.Clone(b) // staged: the caller may reuse its buffers
	}
	d.queue = append(d.queue, r)
	d.inFlight = max(d.inFlight, len(d.queue))
	lastQueue = d
	return r, nil
}

// Wait runs the whole queue, as a GPU that ran ahead would have: runs
// committed after r have overwritten the arena by the time r is read.
func (r *queuedRun) Wait() error {
	for len(r.d.queue) > 0 {
		q := r.d.queue[0]
		r.d.queue = r.d.queue[1:]
		q.done, q.err = true, q.run()
	}
	return r.err
}

func (r *queuedRun) run() error {
	for n, b := range r.ins {
		if err := r.d.Write(n, b); err != nil {
			return err
		}
	}
	if err := r.d.Run(); err != nil {
		return err
	}
	r.snap = map[*graph.Node][]byte{}
	for _, o := range r.outs {
		b := make([]byte, o.Shape.NumElements()*o.DType.Size())
		if err := r.d.Read(o, b); err != nil {
			return err
		}
		r.snap[o] = b
	}
	return nil
}

func (r *queuedRun) Read(n *graph.Node, dst []byte) error {
	if r.dropped {
		return fmt.Errorf("read after release")
	}
	if err := r.Wait(); err != nil {
		return err
	}
	b, ok := r.snap[n]
	if !ok || len(b) != len(dst) {
		return fmt.Errorf("%s is not a %d-byte output of this run", n, len(dst))
	}
	copy(dst, b)
	return nil
}

func (r *queuedRun) Release() {
	_ = r.Wait()
	if !r.dropped {
		r.dropped = true
		r.d.released++
	}
}

// pipelineInputs are distinct x values for twoOutputMLP's graph.
func pipelineInputs(n int) [][]kiln.Input {
	sets := make([][]kiln.Input, n)
	for i := range sets {
		x := make([]float32, 6)
		for j := range x {
			x[j] = float32((i+1)*(j-2)) * 0.75
		}
		sets[i] = []kiln.Input{kiln.In("x", x)}
	}
	return sets
}

// pipelineGraphs compiles twoOutputMLP's graph on the CPU (the
// reference) and on the fake queue device.
func pipelineGraphs(t *testing.T) (ref, fake *kiln.CompiledGraph) {
	ref, feeds := twoOutputMLP(t)
	return ref, compileSet(t, kiln.NewSession(kiln.Device{Kind: "queuefake"}), ref.Graph(), feeds)
}

// TestCommitNoWaitSnapshots: two commits in flight on an asynchronous
// device each return their own outputs, equal to a CPU run on their
// inputs, and both are released.
func TestCommitNoWaitSnapshots(t *testing.T) {
	ref, fake := pipelineGraphs(t)
	sets := pipelineInputs(2)
	for _, set := range sets {
		if err := fake.CommitNoWait(set...); err != nil {
			t.Fatal(err)
		}
	}
	d := lastQueue
	if len(d.queue) != 2 {
		t.Fatalf("%d commits queued before SyncPending, want 2 in flight", len(d.queue))
	}
	got, err := fake.SyncPendingOutputs()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || d.released != 2 {
		t.Fatalf("%d results, %d released; want 2 and 2", len(got), d.released)
	}
	for i, set := range sets {
		want, err := ref.Run(set...)
		if err != nil {
			t.Fatal(err)
		}
		for o := range want {
			if err := closeTo(got[i][o], want[o], refTol); err != nil {
				t.Errorf("commit %d output %d: %v", i, o, err)
			}
		}
	}
	if err := closeTo(fake.Output(0), got[1][0], 0); err != nil {
		t.Errorf("Output(0) after SyncPending is not the last commit's: %v", err)
	}
	if got[0][0][0] == got[1][0][0] && got[0][0][1] == got[1][0][1] {
		t.Errorf("both commits report the same outputs %v", got[0][0])
	}
	if more, err := fake.SyncPendingOutputs(); err != nil || len(more) != 0 {
		t.Errorf("second SyncPendingOutputs = %v, %v; want nothing pending", more, err)
	}
}

// TestRunPipelinedQueued: RunPipelined keeps several runs in flight and
// returns each run's outputs; the CPU path gives the same results.
func TestRunPipelinedQueued(t *testing.T) {
	ref, fake := pipelineGraphs(t)
	sets := pipelineInputs(7)
	got, err := fake.RunPipelined(sets)
	if err != nil {
		t.Fatal(err)
	}
	d := lastQueue
	if d.inFlight < 2 || d.released != len(sets) {
		t.Errorf("at most %d runs in flight, %d released; want pipelining and %d releases", d.inFlight, d.released, len(sets))
	}
	want, err := ref.RunPipelined(sets)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sets {
		for o := range want[i] {
			if err := closeTo(got[i][o], want[i][o], refTol); err != nil {
				t.Errorf("run %d output %d: %v", i, o, err)
			}
		}
	}
	bad := append(pipelineInputs(2), []kiln.Input{kiln.In("x", []float32{1})})
	if _, err := fake.RunPipelined(bad); err == nil || !bytes.Contains([]byte(err.Error()), []byte("set 2")) {
		t.Errorf("short third set: err = %v, want one naming set 2", err)
	}
	if len(d.queue) != 0 {
		t.Errorf("%d runs left queued after a failed RunPipelined", len(d.queue))
	}
}

// TestCommitNoWaitCPU: on the CPU commits run at once and
// SyncPendingOutputs still returns each one's outputs.
func TestCommitNoWaitCPU(t *testing.T) {
	ref, _ := pipelineGraphs(t)
	sets := pipelineInputs(3)
	var want [][][]float32
	for _, set := range sets {
		w, err := ref.Run(set...)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, w)
	}
	for _, set := range sets {
		if err := ref.CommitNoWait(set...); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ref.SyncPendingOutputs()
	if err != nil || len(got) != len(sets) {
		t.Fatalf("SyncPendingOutputs: %d results, %v", len(got), err)
	}
	for i := range sets {
		if err := closeTo(got[i][0], want[i][0], 0); err != nil {
			t.Errorf("commit %d: %v", i, err)
		}
	}
}
