package msl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// hostBuilder collects cases: nodes built on one graph with given
// inputs, and each node's kernel emitted through the lowering's
// describe-and-emit pair.
type hostBuilder struct {
	t     *testing.T
	g     *graph.Graph
	rng   *rand.Rand
	cases []hostCase
}

// input adds a graph input holding data.
func (h *hostBuilder) input(data tensor.Tensor) *graph.Node {
	return h.g.Input(fmt.Sprintf("in%d", len(h.g.Inputs())), data.DType, data.Shape...)
}

// add emits n's kernel and records the case.
func (h *hostBuilder) add(n *graph.Node, ins []tensor.Tensor, tol float64, emit func(name string, n *graph.Node) (*Kernel, error)) {
	h.t.Helper()
	if err := h.g.Err(); err != nil {
		h.t.Fatal(err)
	}
	k, err := emit(fmt.Sprintf("k%d_%s", len(h.cases), n.Op), n)
	if err != nil {
		h.t.Fatalf("%s: %v", n, err)
	}
	h.cases = append(h.cases, hostCase{node: n, ins: ins, k: k, tol: tol})
}

// emitNode is the emitter compiling uses (kdesc.Describe, then Emit);
// the cases' nodes read distinct inputs, so the kernel's buffers follow
// the node's inputs.
func emitNode(name string, n *graph.Node) (*Kernel, error) {
	k, _, err := EmitNode(name, n)
	return k, err
}

// ints makes a tensor of dt from int64 values.
func ints(dt tensor.DType, s tensor.Shape, v func(i int) int64) tensor.Tensor {
	t := tensor.New(dt, s...)
	for i := range s.NumElements() {
		x := v(i)
		switch dt {
		case tensor.I32:
			t.I32()[i] = int32(x)
		case tensor.I64:
			t.I64()[i] = x
		case tensor.I8, tensor.U8:
			t.Data[i] = byte(x)
		}
	}
	return t
}

// TestHostKernels compiles the one-thread-per-element kernels of the
// newer ops as C++ and checks them against the CPU reference kernels:
// scan directions, wrapping integer sums, ArgMax ties and NaN, pool
// padding and divisors, NaN in max pools, batch norm, both RoPE forms,
// grouped/depthwise/dilated conv.
func TestHostKernels(t *testing.T) {
	h := &hostBuilder{t: t, g: graph.New(), rng: rand.New(rand.NewPCG(3, 4))}
	f32 := tensor.F32
	// CumSum: every direction on a middle axis; integers that wrap.
	x := hostData(h.rng, f32, tensor.Shape{3, 7, 4}, false, 0)
	xi := h.input(x)
	for _, ex := range []bool{false, true} {
		for _, rev := range []bool{false, true} {
			h.add(h.g.CumSum(xi, 1, ex, rev), []tensor.Tensor{x}, 1e-5, emitNode)
		}
	}
	big := ints(tensor.I32, tensor.Shape{5, 6}, func(i int) int64 { return int64(1<<30 + i*7919 - i%3*(1<<31)) })
	h.add(h.g.CumSum(h.input(big), 0, false, true), []tensor.Tensor{big}, 0, emitNode)
	u8 := ints(tensor.U8, tensor.Shape{2, 9}, func(i int) int64 { return int64(200 + i) })
	h.add(h.g.CumSum(h.input(u8), 1, true, false), []tensor.Tensor{u8}, 0, emitNode)
	// ArgMax/ArgMin: ties (small integers) with NaNs, integer dtypes, F16.
	tie := hostData(h.rng, f32, tensor.Shape{4, 6, 5}, true, 7)
	ti := h.input(tie)
	for _, ax := range []int{0, 1, 2} {
		h.add(h.g.ArgMax(ti, ax, false), []tensor.Tensor{tie}, 0, emitNode)
		h.add(h.g.ArgMin(ti, ax, true), []tensor.Tensor{tie}, 0, emitNode)
	}
	for _, dt := range []tensor.DType{tensor.I64, tensor.I8, tensor.F16} {
		v := hostData(h.rng, dt, tensor.Shape{6, 7}, true, 0)
		vi := h.input(v)
		h.add(h.g.ArgMax(vi, 1, false), []tensor.Tensor{v}, 0, emitNode)
		h.add(h.g.ArgMin(vi, 0, false), []tensor.Tensor{v}, 0, emitNode)
	}
	// Pools: padded, strided, asymmetric; NaN in the max pool's input.
	img := hostData(h.rng, f32, tensor.Shape{2, 3, 9, 8}, false, 0)
	nan := hostData(h.rng, f32, tensor.Shape{2, 3, 9, 8}, false, 23)
	ii, ni := h.input(img), h.input(nan)
	for _, o := range []graph.PoolOpts{
		{Kernel: []int{3, 3}, Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}},
		{Kernel: []int{2, 3}, Strides: []int{2, 1}, Pads: []int{1, 0, 0, 2}},
		{Kernel: []int{3, 2}, Strides: []int{3, 2}, Pads: []int{2, 1, 2, 1}, CountPad: true},
	} {
		h.add(h.g.MaxPool2D(ii, o), []tensor.Tensor{img}, 0, emitNode)
		h.add(h.g.MaxPool2D(ni, o), []tensor.Tensor{nan}, 0, emitNode)
		h.add(h.g.AvgPool2D(ii, o), []tensor.Tensor{img}, 1e-6, emitNode)
	}
	// BatchNorm (variance kept positive) and RoPE in F32 and BF16.
	bx := hostData(h.rng, f32, tensor.Shape{2, 3, 4, 5}, false, 0)
	prm := make([]tensor.Tensor, 4)
	for i := range prm {
		prm[i] = hostData(h.rng, f32, tensor.Shape{3}, false, 0)
	}
	for i, v := range prm[3].F32() {
		prm[3].F32()[i] = v*v + 0.1
	}
	h.add(h.g.BatchNorm(h.input(bx), h.input(prm[0]), h.input(prm[1]), h.input(prm[2]), h.input(prm[3]), 1e-3),
		append([]tensor.Tensor{bx}, prm...), 1e-5, emitNode)
	for _, dt := range []tensor.DType{f32, tensor.BF16} {
		rx, rc, rs := hostData(h.rng, dt, tensor.Shape{2, 3, 5, 8}, false, 0), hostData(h.rng, dt, tensor.Shape{5, 4}, false, 0), hostData(h.rng, dt, tensor.Shape{5, 4}, false, 0)
		rxi, rci, rsi := h.input(rx), h.input(rc), h.input(rs)
		tol := map[tensor.DType]float64{f32: 1e-6, tensor.BF16: 1e-2}[dt]
		for _, il := range []bool{false, true} {
			h.add(h.g.RoPE(rxi, rci, rsi, il), []tensor.Tensor{rx, rc, rs}, tol, emitNode)
		}
	}
	// Conv: grouped with bias, strides and padding; depthwise dilated.
	cx := hostData(h.rng, f32, tensor.Shape{2, 4, 9, 10}, false, 0)
	cw, cb := hostData(h.rng, f32, tensor.Shape{6, 2, 3, 3}, false, 0), hostData(h.rng, f32, tensor.Shape{6}, false, 0)
	dw := hostData(h.rng, f32, tensor.Shape{4, 1, 3, 2}, false, 0)
	cxi := h.input(cx)
	h.add(h.g.Conv2D(cxi, h.input(cw), h.input(cb), graph.ConvOpts{Strides: []int{2, 1}, Pads: []int{1, 2, 0, 1}, Groups: 2}),
		[]tensor.Tensor{cx, cw, cb}, 1e-5, emitNode)
	h.add(h.g.Conv2D(cxi, h.input(dw), nil, graph.ConvOpts{Pads: []int{2, 1, 2, 1}, Dilations: []int{2, 3}, Groups: 4}),
		[]tensor.Tensor{cx, dw}, 1e-5, emitNode)
	// The pooled epilogue: bias, Relu, 2×2 max pool of a 9×10 conv output.
	cwi, cbi := h.input(cw), h.input(cb)
	pa := h.g.Conv2D(cxi, cwi, cbi, graph.ConvOpts{Pads: []int{1, 1, 1, 1}, Groups: 2}).Attrs
	pa.Epilogue = graph.Epilogue{Bias: true, Act: graph.OpRelu, Pool2x2: true}
	h.add(h.g.Apply(graph.OpFusedConv2D, pa, cxi, cwi, cbi), []tensor.Tensor{cx, cw, cb}, 1e-5, emitNode)
	// A ResNet block's end: bias, Relu, + residual, then Sigmoid after it.
	cr := hostData(h.rng, f32, tensor.Shape{2, 6, 9, 10}, false, 0)
	ra := pa
	ra.Epilogue = graph.Epilogue{Bias: true, Act: graph.OpRelu, Residual: true, PostAct: graph.OpSigmoid}
	h.add(h.g.Apply(graph.OpFusedConv2D, ra, cxi, cwi, cbi, h.input(cr)), []tensor.Tensor{cx, cw, cb, cr}, 1e-5, emitNode)
	// Resize: an infinity read with weight 0 beside integral coordinates
	// (NaN, as the CPU), NaN samples, cubic taps clamped at the edges and
	// renormalised, crop coordinates outside the input.
	rz := hostData(h.rng, f32, tensor.Shape{1, 2, 5, 6}, false, 13)
	rz.F32()[8] = float32(math.Inf(1))
	rzi := h.input(rz)
	for _, s := range []graph.ResizeSpec{
		{Mode: graph.ResizeLinear, Coord: graph.CoordAsymmetric, Sizes: []int{1, 2, 10, 12}, Scales: []float64{1, 1, 2, 2}},
		{Mode: graph.ResizeCubic, CubicA: -0.5, ExcludeOutside: true, Sizes: []int{1, 2, 7, 4}, Scales: []float64{1, 1, 1.4, 4.0 / 6}},
		{Mode: graph.ResizeLinear, Coord: graph.CoordTFCropAndResize, Extrapolation: -2, Sizes: []int{1, 2, 4, 5}, Scales: []float64{1, 1, 0.8, 5.0 / 6},
			ROI: []float64{0, 0, -0.3, 0.1, 1, 1, 0.8, 1.2}},
	} {
		h.add(h.g.Resize(rzi, s), []tensor.Tensor{rz}, 1e-6, emitNode)
	}

	outs := runHost(t, h.cases)
	for i, c := range h.cases {
		compareHost(t, c, outs[i])
	}
}
