package main

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// cnn builds a convolution block on a fresh NCHW input (one draw in four a
// transposed convolution instead, convTranspose): a conv (1×1, 3×3
// or 5×5, now and then strided, dilated, grouped or depthwise), a bias or
// a BatchNorm (folded into the conv by the conv pass), an activation, a
// residual, and a pool: 2×2 max (fused into the conv), a 3×3 max or
// average window, or the global average. One draw in six has the shape
// of the Winograd path (3×3, stride 1, one group, 8 or 16 channels, an
// even height and a width of 16 or 32).
func (b *builder) cnn() {
	g, r := b.g, b.r
	if r.IntN(4) == 0 {
		b.convTranspose()
		return
	}
	n, c, m := b.dim(1+r.IntN(2)), b.dim([]int{1, 3, 4, 8}[r.IntN(4)]), b.dim([]int{1, 4, 8, 16}[r.IntN(4)])
	h, w, k := b.dim(1+r.IntN(20)), b.dim(1+r.IntN(20)), []int{1, 3, 3, 5}[r.IntN(4)]
	stride, dil, groups := 1, 1, 1
	switch r.IntN(6) {
	case 0:
		c, m, k = b.dim(8*(1+r.IntN(2))), b.dim(8*(1+r.IntN(2))), 3
		h, w = b.dim(2*(1+r.IntN(8))), b.dim(16*(1+r.IntN(2)))
	case 1:
		stride = 2
	case 2:
		dil = 2
	case 3: // depthwise
		m, groups = c, c
	case 4: // two groups
		c, m, groups = 2*c, 2*m, 2
	}
	pad := 0
	if r.IntN(3) > 0 {
		pad = dil * (k / 2)
	}
	oh := (h+2*pad-dil*(k-1)-1)/stride + 1
	ow := (w+2*pad-dil*(k-1)-1)/stride + 1
	if oh < 1 || ow < 1 || h+2*pad < dil*(k-1)+1 || w+2*pad < dil*(k-1)+1 {
		return
	}
	x, wt, bias := b.convInputs(tensor.Shape{n, c, h, w}, tensor.Shape{m, c / groups, k, k}, m)
	y := g.Conv2D(x, wt, bias, graph.ConvOpts{Strides: []int{stride, stride}, Pads: []int{pad, pad, pad, pad},
		Dilations: []int{dil, dil}, Groups: groups})
	if r.IntN(3) == 0 { // a positive variance keeps most channels finite
		ch := func() *graph.Node { return b.input(tensor.Shape{m}) }
		variance := g.Add(g.Abs(ch()), g.Scalar(0.5))
		y = g.BatchNorm(y, ch(), ch(), ch(), variance, 1e-5)
	}
	if r.IntN(3) > 0 {
		y = []func(*graph.Node) *graph.Node{g.Relu, g.Silu, g.Gelu}[r.IntN(3)](y)
	}
	if r.IntN(4) == 0 {
		y = g.Add(y, b.input(y.Shape))
	}
	switch r.IntN(5) {
	case 0, 1:
		if oh >= 2 && ow >= 2 {
			y = g.MaxPool2D(y, graph.PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 2}})
		}
	case 2:
		y = g.MaxPool2D(y, graph.PoolOpts{Kernel: []int{3, 3}, Pads: []int{1, 1, 1, 1}})
	case 3:
		y = g.AvgPool2D(y, graph.PoolOpts{Kernel: []int{3, 3}, Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}, CountPad: r.IntN(2) == 0})
	case 4:
		y = g.GlobalAvgPool(y)
	}
	b.push(y)
}

// convTranspose builds a transposed convolution on a fresh NCHW input,
// the decoders' upsampling step: kernel 1 to 4, stride 1 to 3 (mostly
// 2), dilation 1 or 2, pads that crop up to the kernel's reach at either
// end or append a cell (output padding), one or two groups, channel
// counts that split evenly over workers or not, a bias, an activation;
// one in three doubles its input at stride 2 (the phase path).
func (b *builder) convTranspose() {
	g, r := b.g, b.r
	n, c, m := b.dim(1+r.IntN(2)), b.dim(1+r.IntN(8)), b.dim(1+r.IntN(12))
	h, w, k := b.dim(1+r.IntN(12)), b.dim(1+r.IntN(40)), 1+r.IntN(4)
	stride, dil, groups := []int{1, 2, 2, 2, 3}[r.IntN(5)], 1, 1
	if r.IntN(4) == 0 {
		dil = 2
	}
	if r.IntN(4) == 0 {
		c, m, groups = 2*c, 2*m, 2
	}
	// One draw in three: the output twice the input at stride 2, rows of
	// 16 or 32 or any length up to 40 (the grid), over 1024 input
	// cells or more (the AVX-512 phase path, convtranspose_phase.go).
	phase := r.IntN(3) == 0
	if phase {
		stride, dil, groups, k, w = 2, 1, 1, 3+r.IntN(2), b.dim([]int{16, 32, 1 + r.IntN(40)}[r.IntN(3)])
		c, m = b.dim(1+r.IntN(8)), b.dim(1+r.IntN(16))
		h = b.dim((1023+w)/w + r.IntN(8)) // 1024 cells: weights that are inputs take the phases too
	}
	reach := dil * (k - 1)
	pads := []int{r.IntN(reach + 1), r.IntN(reach + 1), r.IntN(reach+2) - 1, r.IntN(reach+2) - 1}
	if phase {
		t, l := r.IntN(k-1), r.IntN(k-1)
		pads = []int{t, l, k - 2 - t, k - 2 - l}
	}
	oh := (h-1)*stride + reach + 1 - pads[0] - pads[2]
	ow := (w-1)*stride + reach + 1 - pads[1] - pads[3]
	if oh < 1 || ow < 1 {
		return
	}
	x, wt, bias := b.convInputs(tensor.Shape{n, c, h, w}, tensor.Shape{c, m / groups, k, k}, m)
	y := g.ConvTranspose(x, wt, bias, graph.ConvTransposeOpts{Strides: []int{stride, stride},
		Dilations: []int{dil, dil}, Pads: pads, Groups: groups})
	if r.IntN(2) == 0 {
		y = g.Relu(y)
	}
	b.push(y)
}

// convInputs makes a convolution's input x, weight w and, one draw in
// two, a bias of m values (else nil).
func (b *builder) convInputs(x, w tensor.Shape, m int) (xn, wn, bias *graph.Node) {
	xn, wn = b.input(x), b.input(w)
	if b.r.IntN(2) == 0 {
		bias = b.input(tensor.Shape{m})
	}
	return xn, wn, bias
}
