package cuda

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ptx"
)

// customStep is what a step launching a user's kernel (graph.Custom)
// adds to a kiln kernel's step. The user's module is loaded as a module
// of its own rather than spliced into kiln's emitted one: it may name
// another .version or .target, and its .func, .global and entry names
// could clash with kiln's or with another custom op's module. A function
// from any loaded module launches on the program's stream all the same,
// so the only cost is one more JIT per distinct module.
type customStep struct {
	module  string // the user's PTX source
	scalars []any  // arguments after the pointers
}

// lowerCustom makes a custom node's step: pointers as for kiln's kernels
// (output, then the inputs in order), then the spec's scalars.
func lowerCustom(n *graph.Node, at func(*graph.Node) ref) (stepPlan, error) {
	c, err := ptx.CustomOf(n)
	if err != nil {
		return stepPlan{}, fmt.Errorf("cuda: lowering %s: %w", n, err)
	}
	ptrs := []ref{at(n)}
	for _, in := range n.Inputs {
		ptrs = append(ptrs, at(in))
	}
	k := &ptx.Kernel{Name: c.Entry.Name, Params: c.Entry.Params, Launch: c.Launch}
	return stepPlan{node: n, kernel: k, ptrs: ptrs, custom: &customStep{module: c.Module, scalars: c.Scalars}}, nil
}

// scalars are the step's arguments after its pointers (none for kiln's
// own kernels).
func (sp *stepPlan) scalars() []any {
	if sp.custom == nil {
		return nil
	}
	return sp.custom.scalars
}

// moduleFor is the loaded module holding a step's kernel: the program's
// own, or the step's custom module, loaded on first use and shared by
// every step with the same source.
func (s *shared) moduleFor(sp *stepPlan) (*Module, error) {
	if sp.custom == nil {
		return s.mod, nil
	}
	if m, ok := s.custom[sp.custom.module]; ok {
		return m, nil
	}
	m, err := s.d.LoadPTX(sp.custom.module)
	if err != nil {
		return nil, fmt.Errorf("cuda: loading custom op %s's module: %w", sp.node.Attrs.Custom, err)
	}
	if s.custom == nil {
		s.custom = map[string]*Module{}
	}
	s.custom[sp.custom.module] = m
	return m, nil
}

// unloadCustom releases the custom modules; release calls it once.
func (s *shared) unloadCustom() {
	for _, m := range s.custom {
		_ = m.Unload()
	}
}
