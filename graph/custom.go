package graph

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// CustomSpec is a user-defined op: its name, its result, and the kernels
// that compute it on each backend. Build nodes of it with Graph.Custom.
// A spec is shared by every node and graph copy made from it and must not
// change after its first use. The op must be pure (the same inputs give
// the same output): passes may merge two identical calls or, when every
// input is a constant, run the CPU function once at compile time.
//
// A scaled square y = s·x², with the PTX below as scaledSquarePTX:
//
//	spec := &graph.CustomSpec{
//		Name:  "ScaledSquare",
//		Infer: graph.SameAsInput(0),
//		CPU: func(out tensor.Tensor, ins ...tensor.Tensor) error {
//			x, y := tensor.Elems[float32](ins[0].Data), tensor.Elems[float32](out.Data)
//			for i := range y {
//				y[i] = 0.5 * x[i] * x[i]
//			}
//			return nil
//		},
//		PTX: &graph.CustomPTX{Module: scaledSquarePTX, Entry: "scaled_square",
//			Scalars: []any{float32(0.5), graph.CustomElems{}}},
//	}
//	y := g.Custom(spec, x)
//
// where the entry takes the output pointer, one pointer per input, then
// the scalars, with matching types:
//
//	.version 7.0
//	.target sm_50
//	.address_size 64
//	.visible .entry scaled_square(.param .u64 y, .param .u64 x,
//		.param .f32 s, .param .u32 n) { ... }
type CustomSpec struct {
	// Name identifies the op in dumps and errors, e.g. "ScaledSquare".
	Name string
	// DType and Shape are the result's when Infer is nil.
	DType tensor.DType
	Shape tensor.Shape
	// Infer, when set, checks the inputs and returns the result's dtype
	// and shape. Verify calls it again, so it must be deterministic.
	Infer func(ins []*Node) (tensor.DType, tensor.Shape, error)
	// CPU computes out (the node's dtype and shape, arena memory that may
	// hold stale data) from ins (the inputs' values, read-only) on the
	// CPU backend and in the reference interpreter. Clones of a compiled
	// graph may call it concurrently. Nil: the op runs only where another
	// implementation exists.
	CPU func(out tensor.Tensor, ins ...tensor.Tensor) error
	// PTX is the CUDA implementation; nil for none.
	PTX *CustomPTX
}

// CustomPTX is a custom op's kernel in the user's own PTX module. The
// CUDA backend checks the entry's signature when it compiles the graph
// (ptx.CheckCustom does the same check on demand): a .u64 (or .b64) pointer
// to the output, one to each input in order, then one parameter per
// Scalars value, with a matching type.
type CustomPTX struct {
	// Module is the PTX source text; it needs .version, a .target of
	// sm_50 or newer and .address_size 64. It is loaded as a module of
	// its own, so its names never clash with kiln's or another op's.
	Module string
	// Entry is the .entry to launch.
	Entry string
	// Scalars are the arguments after the pointers: float32 (.f32),
	// float64 (.f64), int32 (.s32, .b32), uint32 (.u32, .b32), int64
	// (.s64, .b64), uint64 (.u64, .b64), or CustomElems.
	Scalars []any
	// Block is the threads per block of the default geometry (256 if 0):
	// ⌈n/Block⌉ blocks for an output of n elements, one thread per
	// element, so the kernel must check its index against n.
	Block int
	// Launch, when set, replaces the default geometry: the grid and block
	// sizes for an output of n elements.
	Launch func(n int) (grid, block [3]int)
}

// CustomElems in CustomPTX.Scalars stands for the output's element count,
// passed as whichever integer type the entry declares.
type CustomElems struct{}

// String is the spec's name, so dumps show which custom op a node runs.
func (s *CustomSpec) String() string {
	if s == nil {
		return "<nil>"
	}
	return s.Name
}

// SameAsInput is a CustomSpec.Infer for ops whose result has input i's
// dtype and shape.
func SameAsInput(i int) func(ins []*Node) (tensor.DType, tensor.Shape, error) {
	return func(ins []*Node) (tensor.DType, tensor.Shape, error) {
		if i < 0 || i >= len(ins) {
			return 0, nil, fmt.Errorf("needs input %d, has %d inputs", i, len(ins))
		}
		return ins[i].DType, ins[i].Shape, nil
	}
}

// Custom adds a node running the user's op spec on ins. Problems with the
// spec or with what its Infer says of the inputs are recorded on the graph
// like any builder error.
func (g *Graph) Custom(spec *CustomSpec, ins ...*Node) *Node {
	return g.add(OpCustom, Attrs{Custom: spec}, ins...)
}

func inferCustom(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	s := a.Custom
	switch {
	case s == nil:
		return 0, nil, fmt.Errorf("no CustomSpec (build custom nodes with Graph.Custom)")
	case s.Name == "":
		return 0, nil, fmt.Errorf("CustomSpec has no name")
	case s.CPU == nil && s.PTX == nil:
		return 0, nil, fmt.Errorf("custom op %s has no implementation (CPU or PTX)", s.Name)
	}
	if err := checkCustomPTX(s.PTX); err != nil {
		return 0, nil, fmt.Errorf("custom op %s: %w", s.Name, err)
	}
	dt, shape := s.DType, s.Shape
	if s.Infer != nil {
		var err error
		if dt, shape, err = s.Infer(ins); err != nil {
			return 0, nil, fmt.Errorf("custom op %s: %w", s.Name, err)
		}
	}
	if !dt.Valid() {
		return 0, nil, fmt.Errorf("custom op %s: invalid result dtype %v", s.Name, dt)
	}
	if err := shape.Validate(); err != nil {
		return 0, nil, fmt.Errorf("custom op %s: %w", s.Name, err)
	}
	if shape == nil {
		shape = tensor.Shape{} // a scalar, kept comparable with Verify's re-inference
	}
	return dt, shape.Clone(), nil
}

// checkCustomPTX checks what does not need the PTX parser (which lives in
// package ptx, above graph): the signature is checked against the module
// by ptx.CheckCustom.
func checkCustomPTX(p *CustomPTX) error {
	if p == nil {
		return nil
	}
	if p.Module == "" || p.Entry == "" {
		return fmt.Errorf("PTX implementation needs a module and an entry name")
	}
	if p.Block < 0 {
		return fmt.Errorf("PTX block size %d is negative", p.Block)
	}
	for i, v := range p.Scalars {
		switch v.(type) {
		case float32, float64, int32, uint32, int64, uint64, CustomElems:
		default:
			return fmt.Errorf("PTX scalar %d has Go type %T (want float32, float64, int32, uint32, int64, uint64 or CustomElems)", i, v)
		}
	}
	return nil
}
