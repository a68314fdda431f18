package ops

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// Fast F32 convolution and pooling on ops/asm: Conv2D through the GEMM
// (im2col tiles, grouped) or a direct depthwise kernel, MaxPool2D and
// AvgPool2D through row folds. Nodes the reference rejects fall back to
// it, and its error.

func init() {
	RegisterFast(graph.OpConv2D, func(n *graph.Node, env Env) (Kernel, string, error) {
		k, gv := asm.BestRows(), asm.BestGemm()
		kern, err := prepareConvFast(n, env, k, gv)
		if kern == nil || err != nil {
			return nil, "", err
		}
		name := k.Name
		if gv.Name != k.Name {
			name += "+" + gv.Name
		}
		return kern, name, nil
	})
	RegisterFast(graph.OpMaxPool2D, withRows(preparePoolFast))
	RegisterFast(graph.OpAvgPool2D, withRows(preparePoolFast))
}

// convGeom is the asm geometry of a window node whose reference prepare
// succeeded (so newWindow cannot fail).
func convGeom(n *graph.Node, kh, kw int) (asm.ConvGeom, error) {
	win, err := newWindow(n.Inputs[0].Shape, n.Shape, kh, kw, n.Attrs)
	if err != nil {
		return asm.ConvGeom{}, err
	}
	return asm.ConvGeom{N: win.n, C: win.c, H: win.h, W: win.w, M: n.Shape[1], OH: win.oh, OW: win.ow,
		KH: kh, KW: kw, SH: win.sh, SW: win.sw, DH: win.dh, DW: win.dw, PT: win.pt, PL: win.pl,
		Groups: max(n.Attrs.Groups, 1)}, nil
}

// prepareConvFast prepares Conv2D with row kernels k (depthwise) and GEMM
// variant gv.
func prepareConvFast(n *graph.Node, env Env, k *asm.RowKernels, gv *asm.GemmVariant) (Kernel, error) {
	if !takesF32(n) {
		return nil, nil
	}
	wt := n.Inputs[1].Shape
	g, err := convGeom(n, wt[2], wt[3])
	if err != nil {
		return nil, err
	}
	c, err := asm.NewConv2D(g, len(n.Inputs) == 3, k, gv, asmPar(env))
	if err != nil {
		return nil, err
	}
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		var b []float32
		if len(ins) == 3 {
			b = f32(ins[2])
		}
		return c.Run(f32(out), f32(ins[0]), f32(ins[1]), b)
	}), nil
}

func preparePoolFast(n *graph.Node, env Env, k *asm.RowKernels) (Kernel, error) {
	if !takesF32(n) {
		return nil, nil
	}
	g, err := convGeom(n, n.Attrs.Kernel[0], n.Attrs.Kernel[1])
	if err != nil {
		return nil, err
	}
	p, err := asm.NewPool2D(g, n.Op == graph.OpMaxPool2D, n.Attrs.CountPad, k, asmPar(env))
	if err != nil {
		return nil, err
	}
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		return p.Run(f32(out), f32(ins[0]))
	}), nil
}
