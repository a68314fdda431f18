package exec

import "github.com/kilnml/kiln/graph"

// Committer is an optional Executable interface for devices that run
// asynchronously over one arena (Metal's shared storage): Commit starts a
// run without waiting and keeps that run's outputs apart from later
// runs', so several runs can be in flight (kiln's CommitNoWait,
// SyncPending and RunPipelined). Executables without it (the CPU) run
// synchronously, and each run's outputs replace the last.
type Committer interface {
	// Commit stages inputs (by node, exactly each node's bytes) so that
	// later commits cannot change what this run reads, queues the run
	// and a copy of outputs into a snapshot of its own, and returns
	// without waiting. Inputs left out keep their last written value.
	Commit(inputs map[*graph.Node][]byte, outputs []*graph.Node) (Pending, error)
}

// Pending is one run started by Committer.Commit.
type Pending interface {
	// Wait blocks until the run finished and reports its error.
	Wait() error
	// Read waits, then copies output n of this run (not of a later one)
	// into dst, which must be exactly n's size.
	Read(n *graph.Node, dst []byte) error
	// Release waits and frees the run's staging and snapshot; Read must
	// not be called after.
	Release()
}
