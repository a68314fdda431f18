package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// FusedConv2D is the Conv2D kernel followed, on its own output while the
// step runs, by the epilogue's activation, residual add and
// post-residual activation (each rounded as the unfused kernels round),
// or its activation and 2×2 max pooling. The fast F32
// variant is the asm conv, which applies the epilogue (and the pooling)
// to each output tile while it is in cache; other dtypes compose the best
// conv kernel kiln has (PrepareFast on the plain conv) with a parallel
// epilogue and the reference MaxPool2D.

func init() {
	Register(Entry{Op: graph.OpFusedConv2D, DTypes: nativeFloats, Reference: prepareFusedConv, Tol: 1e-5})
	RegisterFast(graph.OpFusedConv2D, prepareFusedConvFast)
}

// convShadow is the plain Conv2D node the fused one starts with (of the
// conv's shape when the epilogue pools), and the index of the residual
// input (-1 for none).
func convShadow(nd *graph.Node) (*graph.Node, int, error) {
	e := nd.Attrs.Epilogue
	conv := 2 + btoi(e.Bias)
	if len(nd.Inputs) != conv+btoi(e.Residual) {
		return nil, 0, fmt.Errorf("%d inputs for epilogue %+v", len(nd.Inputs), e)
	}
	if e.Act != graph.OpInvalid && !graph.IsConvEpilogueAct(e.Act) {
		return nil, 0, fmt.Errorf("activation %v", e.Act)
	}
	if e.PostAct != graph.OpInvalid && (!graph.IsEpilogueAct(e.PostAct) || !e.Residual) {
		return nil, 0, fmt.Errorf("post-residual activation %v (residual %v)", e.PostAct, e.Residual)
	}
	at := nd.Attrs
	at.Epilogue = graph.Epilogue{}
	res := -1
	if e.Residual {
		res = conv
		if !nd.Inputs[res].Shape.Equal(nd.Shape) {
			return nil, 0, fmt.Errorf("residual %v, want %v", nd.Inputs[res].Shape, nd.Shape)
		}
	}
	shape, err := graph.ConvShape(nd)
	if err != nil {
		return nil, 0, err
	}
	return &graph.Node{Op: graph.OpConv2D, Inputs: nd.Inputs[:conv], Attrs: at, DType: nd.DType, Shape: shape}, res, nil
}

// poolShadow is the MaxPool2D node a pooled epilogue (Epilogue.Pool2x2)
// applies to the conv's output, the shadow conv's, or nil for none.
func poolShadow(nd, conv *graph.Node) *graph.Node {
	if !nd.Attrs.Epilogue.Pool2x2 {
		return nil
	}
	at := graph.Attrs{Kernel: []int{2, 2}, Strides: []int{2, 2}, Pads: []int{0, 0, 0, 0}, Dilations: []int{1, 1}}
	return &graph.Node{Op: graph.OpMaxPool2D, Inputs: []*graph.Node{conv}, Attrs: at, DType: nd.DType, Shape: nd.Shape}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func prepareFusedConv(nd *graph.Node) (Kernel, error) {
	shadow, res, err := convShadow(nd)
	if err != nil {
		return nil, err
	}
	conv, err := PrepareReference(shadow)
	if err != nil {
		return nil, err
	}
	return fusedConvKernel(nd, shadow, conv, res, Serial)
}

func prepareFusedConvFast(nd *graph.Node, env Env) (Kernel, string, error) {
	shadow, res, err := convShadow(nd)
	if err != nil {
		return nil, "", nil
	}
	if nd.DType == tensor.F32 {
		k, gv := asm.BestRows(), asm.BestGemm()
		kern, path, err := prepareConvAsm(nd, shadow, env, k, gv, nd.Attrs.Epilogue.Act, res)
		if err != nil {
			return nil, "", nil // the reference kernel reports it
		}
		if kern != nil {
			return kern, "conv-" + convVariant(k, gv) + path + "+epilogue", nil
		}
	}
	conv, variant, err := PrepareFast(shadow, env)
	if err != nil {
		return nil, "", nil
	}
	k, err := fusedConvKernel(nd, shadow, conv, res, env)
	if err != nil {
		return nil, "", nil
	}
	return k, "conv-" + variant + "+epilogue", nil
}

// fusedConvKernel runs conv (the kernel of the shadow node), then the
// epilogue over its output in chunks. A pooled epilogue has conv write a
// buffer of the shadow's shape, which the reference MaxPool2D reads.
func fusedConvKernel(nd, shadow *graph.Node, conv Kernel, res int, env Env) (Kernel, error) {
	dt := nd.DType
	if dt != tensor.F32 && dt != tensor.F64 {
		return nil, fmt.Errorf("dtype %v has no fused conv kernel", dt)
	}
	var act, post func(float64) float64
	for i, a := range []graph.Op{nd.Attrs.Epilogue.Act, nd.Attrs.Epilogue.PostAct} {
		if a == graph.OpInvalid {
			continue
		}
		var at graph.Attrs
		if i == 0 {
			at = nd.Attrs.Epilogue.ActAttrs()
		}
		f, err := floatUnaryFunc(&graph.Node{Op: a, Attrs: at})
		if err != nil {
			return nil, err
		}
		if i == 0 {
			act = f
		} else {
			post = f
		}
	}
	var pool Kernel
	var full tensor.Tensor // the conv's output when pooled
	if ps := poolShadow(nd, shadow); ps != nil {
		var err error
		if pool, err = PrepareReference(ps); err != nil {
			return nil, err
		}
		if full, err = tensor.Make(dt, shadow.Shape); err != nil {
			return nil, err
		}
	}
	nconv := len(nd.Inputs) - btoi(res >= 0)
	total := shadow.Shape.NumElements()
	var out tensor.Tensor
	var resid tensor.Tensor
	body := func(lo, hi int) {
		if dt == tensor.F32 {
			epilogueRange(tensor.Elems[float32](out.Data)[lo:hi], elemsOrNil[float32](resid, lo, hi), act, post)
		} else {
			epilogueRange(tensor.Elems[float64](out.Data)[lo:hi], elemsOrNil[float64](resid, lo, hi), act, post)
		}
	}
	return sizeChecked(nd, func(ins []tensor.Tensor, o tensor.Tensor) error {
		y := o
		if pool != nil {
			y = full
		}
		if err := conv(ins[:nconv], y); err != nil {
			return err
		}
		if act != nil || res >= 0 || post != nil {
			out = y
			if res >= 0 {
				resid = ins[res]
			}
			env.For(total, 1<<14, body)
			out, resid = tensor.Tensor{}, tensor.Tensor{}
		}
		if pool != nil {
			return pool([]tensor.Tensor{full}, o)
		}
		return nil
	}), nil
}

func elemsOrNil[T float32 | float64](t tensor.Tensor, lo, hi int) []T {
	if t.Data == nil {
		return nil
	}
	return tensor.Elems[T](t.Data)[lo:hi]
}

// epilogueRange applies act, then adds res, then applies post, rounding
// after each as the separate kernels would.
func epilogueRange[T float32 | float64](y, res []T, act, post func(float64) float64) {
	for i, v := range y {
		if act != nil {
			v = T(act(float64(v)))
		}
		if res != nil {
			v = T(float64(v) + float64(res[i]))
		}
		if post != nil {
			v = T(post(float64(v)))
		}
		y[i] = v
	}
}
