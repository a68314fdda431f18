package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Operand is one input of a fused elementwise kernel (kdesc.Operand).
type Operand = kdesc.Operand

// Instr is one op of a fused chain (kdesc.Instr).
type Instr = kdesc.Instr

// Elementwise is a kdesc.Elementwise with the kernel's block. Floats
// are computed in f32 throughout (F16/BF16 are widened on load and
// rounded on store, and at a Cast), so a fused chain rounds once.
type Elementwise struct {
	kdesc.Elementwise
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
