package exec

import (
	"fmt"
	"sort"
	"sync"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
)

// Backend is a device kiln can run programs on. The CPU backend lives in
// this package; GPU drivers register theirs when imported.
type Backend interface {
	// Name identifies the device, e.g. "cpu" or "cuda:0".
	Name() string
	// Lower turns a verified, planned graph into an executable with its
	// own arena (allocated on the device) and weight region.
	Lower(g *graph.Graph, p *plan.Plan) (Executable, error)
}

// Executable is one lowered program on a backend.
type Executable interface {
	// Write uploads the bytes of an input or param node (in the node's
	// dtype, exactly its size).
	Write(n *graph.Node, data []byte) error
	// Run executes every step once; on devices it may return before the
	// work is done (Sync waits).
	Run() error
	// Sync waits for queued work.
	Sync() error
	// Read downloads the value of a node (an output, or an input).
	Read(n *graph.Node, dst []byte) error
	// Clone makes an executable sharing the weights read-only, with its
	// own arena, safe to run concurrently with the original.
	Clone() (Executable, error)
	// Close releases device memory; the executable is unusable after.
	Close() error
	// Stats reports step counts and the kernel variant of every step.
	Stats() Stats
}

// Stats summarises a lowered program.
type Stats struct {
	Steps    int            // kernel launches per run
	Variants map[string]int // "Op/variant" → steps
}

// Opener makes a backend for a device index.
type Opener func(index int) (Backend, error)

var (
	backendsMu sync.Mutex
	backends   = map[string]Opener{}
)

// RegisterBackend makes a device kind available by name ("cuda",
// "metal"); drivers call it from init, like database/sql drivers.
func RegisterBackend(kind string, open Opener) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	backends[kind] = open
}

// OpenBackend opens a registered device kind, or explains which kinds
// exist and how to get the missing one.
func OpenBackend(kind string, index int) (Backend, error) {
	if kind == "cpu" {
		return CPU(), nil
	}
	backendsMu.Lock()
	open, ok := backends[kind]
	backendsMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("exec: no %q backend registered (have %v); import its driver, e.g. _ \"github.com/kilnml/kiln/driver/%s\"",
			kind, Kinds(), kind)
	}
	return open(index)
}

// Kinds lists the registered device kinds, cpu included.
func Kinds() []string {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	out := []string{"cpu"}
	for k := range backends {
		out = append(out, k)
	}
	sort.Strings(out[1:])
	return out
}
