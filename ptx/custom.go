package ptx

import (
	"fmt"
	"math"
	"slices"

	"github.com/kilnml/kiln/graph"
)

// MinCustomArch is the oldest .target a custom op's module may name:
// sm_50 is the oldest architecture current drivers JIT for, and PTX for
// an older target runs on every newer GPU.
const MinCustomArch = 50

// CustomCall is how a custom node (graph.Custom) is launched: its entry
// in the user's module, the geometry, and the scalar arguments that
// follow the output and input pointers.
type CustomCall struct {
	Module  string // the user's PTX source
	Info    *ModuleInfo
	Entry   *Entry
	Launch  Launch
	Scalars []any // Go values ready for Entry.Pack, CustomElems resolved
}

// CheckCustom parses spec's PTX and checks the module and its entry
// against what kiln passes for a node with the given number of inputs:
// a 64-bit module for sm_50 or newer whose entry takes a .u64 (or .b64)
// device pointer to the output, one to each input, then one parameter
// per spec.PTX.Scalars value of a matching type. The error names the
// entry, the parameter and the expected and actual types.
func CheckCustom(spec *graph.CustomSpec, inputs int) (*ModuleInfo, *Entry, error) {
	if spec == nil || spec.PTX == nil {
		return nil, nil, fmt.Errorf("ptx: custom op %v has no PTX implementation", spec)
	}
	fail := func(format string, args ...any) (*ModuleInfo, *Entry, error) {
		return nil, nil, fmt.Errorf("ptx: custom op %s: "+format, append([]any{spec.Name}, args...)...)
	}
	c := spec.PTX
	m, err := Parse(c.Module)
	if err != nil {
		return fail("%w", err)
	}
	if m.AddressSize != 64 { // PTX defaults to 32-bit addresses when the directive is missing
		return fail("module needs .address_size 64 (kiln passes 64-bit device pointers)")
	}
	if a := m.Arch(); a < MinCustomArch {
		return fail("module .target %s is not supported (want sm_%d or newer)", m.Targets[0], MinCustomArch)
	}
	e, err := m.Entry(c.Entry)
	if err != nil {
		return fail("%w", err)
	}
	ptrs := 1 + inputs
	if want := ptrs + len(c.Scalars); len(e.Params) != want {
		return fail("entry %s has %d parameters, kiln passes %d (output and %d input pointers, %d scalars)",
			e.Name, len(e.Params), want, inputs, len(c.Scalars))
	}
	for i, p := range e.Params {
		var want []Type
		what := "the output pointer"
		switch {
		case i < ptrs:
			want = []Type{U64, B64}
			if i > 0 {
				what = fmt.Sprintf("the pointer to input %d", i-1)
			}
		default:
			v := c.Scalars[i-ptrs]
			want, what = scalarTypes(v), fmt.Sprintf("scalar %d (%T)", i-ptrs, v)
		}
		if p.Count > 0 || !slices.Contains(want, p.Type) {
			have := string(p.Type)
			if p.Count > 0 {
				have = fmt.Sprintf("%s[%d]", p.Type, p.Count)
			}
			return fail("entry %s parameter %d (%s): want %s for %s, have %s", e.Name, i, p.Name, typeList(want), what, have)
		}
	}
	return m, e, nil
}

// CustomOf checks a custom node's PTX (CheckCustom) and works out its
// launch: the geometry for the node's element count and the scalar
// arguments, with CustomElems replaced by that count.
func CustomOf(n *graph.Node) (*CustomCall, error) {
	spec := n.Attrs.Custom
	if n.Op != graph.OpCustom || spec == nil {
		return nil, fmt.Errorf("ptx: %s is not a custom op", n)
	}
	m, e, err := CheckCustom(spec, len(n.Inputs))
	if err != nil {
		return nil, err
	}
	c := spec.PTX
	elems := n.Shape.NumElements()
	call := &CustomCall{Module: c.Module, Info: m, Entry: e, Launch: GridStride(elems, 256, MaxGridX)}
	if c.Block > 0 {
		call.Launch = GridStride(elems, c.Block, MaxGridX)
	}
	if c.Launch != nil {
		call.Launch.Grid, call.Launch.Block = c.Launch(elems)
	}
	if err := call.Launch.Validate(); err != nil {
		return nil, fmt.Errorf("ptx: custom op %s: %w", spec.Name, err)
	}
	ptrs := 1 + len(n.Inputs)
	for i, v := range c.Scalars {
		if _, ok := v.(graph.CustomElems); ok {
			p := e.Params[ptrs+i]
			if lim := maxOf(p.Type); uint64(elems) > lim {
				return nil, fmt.Errorf("ptx: custom op %s: entry %s parameter %d (%s): %d elements do not fit %s",
					spec.Name, e.Name, ptrs+i, p.Name, elems, p.Type)
			}
			v = uint64(elems) // Pack takes any integer that fits the parameter
		}
		call.Scalars = append(call.Scalars, v)
	}
	return call, nil
}

// scalarTypes are the parameter types a Go scalar of CustomPTX.Scalars
// may fill.
func scalarTypes(v any) []Type {
	switch v.(type) {
	case float32:
		return []Type{F32}
	case float64:
		return []Type{F64}
	case int32:
		return []Type{S32, B32}
	case uint32:
		return []Type{U32, B32}
	case int64:
		return []Type{S64, B64}
	case uint64:
		return []Type{U64, B64}
	case graph.CustomElems:
		return []Type{U32, S32, B32, U64, S64, B64}
	}
	return nil
}

// maxOf is the largest element count an integer parameter type holds.
func maxOf(t Type) uint64 {
	switch t {
	case S32:
		return math.MaxInt32
	case U32, B32:
		return math.MaxUint32
	}
	return math.MaxInt64
}

func typeList(ts []Type) string {
	if len(ts) == 0 {
		return "nothing (unsupported Go type)"
	}
	s := string(ts[0])
	for _, t := range ts[1:] {
		s += " or " + string(t)
	}
	return s
}
