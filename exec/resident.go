package exec

import "github.com/kilnml/kiln/graph"

// Resident is an optional Executable interface for devices that keep
// handles (persistent inputs such as a KV cache) in device memory between
// runs, fed from outputs on the device, so a handle crosses to or from
// the host only when bound or read (kiln's BindGPUHandle and friends).
// Executables without it (the CPU, where host memory is device memory)
// get handles written before each run instead.
//
// Where a handle lives is plan.Residence's answer for its input and
// feed: the input's own arena bytes when nothing else uses them, else
// memory of its own copied in before each run. Clone gives the clone its
// own copy of every handle (same values, same feeds).
type Resident interface {
	// BindResident makes graph input n device-resident with value data
	// (n's dtype, exactly its size); every later run reads it there, and
	// Write to n is refused. Binding again replaces the value.
	BindResident(n *graph.Node, data []byte) error
	// FeedResident makes output out (n's dtype and shape) flow into n's
	// handle on the device after every run; nil stops feeding.
	FeedResident(n, out *graph.Node) error
	// RefreshResident copies output out of the last run into n's handle
	// on the device now, once.
	RefreshResident(n, out *graph.Node) error
	// ReadResident waits for queued runs and downloads n's handle.
	ReadResident(n *graph.Node, dst []byte) error
}

// Transfers counts the bytes an executable copied between host and
// device memory since it was made: inputs and params written, outputs
// and handles read. A CPU program copies none.
type Transfers struct {
	ToDevice, ToHost int64
}

// TransferCounter is an optional Executable interface reporting
// Transfers, so a caller can check what crosses the bus per run (a
// decode step with a resident KV cache: the token in, the logits out).
type TransferCounter interface {
	Transfers() Transfers
}
