package graph

// MatMul is numpy matmul: [..., M, K] · [..., K, N] with broadcast batch
// dims; a 1-D operand is promoted to a matrix and the added dim removed.
func (g *Graph) MatMul(a, b *Node) *Node { return g.add(OpMatMul, Attrs{}, a, b) }

// Gemm is alpha·op(A)·op(B) + beta·C with op a transpose when asked; A and
// B are 2-D and C (nil for none) broadcasts to the [M, N] result.
func (g *Graph) Gemm(a, b, c *Node, alpha, beta float32, transA, transB bool) *Node {
	at := Attrs{Alpha: alpha, Beta: beta, TransA: transA, TransB: transB}
	if c == nil {
		return g.add(OpGemm, at, a, b)
	}
	return g.add(OpGemm, at, a, b, c)
}

// Reductions over axes (all axes when none are given); keepDims keeps
// reduced dims as size 1.

func (g *Graph) ReduceSum(x *Node, keepDims bool, axes ...int) *Node {
	return g.add(OpReduceSum, Attrs{Axes: axes, KeepDims: keepDims}, x)
}
func (g *Graph) ReduceMean(x *Node, keepDims bool, axes ...int) *Node {
	return g.add(OpReduceMean, Attrs{Axes: axes, KeepDims: keepDims}, x)
}
func (g *Graph) ReduceMax(x *Node, keepDims bool, axes ...int) *Node {
	return g.add(OpReduceMax, Attrs{Axes: axes, KeepDims: keepDims}, x)
}
func (g *Graph) ReduceMin(x *Node, keepDims bool, axes ...int) *Node {
	return g.add(OpReduceMin, Attrs{Axes: axes, KeepDims: keepDims}, x)
}
func (g *Graph) ReduceProd(x *Node, keepDims bool, axes ...int) *Node {
	return g.add(OpReduceProd, Attrs{Axes: axes, KeepDims: keepDims}, x)
}

// ArgMax is the index (I64) of the largest element along axis, the first
// one on ties.
func (g *Graph) ArgMax(x *Node, axis int, keepDims bool) *Node {
	return g.add(OpArgMax, Attrs{Axis: axis, KeepDims: keepDims}, x)
}

// ArgMin is the index (I64) of the smallest element along axis.
func (g *Graph) ArgMin(x *Node, axis int, keepDims bool) *Node {
	return g.add(OpArgMin, Attrs{Axis: axis, KeepDims: keepDims}, x)
}

func (g *Graph) Softmax(x *Node, axis int) *Node    { return g.add(OpSoftmax, Attrs{Axis: axis}, x) }
func (g *Graph) LogSoftmax(x *Node, axis int) *Node { return g.add(OpLogSoftmax, Attrs{Axis: axis}, x) }

// CumSum is the running sum along axis; exclusive leaves out the current
// element, reverse runs from the end.
func (g *Graph) CumSum(x *Node, axis int, exclusive, reverse bool) *Node {
	return g.add(OpCumSum, Attrs{Axis: axis, Exclusive: exclusive, Reverse: reverse}, x)
}

// TopK returns the k largest elements along axis (the k smallest with
// smallest set) in order, largest (smallest) first, and their I64
// positions along the axis; equal elements keep their order (the lower
// index first, as ONNX specifies), and NaN ranks above every number. The
// two results are separate nodes sharing the attributes (Attrs.Index 0
// and 1); a graph that reads one only computes that one.
func (g *Graph) TopK(x *Node, k, axis int, smallest bool) (values, indices *Node) {
	a := Attrs{Axis: axis, K: k, Smallest: smallest}
	values = g.add(OpTopK, a, x)
	a.Index = 1
	return values, g.add(OpTopK, a, x)
}

// LayerNorm normalises over the dims from axis to the end, then applies
// scale and bias (each nil for none; shaped like those dims).
func (g *Graph) LayerNorm(x, scale, bias *Node, axis int, eps float32) *Node {
	if scale == nil && bias.Valid() {
		scale = g.ones(x, axis)
	}
	return g.add(OpLayerNorm, Attrs{Axis: axis, Eps: eps}, nonNil(x, scale, bias)...)
}

// RMSNorm divides by the root mean square over the dims from axis to the
// end, then applies scale (nil for none).
func (g *Graph) RMSNorm(x, scale *Node, axis int, eps float32) *Node {
	return g.add(OpRMSNorm, Attrs{Axis: axis, Eps: eps}, nonNil(x, scale)...)
}

// InstanceNorm normalises each [n, c] plane of x ([N, C, spatial...])
// over its spatial elements and applies the per-channel scale and bias
// ([C]): (x - mean)/sqrt(var + eps)·scale + bias, the variance biased
// (ONNX InstanceNormalization).
func (g *Graph) InstanceNorm(x, scale, bias *Node, eps float32) *Node {
	return g.add(OpInstanceNorm, Attrs{Eps: eps}, x, scale, bias)
}

// BatchNorm is inference batch normalisation over channel axis 1:
// (x - mean) / sqrt(var + eps) * scale + bias.
func (g *Graph) BatchNorm(x, scale, bias, mean, variance *Node, eps float32) *Node {
	return g.add(OpBatchNorm, Attrs{Eps: eps}, x, scale, bias, mean, variance)
}

// ConvOpts are the window attributes of Conv2D; zero values mean stride 1,
// no padding, dilation 1, one group.
type ConvOpts struct {
	Strides   []int // [sh, sw]
	Pads      []int // [top, left, bottom, right]
	Dilations []int // [dh, dw]
	Groups    int   // channels/groups per group; Groups == channels is depthwise
}

// Conv2D convolves x [N, C, H, W] with w [M, C/groups, kh, kw], adding
// bias [M] when it is not nil.
func (g *Graph) Conv2D(x, w, bias *Node, o ConvOpts) *Node {
	at := Attrs{Strides: o.Strides, Pads: o.Pads, Dilations: o.Dilations, Groups: o.Groups}
	return g.add(OpConv2D, at, nonNil(x, w, bias)...)
}

// PoolOpts are the window attributes of the 2-D pools.
type PoolOpts struct {
	Kernel   []int // [kh, kw], required
	Strides  []int // [sh, sw], default 1
	Pads     []int // [top, left, bottom, right]
	CountPad bool  // AvgPool: count padding in the divisor
}

// MaxPool2D takes the maximum of each window (padding never wins).
func (g *Graph) MaxPool2D(x *Node, o PoolOpts) *Node {
	return g.add(OpMaxPool2D, Attrs{Kernel: o.Kernel, Strides: o.Strides, Pads: o.Pads}, x)
}

// AvgPool2D averages each window.
func (g *Graph) AvgPool2D(x *Node, o PoolOpts) *Node {
	return g.add(OpAvgPool2D, Attrs{Kernel: o.Kernel, Strides: o.Strides, Pads: o.Pads, CountPad: o.CountPad}, x)
}

// GlobalAvgPool averages all spatial dims: [N, C, ...] → [N, C, 1, ...].
func (g *Graph) GlobalAvgPool(x *Node) *Node { return g.add(OpGlobalAvgPool, Attrs{}, x) }

// AttentionOpts are the attributes of Attention.
type AttentionOpts struct {
	Causal bool    // query i sees keys 0 .. i + (Sk - Sq) (bottom-right aligned)
	Scale  float32 // 0 means 1/sqrt(head dim)
	// KVLen, when not nil, is an I64 [B] input giving each batch's count
	// of keys in use, n (clamped to [0, Sk]): the keys from n on are not
	// there at all (as if k and v were sliced to n), and causality aligns to n
	// (query i sees keys up to i + n - Sq). It is how a KV cache allocated
	// at its longest is read only as far as it is filled, with the length
	// known at run time.
	KVLen *Node
}

// Attention is scaled dot-product attention softmax(Q·Kᵀ·scale + mask)·V
// on q [B, H, Sq, D], k [B, Hk, Sk, D], v [B, Hk, Sk, Dv] (H a multiple of
// Hk). mask (nil for none) broadcasts to [B, H, Sq, Sk]: a float mask is
// added to the scores, a Bool mask keeps the true positions. NaN and Inf
// behave as in the formula spelled out with Softmax and MatMul: a removed
// position (causal, or false in a Bool mask) scores -Inf; a query row
// with a NaN or +Inf score, or with every key removed, is NaN; a NaN or
// Inf in v meets even a removed key's weight 0 (0·Inf = NaN). With Sk = 0
// (or a KVLen of 0) the result is 0. The inputs are q, k, v, then the
// mask if any, then KVLen if any.
func (g *Graph) Attention(q, k, v, mask *Node, o AttentionOpts) *Node {
	at := Attrs{Causal: o.Causal, Scale: o.Scale, KVLen: o.KVLen != nil}
	ins := nonNil(q, k, v, mask)
	if o.KVLen != nil {
		ins = append(ins[:len(ins):len(ins)], o.KVLen)
	}
	return g.add(OpAttention, at, ins...)
}

// RoPE rotates x [..., S, D] by angles whose cos and sin are given as
// [S, D/2]: pairs are (i, i+D/2) (the half-split form), or (2i, 2i+1) when
// interleaved.
func (g *Graph) RoPE(x, cos, sin *Node, interleaved bool) *Node {
	return g.add(OpRoPE, Attrs{Interleaved: interleaved}, x, cos, sin)
}

// nonNil drops trailing optional inputs that were not given. A nil in a
// required position stays, so add reports it instead of the later inputs
// silently shifting into its place.
func nonNil(ns ...*Node) []*Node {
	end := len(ns)
	for end > 0 && ns[end-1] == nil {
		end--
	}
	return ns[:end]
}

// ones is a constant of ones shaped like x's dims from axis on.
func (g *Graph) ones(x *Node, axis int) *Node {
	if !x.Valid() {
		return x
	}
	ax := axis
	if ax < 0 {
		ax += x.Shape.Rank()
	}
	if ax < 0 || ax > x.Shape.Rank() {
		return g.fail("LayerNorm: axis %d out of range for rank %d", axis, x.Shape.Rank())
	}
	s := x.Shape[ax:].Clone()
	v := make([]float32, s.NumElements())
	for i := range v {
		v[i] = 1
	}
	return g.Cast(g.ConstF32(s, v), x.DType)
}
