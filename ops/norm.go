package ops

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func init() {
	Register(Entry{Op: graph.OpLayerNorm, DTypes: nativeFloats, Reference: prepareLayerNorm, Tol: 1e-5})
	Register(Entry{Op: graph.OpRMSNorm, DTypes: nativeFloats, Reference: prepareRMSNorm, Tol: 1e-5})
	Register(Entry{Op: graph.OpBatchNorm, DTypes: nativeFloats, Reference: prepareBatchNorm, Tol: 1e-5})
	Register(Entry{Op: graph.OpInstanceNorm, DTypes: nativeFloats, Reference: prepareInstanceNorm, Tol: 1e-5})
}

// normPlan covers LayerNorm and RMSNorm: outer rows of inner elements,
// each normalised on its own.
type normPlan struct {
	outer, inner int
	eps          float64
	scale, bias  bool
}

func prepareRowNorm(nd *graph.Node, maxIn int) (*normPlan, tensor.DType, error) {
	dt, err := computeDType(nd, 1, maxIn, maxIn)
	if err != nil {
		return nil, 0, err
	}
	x, ax := nd.Inputs[0].Shape, nd.Attrs.Axis
	if ax < 0 || ax >= x.Rank() {
		return nil, 0, fmt.Errorf("axis %d out of range for %v", ax, x)
	}
	if !nd.Shape.Equal(x) {
		return nil, 0, fmt.Errorf("result shape %v, want %v", nd.Shape, x)
	}
	for i, in := range nd.Inputs[1:] {
		if !in.Shape.Equal(x[ax:]) {
			return nil, 0, fmt.Errorf("input %d has shape %v, want %v", i+1, in.Shape, x[ax:])
		}
	}
	p := &normPlan{
		outer: x[:ax].NumElements(), inner: x[ax:].NumElements(), eps: float64(nd.Attrs.Eps),
		scale: len(nd.Inputs) > 1, bias: len(nd.Inputs) > 2,
	}
	return p, dt, nil
}

func prepareLayerNorm(nd *graph.Node) (Kernel, error) {
	p, dt, err := prepareRowNorm(nd, 3)
	if err != nil {
		return nil, err
	}
	return bindFloat(nd, dt, p, runLayerNorm[float32], runLayerNorm[float64]), nil
}

func prepareRMSNorm(nd *graph.Node) (Kernel, error) {
	p, dt, err := prepareRowNorm(nd, 2)
	if err != nil {
		return nil, err
	}
	return bindFloat(nd, dt, p, runRMSNorm[float32], runRMSNorm[float64]), nil
}

// affine applies the optional scale and bias of element i.
func affine[T float32 | float64](p *normPlan, r float64, scale, bias []T, i int) T {
	if p.scale {
		r *= float64(scale[i])
	}
	if p.bias {
		r += float64(bias[i])
	}
	return T(r)
}

func normParams[T float32 | float64](p *normPlan, ins []tensor.Tensor) (scale, bias []T) {
	if p.scale {
		scale = tensor.Elems[T](ins[1].Data)
	}
	if p.bias {
		bias = tensor.Elems[T](ins[2].Data)
	}
	return scale, bias
}

// meanStd returns the mean of row and sqrt(biased variance + eps), in two
// float64 passes (mean, then the squared deviations) rather than
// E[x²]-E[x]², which cancels badly.
func meanStd[T float32 | float64](row []T, eps float64) (mean, std float64) {
	for _, v := range row {
		mean += float64(v)
	}
	mean /= float64(len(row))
	var variance float64
	for _, v := range row {
		d := float64(v) - mean
		variance += d * d
	}
	variance /= float64(len(row))
	return mean, math.Sqrt(variance + eps)
}

func runLayerNorm[T float32 | float64](p *normPlan, ins []tensor.Tensor, out tensor.Tensor) {
	x, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](out.Data)
	scale, bias := normParams[T](p, ins)
	for o := range p.outer {
		row, dst := x[o*p.inner:(o+1)*p.inner], y[o*p.inner:(o+1)*p.inner]
		mean, std := meanStd(row, p.eps)
		for i, v := range row {
			dst[i] = affine(p, (float64(v)-mean)/std, scale, bias, i)
		}
	}
}

func runRMSNorm[T float32 | float64](p *normPlan, ins []tensor.Tensor, out tensor.Tensor) {
	x, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](out.Data)
	scale, _ := normParams[T](p, ins)
	for o := range p.outer {
		row, dst := x[o*p.inner:(o+1)*p.inner], y[o*p.inner:(o+1)*p.inner]
		var ms float64
		for _, v := range row {
			ms += float64(v) * float64(v)
		}
		rms := math.Sqrt(ms/float64(p.inner) + p.eps)
		for i, v := range row {
			dst[i] = affine(p, float64(v)/rms, scale, nil, i)
		}
	}
}

// batchNormPlan views x as [N, C, spatial] with per-channel parameters.
type batchNormPlan struct {
	n, c, spatial int
	eps           float64
}

func prepareBatchNorm(nd *graph.Node) (Kernel, error) {
	dt, err := computeDType(nd, 5, 5, 5)
	if err != nil {
		return nil, err
	}
	x := nd.Inputs[0].Shape
	if x.Rank() < 2 || !nd.Shape.Equal(x) {
		return nil, fmt.Errorf("input %v must have rank >= 2 and match the result %v", x, nd.Shape)
	}
	for i, in := range nd.Inputs[1:] {
		if !in.Shape.Equal(tensor.Shape{x[1]}) {
			return nil, fmt.Errorf("input %d has shape %v, want [%d]", i+1, in.Shape, x[1])
		}
	}
	p := &batchNormPlan{n: x[0], c: x[1], spatial: x[2:].NumElements(), eps: float64(nd.Attrs.Eps)}
	return bindFloat(nd, dt, p, runBatchNorm[float32], runBatchNorm[float64]), nil
}

func runBatchNorm[T float32 | float64](p *batchNormPlan, ins []tensor.Tensor, out tensor.Tensor) {
	x, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](out.Data)
	scale, bias := tensor.Elems[T](ins[1].Data), tensor.Elems[T](ins[2].Data)
	mean, variance := tensor.Elems[T](ins[3].Data), tensor.Elems[T](ins[4].Data)
	for b := range p.n {
		for c := range p.c {
			m, s := float64(mean[c]), math.Sqrt(float64(variance[c])+p.eps)
			g, o := float64(scale[c]), float64(bias[c])
			base := (b*p.c + c) * p.spatial
			for i := base; i < base+p.spatial; i++ {
				y[i] = T((float64(x[i])-m)/s*g + o)
			}
		}
	}
}

// prepareInstanceNorm: x [N, C, spatial...], scale and bias [C]; each
// [n, c] plane is normalised on its own (batchNormPlan's geometry).
func prepareInstanceNorm(nd *graph.Node) (Kernel, error) {
	dt, err := computeDType(nd, 3, 3, 3)
	if err != nil {
		return nil, err
	}
	x := nd.Inputs[0].Shape
	if x.Rank() < 3 || !nd.Shape.Equal(x) {
		return nil, fmt.Errorf("input %v must have rank >= 3 and match the result %v", x, nd.Shape)
	}
	for i, in := range nd.Inputs[1:] {
		if !in.Shape.Equal(tensor.Shape{x[1]}) {
			return nil, fmt.Errorf("input %d has shape %v, want [%d]", i+1, in.Shape, x[1])
		}
	}
	p := &batchNormPlan{n: x[0], c: x[1], spatial: x[2:].NumElements(), eps: float64(nd.Attrs.Eps)}
	return bindFloat(nd, dt, p, runInstanceNorm[float32], runInstanceNorm[float64]), nil
}

func runInstanceNorm[T float32 | float64](p *batchNormPlan, ins []tensor.Tensor, out tensor.Tensor) {
	x, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](out.Data)
	scale, bias := tensor.Elems[T](ins[1].Data), tensor.Elems[T](ins[2].Data)
	for b := range p.n {
		for c := range p.c {
			base := (b*p.c + c) * p.spatial
			plane := x[base : base+p.spatial]
			mean, std := meanStd(plane, p.eps)
			g, o := float64(scale[c]), float64(bias[c])
			for i, v := range plane {
				y[base+i] = T((float64(v)-mean)/std*g + o)
			}
		}
	}
}
