package kiln

import (
	"fmt"
	"math"
	"slices"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/sysmem"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/plan"
)

// Session compiles graphs for one device.
type Session struct {
	dev  Device
	opts Options
}

// Options tune compilation. The zero value reads the KILN_* variables
// (KILN_FUSE, KILN_PLAN, KILN_THREADS, KILN_KERNELS).
type Options struct {
	Fuse *fuse.Options // nil: from KILN_FUSE
	Plan *plan.Options // nil: from KILN_PLAN, concats joined on the CPU (plan.Options.JoinConcat)
	Exec exec.Options  // CPU worker pool and kernel choice
	// MemoryLimit bounds what a compiled CPU graph may allocate, its
	// arena and weights together, in bytes: 0 means the default (the
	// machine's physical memory, or the cgroup's limit where smaller;
	// none where the platform gives no figure), negative means none.
	MemoryLimit int64
	// Feeds names the graph inputs that a handle will be fed into after
	// every run (FeedHandle, SetGPUHandleFeed): their value is not needed
	// once a run has read it, so the plan may compute in place over them
	// (plan.Options.Overwritable). A KV cache updated elementwise is then
	// updated in its own bytes, and a GPU handle fed from that output
	// needs no copy at all (plan.Residence: in place). Such an input must
	// be written before every run, as handles and Run's inputs are.
	Feeds []string
}

// NewSession starts a session for a device.
func NewSession(dev Device) *Session { return &Session{dev: dev} }

// WithOptions returns a session that compiles with explicit options.
func (s *Session) WithOptions(o Options) *Session { return &Session{dev: s.dev, opts: o} }

// WithMemoryLimit returns a session whose Compile refuses, with an error
// naming both figures, a CPU graph whose arena and weights need more than
// bytes (0: the default, see Options.MemoryLimit; negative: no limit).
// Allocating them is the one large allocation of a compile, and a model
// that declares huge shapes would otherwise end the process with an
// out-of-memory error no caller can catch.
func (s *Session) WithMemoryLimit(bytes int64) *Session {
	o := s.opts
	o.MemoryLimit = bytes
	return &Session{dev: s.dev, opts: o}
}

// Device is the session's device.
func (s *Session) Device() Device { return s.dev }

// Compile fuses, plans and lowers a copy of g (g itself is not changed).
// It returns the first error recorded while g was built, or any problem
// found by verification, fusion, planning or lowering.
func (s *Session) Compile(g *graph.Graph) (*CompiledGraph, error) {
	if g == nil {
		return nil, fmt.Errorf("kiln: Compile: nil graph")
	}
	if err := g.Err(); err != nil {
		return nil, err
	}
	if err := graph.Verify(g); err != nil {
		return nil, err
	}
	backend, err := s.backend()
	if err != nil {
		return nil, err
	}
	for _, name := range s.opts.Feeds {
		if !slices.ContainsFunc(g.Inputs(), func(n *graph.Node) bool { return n.Name == name }) {
			return nil, fmt.Errorf("kiln: Options.Feeds: no input %q (inputs: %s)", name, names(g.Inputs()))
		}
	}
	work := g.Clone()
	frep, p, err := s.fuseAndPlan(work)
	if err != nil {
		return nil, err
	}
	if err := checkPadded(g, work); err != nil {
		return nil, err
	}
	x, err := backend.Lower(work, p)
	if err != nil {
		return nil, err
	}
	return newCompiled(s, work, p, x, frep), nil
}

// fuseAndPlan runs the session's fusion passes on work (in place) and
// plans it: the device-independent part of Compile, shared with the
// programs SetActiveExtent specialises.
func (s *Session) fuseAndPlan(work *graph.Graph) (fuse.Report, *plan.Plan, error) {
	fo := fuse.FromEnv()
	if s.opts.Fuse != nil {
		fo = *s.opts.Fuse
	}
	frep, err := fuse.Run(work, fo.ForDevice(s.dev.Kind))
	if err != nil {
		return frep, nil, err
	}
	po := plan.FromEnv()
	if s.opts.Plan != nil {
		po = *s.opts.Plan
	}
	if po.InPlace == nil {
		po.InPlace = ops.InPlace
	}
	if s.dev.Kind == "cpu" && s.opts.Plan == nil {
		po.JoinConcat = true // the CPU executor skips joined concats (plan.Plan.Free)
	}
	if feeds, given := s.opts.Feeds, po.Overwritable; len(feeds) > 0 {
		po.Overwritable = func(n *graph.Node) bool {
			return slices.Contains(feeds, n.Name) || given != nil && given(n)
		}
	}
	p, err := plan.Make(work, po)
	if err != nil {
		return frep, nil, err
	}
	if err := s.checkMemory(p); err != nil {
		return frep, nil, err
	}
	return frep, p, nil
}

// checkMemory refuses a CPU plan whose arena and weights exceed the
// session's memory limit. (A GPU's arena lives in device memory, which
// the driver's allocation checks.)
func (s *Session) checkMemory(p *plan.Plan) error {
	if s.dev.Kind != "cpu" || s.opts.MemoryLimit < 0 {
		return nil
	}
	limit, src := s.opts.MemoryLimit, "WithMemoryLimit"
	if limit == 0 {
		if limit, src = sysmem.Limit(); limit == 0 {
			return nil
		}
		src += ", the default; see Session.WithMemoryLimit"
	}
	need := int64(p.ArenaBytes) + int64(p.WeightBytes)
	if need > limit {
		return fmt.Errorf("kiln: the compiled graph needs %s (arena %s, weights %s), more than the memory limit of %s (%s)",
			plan.HumanBytes(int(min(need, math.MaxInt))), plan.HumanBytes(p.ArenaBytes), plan.HumanBytes(p.WeightBytes),
			plan.HumanBytes(int(limit)), src)
	}
	return nil
}

func (s *Session) backend() (exec.Backend, error) {
	if s.dev.Kind == "cpu" {
		return exec.CPUWith(s.opts.Exec), nil
	}
	b, err := exec.OpenBackend(s.dev.Kind, s.dev.Index)
	if err != nil {
		return nil, fmt.Errorf("kiln: device %v: %w", s.dev, err)
	}
	return b, nil
}
