package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// AddLayerNorm and AddRMSNorm: the reference runs the Add kernel's
// formula into the output, then the norm's row formula over the output in
// place, which is the unfused pair without the intermediate buffer. The
// fast F32 kernel does both per row, rows split over the workers.

func init() {
	Register(Entry{Op: graph.OpAddLayerNorm, DTypes: nativeFloats, Reference: prepareAddNorm, InPlace: true, Tol: 1e-5})
	Register(Entry{Op: graph.OpAddRMSNorm, DTypes: nativeFloats, Reference: prepareAddNorm, InPlace: true, Tol: 1e-5})
	RegisterFast(graph.OpAddLayerNorm, prepareAddNormFast)
	RegisterFast(graph.OpAddRMSNorm, prepareAddNormFast)
}

type addNormPlan struct {
	add   *bcastPlan
	norm  *normPlan
	layer bool
	args  []tensor.Tensor // the norm's inputs: the sum, then scale and bias
}

// addNormShadow is the plain norm node the fused one ends with.
func addNormShadow(nd *graph.Node) (*graph.Node, int) {
	op, maxIn := graph.OpLayerNorm, 3
	if nd.Op == graph.OpAddRMSNorm {
		op, maxIn = graph.OpRMSNorm, 2
	}
	ins := append([]*graph.Node{nd.Inputs[0]}, nd.Inputs[2:]...)
	return &graph.Node{Op: op, Inputs: ins, Attrs: nd.Attrs, DType: nd.DType, Shape: nd.Shape}, maxIn
}

func prepareAddNorm(nd *graph.Node) (Kernel, error) {
	if len(nd.Inputs) < 2 {
		return nil, fmt.Errorf("%d inputs, want x and r at least", len(nd.Inputs))
	}
	dt, err := computeDType(nd, 2, len(nd.Inputs), len(nd.Inputs))
	if err != nil {
		return nil, err
	}
	shadow, maxIn := addNormShadow(nd)
	np, _, err := prepareRowNorm(shadow, maxIn)
	if err != nil {
		return nil, err
	}
	bp, err := newBcastPlan(nd.Shape, nd.Inputs[0].Shape, nd.Inputs[1].Shape)
	if err != nil {
		return nil, err
	}
	p := &addNormPlan{add: bp, norm: np, layer: nd.Op == graph.OpAddLayerNorm, args: make([]tensor.Tensor, len(shadow.Inputs))}
	return bindFloat(nd, dt, p, runAddNorm[float32], runAddNorm[float64]), nil
}

func runAddNorm[T float32 | float64](p *addNormPlan, ins []tensor.Tensor, out tensor.Tensor) {
	add := func(a, b T) T { return T(float64(a) + float64(b)) }
	bcastLoop2(p.add, tensor.Elems[T](out.Data), tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), add)
	p.args[0] = out
	copy(p.args[1:], ins[2:])
	if p.layer {
		runLayerNorm[T](p.norm, p.args, out)
	} else {
		runRMSNorm[T](p.norm, p.args, out)
	}
	clear(p.args)
}

// prepareAddNormFast takes F32 nodes whose residual is x-shaped or covers
// whole rows (its shape, bar leading 1s, a suffix of x's from the norm
// axis or before, as position embeddings [1, S, H] added to token
// embeddings [B, S, H]):
// per row, the sum goes into the output row (Axpy) and the vectorised row
// kernel normalises it in place; rows are split over the workers.
func prepareAddNormFast(nd *graph.Node, env Env) (Kernel, string, error) {
	if nd.DType != tensor.F32 || len(nd.Inputs) < 2 {
		return nil, "", nil
	}
	shadow, maxIn := addNormShadow(nd)
	np, _, err := prepareRowNorm(shadow, maxIn)
	if err != nil {
		return nil, "", nil
	}
	x, r := nd.Inputs[0].Shape, nd.Inputs[1].Shape.TrimLeadingOnes(0)
	k := x.Rank() - r.Rank()
	if k < 0 || k > nd.Attrs.Axis || !r.Equal(x[k:]) {
		return nil, "", nil
	}
	rk := asm.BestRows()
	rRows := max(1, r.NumElements()/max(np.inner, 1))
	layer, eps := nd.Op == graph.OpAddLayerNorm, nd.Attrs.Eps
	var xs, rs, ys, scale, bias []float32
	body := func(lo, hi int) {
		for o := lo; o < hi; o++ {
			row, xr := ys[o*np.inner:(o+1)*np.inner], xs[o*np.inner:(o+1)*np.inner]
			if &row[0] != &xr[0] {
				copy(row, xr)
			}
			rk.Axpy(row, rs[(o%rRows)*np.inner:][:np.inner], 1) // 1·r + x: one rounding, as Add
			if layer {
				rk.LayerNorm(row, row, scale, bias, eps)
			} else {
				rk.RMSNorm(row, row, scale, eps)
			}
		}
	}
	grain := max(1, (1<<14)/max(np.inner, 1))
	return sizeChecked(nd, func(ins []tensor.Tensor, out tensor.Tensor) error {
		if np.inner == 0 {
			return nil
		}
		xs, rs, ys = ins[0].F32(), ins[1].F32(), out.F32()
		if np.scale {
			scale = ins[2].F32()
		}
		if np.bias {
			bias = ins[3].F32()
		}
		env.For(np.outer, grain, body)
		xs, rs, ys, scale, bias = nil, nil, nil, nil, nil
		return nil
	}), "rows-" + rk.Name, nil
}
