package asm

import "fmt"

// A pooled convolution (the ResNet stem's conv and 2×2 max pool as one
// step): each tile of whole output row pairs (GEMM path) or each output
// plane (depthwise) is computed, with its bias and activation, into the
// worker's scratch while it is in cache and folded from there by the
// 2×2 max-pool kernel, so only the pooled output, a quarter of the
// conv's, is written.

// pooled is a pooled convolution's plan.
type pooled struct {
	on     bool
	ph, pw int // pooled output dims: OH/2, OW/2
}

// NewConv2DPool2x2 prepares a convolution like NewConv2D whose output,
// after the activation (ConvArgs: no residual), is max pooled as
// MaxPool2x2 pools (2×2 window, stride 2, no padding, a last odd row or
// column dropped): y is [N, M, OH/2, OW/2]. OH and OW must be >= 2.
func NewConv2DPool2x2(g ConvGeom, bias bool, k *RowKernels, gv *GemmVariant, par Par) (*Conv2D, error) {
	if g.OH < 2 || g.OW < 2 {
		return nil, fmt.Errorf("asm: conv: a %d×%d output has no 2×2 pool", g.OH, g.OW)
	}
	return newConv2D(g, bias, true, k, gv, par)
}

// outPlane is the size of an output plane.
func (c *Conv2D) outPlane() int {
	if c.pooled.on {
		return c.pooled.ph * c.pooled.pw
	}
	return c.ohw
}

// poolTile folds the pooled GEMM tile t (M/G rows nb apart, of output
// columns [j0, j0+cols), whole row pairs) into the pooled planes of
// channels ch0 onwards.
func (c *Conv2D) poolTile(t []float32, ch0, j0, cols int) {
	ow, ph, pw := c.g.OW, c.pooled.ph, c.pooled.pw
	py0, pairs := j0/(2*ow), cols/(2*ow)
	for m := range c.mpg {
		row := t[m*c.nb:][:cols]
		y := c.run.y[((ch0+m)*ph+py0)*pw:][:pairs*pw]
		for p := range pairs {
			c.poolPair(y[p*pw:][:pw], row[2*p*ow:][:2*ow])
		}
	}
}

// poolPair folds the two conv rows of t (OW each, the second right after
// the first) into the pooled row y.
func (c *Conv2D) poolPair(y, t []float32) {
	ow, pw := c.g.OW, len(y)
	x0, x1 := t[:2*pw], t[ow:][:2*pw]
	c.taps.maxPairs(&y[0], &x0[0], &x1[0], pw)
}
