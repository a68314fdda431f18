package kiln

import (
	"fmt"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// pipelineDepth is how many runs RunPipelined keeps in flight.
const pipelineDepth = 3

// commit is one CommitNoWait: in flight on a pipelining device (p), or
// already run and copied out (outs) where runs are synchronous.
type commit struct {
	p    exec.Pending
	outs [][]float32
}

// typedF32 wraps float32 inputs as typed ones.
func typedF32(inputs []Input) []TypedInput {
	typed := make([]TypedInput, len(inputs))
	for i, in := range inputs {
		typed[i] = TypedInput{Name: in.Name, Data: tensor.Bytes(in.Data), DType: tensor.F32}
	}
	return typed
}

// committer is the executable's pipelining interface when it has one and
// the graph can use it: handles and active extents are fed run by run
// through the arena, so those graphs run synchronously.
func (cg *CompiledGraph) committer() (exec.Committer, bool) {
	c, ok := cg.x.(exec.Committer)
	return c, ok && len(cg.handles) == 0 && cg.active() == nil
}

// CommitNoWait starts a run without waiting for it. On a device that
// pipelines (Metal) each commit stages its own inputs and snapshots its
// own outputs, so later commits never overwrite them; elsewhere (the
// CPU) it runs synchronously and keeps a copy of the outputs. Either
// way SyncPending or SyncPendingOutputs waits for every commit and frees
// what they hold.
func (cg *CompiledGraph) CommitNoWait(inputs ...Input) error {
	if err := cg.acquire(useRun); err != nil {
		return err
	}
	defer cg.release(useRun)
	cm, ok := cg.committer()
	if !ok {
		outs, err := cg.run(inputs)
		if err != nil {
			return err
		}
		cg.commits = append(cg.commits, commit{outs: outs})
		return nil
	}
	p, err := cg.commit(cm, inputs)
	if err != nil {
		return err
	}
	cg.commits = append(cg.commits, commit{p: p})
	return nil
}

// commit checks and converts inputs as Run does and starts one run.
func (cg *CompiledGraph) commit(cm exec.Committer, inputs []Input) (exec.Pending, error) {
	data, err := cg.namedInputs(typedF32(inputs))
	if err != nil {
		return nil, err
	}
	ins := make(map[*graph.Node][]byte, len(data))
	for i, n := range cg.g.Inputs() {
		ins[n] = data[i]
	}
	return cm.Commit(ins, cg.g.Outputs())
}

// SyncPending waits for every CommitNoWait. Output(i) then shows the
// last commit's outputs.
func (cg *CompiledGraph) SyncPending() error {
	if err := cg.acquire(useGraph); err != nil {
		return err
	}
	defer cg.release(useGraph)
	_, err := cg.syncPendingOutputs()
	return err
}

// SyncPendingOutputs waits for every CommitNoWait and returns each
// commit's own outputs as float32, in commit order:
// out[commit][output][element]. Output(i) then shows the last commit's.
func (cg *CompiledGraph) SyncPendingOutputs() ([][][]float32, error) {
	if err := cg.acquire(useGraph); err != nil {
		return nil, err
	}
	defer cg.release(useGraph)
	return cg.syncPendingOutputs()
}

// syncPendingOutputs is SyncPendingOutputs for callers that hold the graph.
func (cg *CompiledGraph) syncPendingOutputs() ([][][]float32, error) {
	if cg.closed {
		return nil, errClosed
	}
	cs := cg.commits
	cg.commits = nil
	out := make([][][]float32, len(cs))
	var first error
	for i, c := range cs {
		if c.p == nil {
			out[i] = c.outs
			continue
		}
		o, err := cg.pendingOutputs(c.p)
		if err != nil && first == nil {
			first = fmt.Errorf("kiln: commit %d: %w", i, err)
		}
		out[i] = o
	}
	if err := cg.x.Sync(); err != nil && first == nil {
		first = err
	}
	return out, first
}

// pendingOutputs waits for a commit, reads its outputs through the
// host staging buffers (so Output(i) shows them) and releases it.
func (cg *CompiledGraph) pendingOutputs(p exec.Pending) ([][]float32, error) {
	defer p.Release()
	for i, o := range cg.g.Outputs() {
		if err := p.Read(o, cg.stage[i]); err != nil {
			return nil, err
		}
		cg.unstaged[i] = false
	}
	return cg.outputsF32()
}

// dropCommits releases commits nobody synced (Close).
func (cg *CompiledGraph) dropCommits() {
	for _, c := range cg.commits {
		if c.p != nil {
			c.p.Release()
		}
	}
	cg.commits = nil
}

// RunPipelined runs each input set and returns every run's outputs
// separately: out[run][output][element]. On a device that pipelines it
// keeps up to three runs in flight, each with its own inputs and
// outputs; elsewhere the runs follow one another.
func (cg *CompiledGraph) RunPipelined(sets [][]Input) ([][][]float32, error) {
	if err := cg.acquire(useRun); err != nil {
		return nil, err
	}
	defer cg.release(useRun)
	if cg.closed {
		return nil, errClosed
	}
	cm, ok := cg.committer()
	out := make([][][]float32, len(sets))
	if !ok {
		for i, set := range sets {
			o, err := cg.run(set)
			if err != nil {
				return nil, fmt.Errorf("kiln: RunPipelined: set %d: %w", i, err)
			}
			out[i] = o
		}
		return out, cg.x.Sync()
	}
	var q []exec.Pending // in flight, oldest first
	defer func() {
		for _, p := range q {
			p.Release()
		}
	}()
	done := 0
	finish := func() error {
		p := q[0]
		q = q[1:]
		o, err := cg.pendingOutputs(p)
		if err != nil {
			return fmt.Errorf("kiln: RunPipelined: set %d: %w", done, err)
		}
		out[done] = o
		done++
		return nil
	}
	for i, set := range sets {
		if len(q) == pipelineDepth {
			if err := finish(); err != nil {
				return nil, err
			}
		}
		p, err := cg.commit(cm, set)
		if err != nil {
			return nil, fmt.Errorf("kiln: RunPipelined: set %d: %w", i, err)
		}
		q = append(q, p)
	}
	for len(q) > 0 {
		if err := finish(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
