package ops

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// Fast F32 convolution and pooling on ops/asm: Conv2D (and FusedConv2D)
// through an implicit GEMM over pre-packed weights (grouped) or a direct
// depthwise kernel, with the fused activation and residual applied to
// each output tile while it is in cache (and a fused 2×2 max pool folding
// the tile there, so the conv's full output is never written); MaxPool2D
// and AvgPool2D through row folds (a vectorised pairwise fold for 2×2,
// stride-2 max pooling). Nodes the reference rejects fall back to it, and
// its error.

func init() {
	RegisterFast(graph.OpConv2D, func(n *graph.Node, env Env) (Kernel, string, error) {
		k, gv := asm.BestRows(), asm.BestGemm()
		kern, path, err := prepareConvFast(n, env, k, gv)
		if kern == nil || err != nil {
			return nil, "", err
		}
		return kern, convVariant(k, gv) + path, nil
	})
	RegisterFast(graph.OpMaxPool2D, withRows(preparePoolFast))
	RegisterFast(graph.OpAvgPool2D, withRows(preparePoolFast))
}

// convVariant names the row kernels and GEMM variant a conv runs on.
func convVariant(k *asm.RowKernels, gv *asm.GemmVariant) string {
	if gv.Name != k.Name {
		return k.Name + "+" + gv.Name
	}
	return k.Name
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
func prepareConvFast(n *graph.Node, env Env, k *asm.RowKernels, gv *asm.GemmVariant) (Kernel, string, error) {
	return prepareConvAsm(n, n, env, k, gv, graph.OpInvalid, -1)
}

// prepareConvAsm prepares node nd, whose convolution is the plain Conv2D
// node conv (nd itself, or a FusedConv2D's shadow), followed by activation
// act (OpInvalid: none), the residual input res (-1: none) and nd's
// post-residual activation, with row kernels k (depthwise) and GEMM
// variant gv, and by nd's 2×2 max pooling when its epilogue pools. Weights and bias computed from weights only
// are packed once per weights version. path names a path of the variant
// the conv takes ("+winograd"), or is empty.
func prepareConvAsm(nd, conv *graph.Node, env Env, k *asm.RowKernels, gv *asm.GemmVariant, act graph.Op, res int) (kern Kernel, path string, err error) {
	if !takesF32(nd) {
		return nil, "", nil
	}
	wt := conv.Inputs[1].Shape
	g, err := convGeom(conv, wt[2], wt[3])
	if err != nil {
		return nil, "", err
	}
	bias := len(conv.Inputs) == 3
	newConv := asm.NewConv2D
	if nd.Attrs.Epilogue.Pool2x2 {
		newConv = asm.NewConv2DPool2x2
	}
	c, err := newConv(g, bias, k, gv, asmPar(env))
	if err != nil {
		return nil, "", err
	}
	if coldWeights(env) {
		c.ColdWeights()
	}
	cached := FromWeights(conv.Inputs[1]) && (!bias || FromWeights(conv.Inputs[2]))
	shared := sharedConvWeights(env, conv, g, nd.Attrs.Epilogue.Pool2x2, k, gv, cached)
	args := asm.ConvArgs{Packed: &shared.packed}
	// The activations run the elementwise kernels the unfused ops run,
	// so both round alike.
	ew := asm.BestEw()
	for _, a := range []struct {
		op graph.Op
		f  *func([]float32)
	}{{act, &args.ActFunc}, {nd.Attrs.Epilogue.PostAct, &args.PostActFunc}} {
		if a.op == graph.OpInvalid {
			continue
		}
		if a.op == graph.OpClip && a.f == &args.ActFunc {
			lo, hi := nd.Attrs.Epilogue.Min, nd.Attrs.Epilogue.Max
			*a.f = func(seg []float32) { _ = clipF32(ew, seg, seg, lo, hi) } // lengths agree: no error
			if math.Float32bits(lo) == 0 && hi > 0 && !math.IsInf(float64(hi), 1) && ew.Name == gv.Name {
				args.ActClampHi = hi // ReLU6: the GEMM kernels may clamp in registers, alike
			}
			continue
		}
		op, ok := epilogueEw(a.op)
		if !ok {
			return nil, "", nil
		}
		*a.f = func(seg []float32) { _ = ew.Unary(op, seg, seg) } // lengths agree: no error
		if op == asm.EwRelu && a.f == &args.ActFunc && ew.Name == gv.Name {
			args.ActIsRelu = true // the GEMM kernels may apply it in registers, alike
		}
	}
	w := &shared.tracker
	var wb, bb []float32 // the run's weights and bias, for pack
	pack := func() error { return c.PackWeights(args.Packed, wb, bb) }
	switch {
	case c.Winograd():
		path = "+winograd"
	case c.Strided():
		path = "+strided"
	case c.Pointwise():
		path = "+pointwise"
	}
	return sizeChecked(nd, func(ins []tensor.Tensor, out tensor.Tensor) error {
		var b []float32
		if bias {
			b = f32(ins[2])
		}
		wb, bb = f32(ins[1]), b
		err := w.repack(wb, bb, pack)
		wb, bb = nil, nil
		if err != nil {
			return err
		}
		args.X, args.Y = f32(ins[0]), f32(out)
		if res >= 0 {
			args.Residual = f32(ins[res])
		}
		err = c.RunArgs(&args)
		args.X, args.Y, args.Residual = nil, nil, nil // keep no reference to the arena
		return err
	}), path, nil
}

// convPacked is a convolution's packed weights and what tells when they
// are stale, which the kernels of one program that run the same
// convolution on the same weights share (Env.Shared): a step's pool
// kernel and its serial twin, planned for other numbers of workers but
// packing alike (asm.Conv2D.SharesPacking), keep one copy (ResNet-18's
// convolutions would otherwise keep 119 MB more at two threads).
type convPacked struct {
	packed  asm.ConvWeights
	tracker convWeights
}

// convPackedKey identifies the packed weights of one convolution: its
// weight and bias nodes, geometry, pooling and kernel variants.
type convPackedKey struct {
	w, b   *graph.Node
	g      asm.ConvGeom
	pooled bool
	k      *asm.RowKernels
	gv     *asm.GemmVariant
}

// sharedConvWeights returns conv's packed weights for geometry g, the
// ones env's program already holds where it has them and they come from
// weights (cached: weights computed at run time are packed at every run,
// by each kernel into its own).
func sharedConvWeights(env Env, conv *graph.Node, g asm.ConvGeom, pooled bool, k *asm.RowKernels, gv *asm.GemmVariant, cached bool) *convPacked {
	fresh := &convPacked{tracker: convWeights{cached: cached, version: env.WeightsVersion}}
	if !cached || env.Shared == nil {
		return fresh
	}
	key := convPackedKey{w: conv.Inputs[1], g: g, pooled: pooled, k: k, gv: gv}
	if len(conv.Inputs) == 3 {
		key.b = conv.Inputs[2]
	}
	if p, ok := env.Shared[key].(*convPacked); ok {
		return p
	}
	env.Shared[key] = fresh
	return fresh
}

// coldWeightBytes is the size of a program's weights past which its
// kernels take their own weights to be out of the caches at each run:
// more than a core's L2 and the share of an L3 one core gets on a
// shared host. DenseNet-121 (31 MiB) at 64² ran 16-18% faster with its
// convs fetching their weights far ahead; models of a few MiB (SqueezeNet,
// ShuffleNetV2, the small U-Net) keep theirs in cache and do not.
const coldWeightBytes = 8 << 20

// coldWeights reports whether env's program has weights far past the
// caches (Env.WeightBytes).
func coldWeights(env Env) bool { return env.WeightBytes > coldWeightBytes }

// convWeights decides when a kernel's packed weights are stale: always
// when they are computed at run time, else when the weights version
// moved or they are other buffers than last time.
type convWeights struct {
	cached  bool
	version *atomic.Uint64 // nil: the weights never change
	have    bool
	at      uint64 // the version packed
	w, b    *float32
}

// repack runs pack (which packs w and b) where the packed copy is stale.
func (cw *convWeights) repack(w, b []float32, pack func() error) error {
	var v uint64
	if cw.version != nil {
		v = cw.version.Load() // read before packing: a write during it repacks next run
	}
	ws, bs := unsafe.SliceData(w), unsafe.SliceData(b)
	if cw.cached && cw.have && v == cw.at && ws == cw.w && bs == cw.b {
		return nil
	}
	if err := pack(); err != nil {
		return err
	}
	cw.have, cw.w, cw.b, cw.at = true, ws, bs, v
	return nil
}

func preparePoolFast(n *graph.Node, env Env, k *asm.RowKernels) (Kernel, error) {
	if !takesF32(n) {
		return nil, nil
	}
	g, err := convGeom(n, n.Attrs.Kernel[0], n.Attrs.Kernel[1])
	if err != nil {
		return nil, err
	}
	if n.Op == graph.OpMaxPool2D {
		p, err := asm.NewMaxPool2x2(g, k, asmPar(env))
		if err != nil {
			return nil, err
		}
		if p != nil {
			return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
				return p.Run(f32(out), f32(ins[0]))
			}), nil
		}
	}
	p, err := asm.NewPool2D(g, n.Op == graph.OpMaxPool2D, n.Attrs.CountPad, k, asmPar(env))
	if err != nil {
		return nil, err
	}
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		return p.Run(f32(out), f32(ins[0]))
	}), nil
}
