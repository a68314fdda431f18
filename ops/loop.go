package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Loop and LoopOutput (graph.LoopSpec). The iteration logic is LoopDriver,
// shared by the reference kernel (which evaluates the body with the
// reference interpreter) and the CPU executor (which runs the body as a
// sub-program planned into the parent's arena).

func init() {
	// Every dtype: the key dtype is the first input's, which is the trip
	// count, the condition or a carried value of any dtype. The result is
	// bytes copied, so no dtype is widened.
	Register(Entry{Op: graph.OpLoop, DTypes: tensor.DTypes(), Reference: prepareLoop})
	Register(Entry{Op: graph.OpLoopOutput, DTypes: []tensor.DType{tensor.U8}, Reference: prepareLoopOutput})
}

// LoopBody runs one iteration of a loop's body: ins are the body's inputs
// in order, and it returns the body's outputs, valid until its next call.
// The outputs must not share memory with ins (the driver copies outputs
// over the carried values it passed in).
type LoopBody func(ins []tensor.Tensor) ([]tensor.Tensor, error)

// LoopDriver runs the iterations of one Loop node. It owns the iteration
// number and condition it passes to the body, so a driver serves one
// kernel at a time.
type LoopDriver struct {
	spec    *graph.LoopSpec
	name    string
	results []graph.LoopResult
	offsets []int
	iter    tensor.Tensor // I64 scalar
	cond    tensor.Tensor // Bool scalar
	bodyIns []tensor.Tensor
}

// NewLoopDriver prepares the driver of a Loop node.
func NewLoopDriver(n *graph.Node) (*LoopDriver, error) {
	s := n.Attrs.Loop
	if n.Op != graph.OpLoop || s == nil || s.Body == nil {
		return nil, fmt.Errorf("ops: %s is not a Loop with a body", n)
	}
	d := &LoopDriver{spec: s, name: n.Name, results: s.Results()}
	d.offsets, _ = s.Layout()
	d.iter, _ = tensor.Make(tensor.I64, tensor.Shape{})
	d.cond, _ = tensor.Make(tensor.Bool, tensor.Shape{})
	d.bodyIns = make([]tensor.Tensor, len(s.Body.Inputs()))
	return d, nil
}

// Result is the view of result i in a Loop node's packed value.
func (d *LoopDriver) Result(packed tensor.Tensor, i int) tensor.Tensor {
	r := d.results[i]
	off := d.offsets[i]
	nb := r.Shape.NumElements() * r.DType.Size()
	return tensor.Tensor{DType: r.DType, Shape: r.Shape, Data: packed.Data[off : off+nb : off+nb]}
}

// Run runs the loop over the node's inputs ins into its packed value out:
// iterations while the iteration number is below the trip count and the
// condition holds, each calling body. A negative trip count, or more
// iterations than the spec's bound, is an error.
func (d *LoopDriver) Run(ins []tensor.Tensor, out tensor.Tensor, body LoopBody) error {
	s := d.spec
	clear(out.Data) // scan rows past the last iteration read as zero
	trip, k := int64(-1), 0
	if s.HasTrip {
		trip = tensor.Elems[int64](ins[0].Data)[0]
		if trip < 0 {
			return fmt.Errorf("loop %s: trip count %d is negative", d.name, trip)
		}
		k++
	}
	cond := true
	if s.HasCond {
		cond = ins[k].Data[0] != 0
	}
	lead := s.Lead()
	d.bodyIns[0], d.bodyIns[1] = d.iter, d.cond
	for j := range s.Carried {
		r := d.Result(out, j)
		copy(r.Data, ins[lead+j].Data)
		d.bodyIns[2+j] = r
	}
	copy(d.bodyIns[2+s.Carried:], ins[lead+s.Carried:])
	nScan := s.Scans()
	it := int64(0)
	for ; cond && (trip < 0 || it < trip); it++ {
		if s.Bound > 0 && it >= int64(s.Bound) {
			return fmt.Errorf("loop %s: iteration %d exceeds the loop's bound of %d iterations (raise the bound the loop was built or imported with)", d.name, it+1, s.Bound)
		}
		tensor.Elems[int64](d.iter.Data)[0] = it
		d.cond.Data[0] = 1
		outs, err := body(d.bodyIns)
		if err != nil {
			return fmt.Errorf("loop %s: iteration %d: %w", d.name, it, err)
		}
		cond = outs[0].Data[0] != 0
		for j := range s.Carried {
			copy(d.bodyIns[2+j].Data, outs[1+j].Data)
		}
		for j := range nScan {
			row := outs[1+s.Carried+j].Data
			dst := d.Result(out, s.Carried+j).Data
			copy(dst[int(it)*len(row):], row)
		}
	}
	tensor.Elems[int64](d.Result(out, len(d.results)-1).Data)[0] = it
	return nil
}

// prepareLoop is the reference kernel: the driver with the body evaluated
// by the reference interpreter.
func prepareLoop(n *graph.Node) (Kernel, error) {
	d, err := NewLoopDriver(n)
	if err != nil {
		return nil, err
	}
	body := n.Attrs.Loop.Body
	order, err := body.TopoOrder()
	if err != nil {
		return nil, err
	}
	pos := map[*graph.Node]int{}
	for i, in := range body.Inputs() {
		pos[in] = i
	}
	run := func(ins []tensor.Tensor) ([]tensor.Tensor, error) {
		outs, err := evalGraph(body, order, func(in *graph.Node) (tensor.Tensor, bool) {
			i, ok := pos[in]
			if !ok {
				return tensor.Tensor{}, false
			}
			return ins[i], true
		})
		if err != nil {
			return nil, err
		}
		for i, o := range outs { // an output may be an input's own tensor: detach it
			outs[i] = o.Clone()
		}
		return outs, nil
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error { return d.Run(ins, out, run) }, nil
}

// prepareLoopOutput copies one result out of the packed value.
func prepareLoopOutput(n *graph.Node) (Kernel, error) {
	d, err := NewLoopDriver(n.Inputs[0])
	if err != nil {
		return nil, err
	}
	i := n.Attrs.Index
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		copy(out.Data, d.Result(ins[0], i).Data)
		return nil
	}, nil
}
