package kiln

import (
	"fmt"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
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
	Plan *plan.Options // nil: from KILN_PLAN
	Exec exec.Options  // CPU worker pool and kernel choice
}

// NewSession starts a session for a device.
func NewSession(dev Device) *Session { return &Session{dev: dev} }

// WithOptions returns a session that compiles with explicit options.
func (s *Session) WithOptions(o Options) *Session { return &Session{dev: s.dev, opts: o} }

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
	work := g.Clone()
	frep, p, err := s.fuseAndPlan(work)
	if err != nil {
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
	frep, err := fuse.Run(work, fo)
	if err != nil {
		return frep, nil, err
	}
	po := plan.FromEnv()
	if s.opts.Plan != nil {
		po = *s.opts.Plan
	}
	p, err := plan.Make(work, po)
	if err != nil {
		return frep, nil, err
	}
	return frep, p, nil
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
