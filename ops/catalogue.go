package ops

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Kernel computes one node's output from its inputs. ins[i] has the dtype
// and shape of the node's input i, out those of the node. Kernels must not
// keep the tensors after returning, and fail only on data-dependent
// problems (an index out of range, an integer division by zero).
type Kernel func(ins []tensor.Tensor, out tensor.Tensor) error

// Prepare validates a node and returns its kernel with everything that
// depends only on shapes and attributes precomputed. Each call returns a
// kernel with its own scratch, so kernels of cloned programs can run
// concurrently.
type Prepare func(n *graph.Node) (Kernel, error)

// Entry describes the kernels of one op kind.
type Entry struct {
	Op graph.Op
	// DTypes are the dtypes (of the node's first input; of the node itself
	// for sources) the reference kernel handles natively. F16 and BF16
	// nodes of an op with an F32 kernel run through it, widened.
	DTypes []tensor.DType
	// Reference prepares the plain-Go reference kernel.
	Reference Prepare
	// InPlace: the output may share memory with input 0 (elementwise ops
	// whose output has input 0's size and dtype read each element before
	// writing it).
	InPlace bool
	// Tol is the relative error a faster F32 kernel may show against the
	// reference (0 means exact, as for data movement).
	Tol float64
}

// Env is what the executor lends fast kernels.
type Env struct {
	// For runs body over [0, n) split across the executor's worker pool
	// and returns when all chunks are done. grain is the smallest chunk
	// worth a worker: at most ceil(n/grain) chunks are made, sized evenly. body must be safe to call concurrently on disjoint ranges.
	// It is prepared once: the same body func value is passed on every
	// run, so calling For does not allocate.
	For func(n, grain int, body func(lo, hi int))
	// Threads is the number of workers For may use.
	Threads int
	// WeightBytes is the size of the program's weights and constants (0:
	// unknown). Where it far exceeds the caches, each kernel's weights
	// have left them by the next run and are read from memory
	// (asm.Conv2D.ColdWeights), which some kernels fetch further ahead.
	WeightBytes int
	// WeightsVersion counts writes to the weight region (SetParam). A
	// kernel that caches a transformed copy of a param or constant input
	// (a packed GEMM panel) rebuilds it when the count has changed since it
	// was made. Nil means weights never change.
	WeightsVersion *atomic.Uint64
	// ParamSource, if set, reports the dtype a param's current value was
	// given in (tensor.BF16 for weights set from bf16 bytes into an F32
	// param), or the param's own dtype; tensor.Invalid for a node that is
	// not a param. Kernels that cache a transformed weight read it when
	// they rebuild (the weights version moved): a GEMM keeps BF16 weights
	// in bf16 where the CPU multiplies bf16 natively.
	ParamSource func(n *graph.Node) tensor.DType
	// Shared holds what one program's prepared kernels share, each kernel
	// family under keys of its own type: the GEMMs' packed weights, so
	// products that read the same weight node under the same plan keep
	// one packed copy (an unrolled recurrent layer, graph.Recurrent, has
	// one product per step, all reading R), and the convolutions', so a
	// step's serial twin (planned for one worker, exec's Step.Serial)
	// runs on its pool kernel's packing. The steps of a program run one
	// after another, so what is shared is never used concurrently.
	// Nil: nothing is shared.
	Shared map[any]any
}

// Serial is an Env that runs everything on the calling goroutine.
var Serial = Env{For: func(n, grain int, body func(lo, hi int)) {
	if n > 0 {
		body(0, n)
	}
}, Threads: 1}

var catalogue = map[graph.Op]*Entry{}

// Register adds an entry; kernel files call it from init. Registering an
// op twice is a programming error and panics at start-up.
func Register(e Entry) {
	if _, dup := catalogue[e.Op]; dup {
		panic(fmt.Sprintf("ops: %v registered twice", e.Op))
	}
	catalogue[e.Op] = &e
}

// Lookup returns the entry of an op kind, or an error if kiln has no
// kernel for it.
func Lookup(op graph.Op) (*Entry, error) {
	e, ok := catalogue[op]
	if !ok {
		return nil, fmt.Errorf("ops: no kernel for %v", op)
	}
	return e, nil
}

// KeyDType is the dtype that selects a node's kernel: its first input's,
// or its own for a source.
func KeyDType(n *graph.Node) tensor.DType {
	if len(n.Inputs) > 0 {
		return n.Inputs[0].DType
	}
	return n.DType
}

// Supports reports whether the reference kernel of op handles dt, directly
// or by widening F16/BF16 to F32.
func (e *Entry) Supports(dt tensor.DType) bool {
	if slices.Contains(e.DTypes, dt) {
		return true
	}
	return (dt == tensor.F16 || dt == tensor.BF16) && slices.Contains(e.DTypes, tensor.F32)
}

// PrepareReference makes the reference kernel for a node, widening F16
// and BF16 through F32 where the op has no native kernel for them.
func PrepareReference(n *graph.Node) (Kernel, error) {
	e, err := Lookup(n.Op)
	if err != nil {
		return nil, err
	}
	dt := KeyDType(n)
	switch {
	case slices.Contains(e.DTypes, dt):
		k, err := e.Reference(n)
		if err != nil {
			return nil, fmt.Errorf("ops: %s: %w", n, err)
		}
		return k, nil
	case e.Supports(dt):
		return widened(e, n)
	}
	return nil, fmt.Errorf("ops: %v has no kernel for dtype %v (node %s)", n.Op, dt, n.Name)
}

// FastPrepare prepares an optimised kernel (multi-threaded, assembly) for
// a node, or returns a nil Kernel when it has none for this node's dtype or
// shapes; the executor then uses the reference kernel. variant names the
// implementation chosen: its kernel family's variant ("avx512", "avx2",
// "neon", or "go" for the pure-Go twin), prefixed by the kernel where an
// op has several ("ew-avx2", "flash-go").
type FastPrepare func(n *graph.Node, env Env) (k Kernel, variant string, err error)

var fast = map[graph.Op][]FastPrepare{}

// RegisterFast adds a fast kernel for an op; several may be registered and
// the first that takes a node wins, so register the most specialised
// first.
func RegisterFast(op graph.Op, f FastPrepare) { fast[op] = append(fast[op], f) }

// PrepareFast makes the best kernel kiln has for a node: the entry's fast
// kernel when it takes the node, else the reference kernel. It returns the
// variant name for reports.
func PrepareFast(n *graph.Node, env Env) (Kernel, string, error) {
	for _, f := range fast[n.Op] {
		k, variant, err := f(n, env)
		if err != nil {
			return nil, "", fmt.Errorf("ops: %s: %w", n, err)
		}
		if k != nil {
			return k, variant, nil
		}
	}
	k, err := PrepareReference(n)
	return k, "reference", err
}
