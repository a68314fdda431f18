package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Operand is one input of a fused elementwise kernel (kdesc.Operand).
type Operand = kdesc.Operand

// Instr is one op of a fused chain (kdesc.Instr).
type Instr = kdesc.Instr

// Elementwise is a fused region: inputs loaded with broadcasting, the
// body evaluated per output element, the last result stored. Floats are
// computed in f32 throughout (F16/BF16 are widened on load and rounded on
// store, and at a Cast), so a fused chain rounds once.
type Elementwise struct {
	Name   string
	Shape  []int
	Inputs []Operand
	Body   []Instr
	Out    tensor.DType
	// Block is the threads per block (0: 256).
	Block int
}

// maxGridStrideBlocks caps grid-stride grids: enough blocks to fill any
// current GPU several times over.
const maxGridStrideBlocks = 65535

// EmitElementwise writes the kernel of a fused elementwise region. Its
// parameters are out, then in0, in1, ... (device pointers).
func EmitElementwise(e *Elementwise) (*Kernel, error) {
	if len(e.Body) == 0 {
		return nil, fmt.Errorf("ptx: %s: empty elementwise body", e.Name)
	}
	if _, err := kindOf(e.Out); err != nil {
		return nil, err
	}
	strides := make([][]int, len(e.Inputs))
	for i, in := range e.Inputs {
		if _, err := kindOf(in.DType); err != nil {
			return nil, err
		}
		if len(in.Strides) != len(e.Shape) {
			return nil, fmt.Errorf("ptx: %s: input %d has %d strides for rank %d", e.Name, i, len(in.Strides), len(e.Shape))
		}
		strides[i] = in.Strides
	}
	n := product(e.Shape)
	dims, st := collapse(e.Shape, strides)
	block := e.Block
	if block == 0 {
		block = 256
	}
	f := newFn(e.Name)
	out := f.ptrParam("out")
	ins := make([]string, len(e.Inputs))
	for i := range ins {
		ins[i] = f.ptrParam(fmt.Sprintf("in%d", i))
	}
	x := ix{f: f, wide: n > math.MaxInt32/2}
	i, stride := f.globalIndex(x.wide)
	loop, done := f.label("loop"), f.label("done")
	p := f.reg(cPred)
	f.place(loop)
	f.op("setp.ge.%s %s, %s, %d", x.t(), p, i, n)
	f.op("@%s bra %s", p, done)
	offs := x.offsets(i, dims, st, nil)
	vals := make([]val, 0, len(e.Inputs)+len(e.Body))
	for k, in := range e.Inputs {
		vals = append(vals, f.loadVal(in.DType, x.addr(ins[k], offs[k], in.DType.Size())))
	}
	for j, in := range e.Body {
		args := make([]val, len(in.Args))
		for a, v := range in.Args {
			if v < 0 || v >= len(vals) {
				return nil, fmt.Errorf("ptx: %s: op %d (%v) reads value %d, only %d defined", e.Name, j, in.Op, v, len(vals))
			}
			args[a] = vals[v]
		}
		r, err := f.apply(in, args)
		if err != nil {
			return nil, fmt.Errorf("ptx: %s: op %d: %w", e.Name, j, err)
		}
		vals = append(vals, r)
	}
	res := vals[len(vals)-1]
	ok, _ := kindOf(e.Out)
	if res.k != ok {
		return nil, fmt.Errorf("ptx: %s: result is %v-kind, output %v", e.Name, res.dt, e.Out)
	}
	f.store(e.Out, x.addr(out, i, e.Out.Size()), res.r)
	f.op("add.%s %s, %s, %s", x.t(), i, i, stride)
	f.op("bra.uni %s", loop)
	f.place(done)
	return f.kernel(GridStride(n, block, maxGridStrideBlocks)), nil
}

// val is a computed value: its register, kind and dtype.
type val struct {
	r  string
	k  kind
	dt tensor.DType
}

func (f *fn) loadVal(dt tensor.DType, addr string) val {
	k, _ := kindOf(dt)
	return val{r: f.load(dt, addr), k: k, dt: dt}
}

// FromNodes describes a chain of elementwise graph nodes (in topological
// order, the last producing the output) as one fused region. Inputs of
// the nodes that are not in the chain become kernel inputs, in the order
// ExternalInputs returns them; every node's shape must broadcast to the
// last node's.
func FromNodes(name string, nodes []*graph.Node) (*Elementwise, []*graph.Node, error) {
	if len(nodes) == 0 {
		return nil, nil, fmt.Errorf("ptx: %s: no nodes", name)
	}
	last := nodes[len(nodes)-1]
	e := &Elementwise{Name: name, Shape: last.Shape, Out: last.DType}
	num := map[*graph.Node]int{}
	var ext []*graph.Node
	inChain := map[*graph.Node]bool{}
	for _, n := range nodes {
		inChain[n] = true
	}
	for _, n := range nodes {
		if !n.Op.IsElementwise() {
			return nil, nil, fmt.Errorf("ptx: %s: %v is not elementwise", name, n.Op)
		}
		for _, in := range n.Inputs {
			if inChain[in] {
				continue
			}
			if _, seen := num[in]; !seen {
				if s, err := tensor.Broadcast(in.Shape, last.Shape); err != nil || !s.Equal(last.Shape) {
					return nil, nil, fmt.Errorf("ptx: %s: input %s does not broadcast to %v", name, in, last.Shape)
				}
				num[in] = len(ext)
				ext = append(ext, in)
				e.Inputs = append(e.Inputs, Operand{DType: in.DType, Strides: tensor.BroadcastStrides(in.Shape, last.Shape)})
			}
		}
	}
	for j, n := range nodes {
		if s, err := tensor.Broadcast(n.Shape, last.Shape); err != nil || !s.Equal(last.Shape) {
			return nil, nil, fmt.Errorf("ptx: %s: %s does not broadcast to %v", name, n, last.Shape)
		}
		args := make([]int, len(n.Inputs))
		for a, in := range n.Inputs {
			if inChain[in] {
				v, ok := num[in]
				if !ok {
					return nil, nil, fmt.Errorf("ptx: %s: %s used before it is computed", name, in)
				}
				args[a] = v
			} else {
				args[a] = num[in]
			}
		}
		e.Body = append(e.Body, Instr{Op: n.Op, Args: args, DType: n.DType, Attrs: n.Attrs})
		num[n] = len(ext) + j
	}
	return e, ext, nil
}

// FusedOf describes a FusedElementwise node (kdesc.FusedOf).
func FusedOf(name string, n *graph.Node) (*Elementwise, error) {
	d, err := kdesc.FusedOf(name, n)
	if err != nil {
		return nil, err
	}
	return &Elementwise{Name: d.Name, Shape: d.Shape, Inputs: d.Inputs, Body: d.Body, Out: d.Out}, nil
}
