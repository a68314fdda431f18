package asm

// The direct path of Conv2D for one input channel per group (depthwise
// convolutions): each output row is the sum of the kernel taps' shifted
// input rows.

// depthwiseRows computes output rows [lo, hi), numbered over (n, m, oy).
func (c *Conv2D) depthwiseRows(_, lo, hi int) {
	g := &c.g
	for it := lo; it < hi; it++ {
		c.depthwiseRow(c.run.y[it*g.OW:][:g.OW], it/g.OH, it%g.OH)
		c.epilogue(it*g.OW, g.OW)
	}
}

// depthwiseRow computes row oy of output plane (n, m) into yrow, before
// the epilogue. The packed weights are w then b.
func (c *Conv2D) depthwiseRow(yrow []float32, plane, oy int) {
	g := &c.g
	taps := g.KH * g.KW
	x := c.run.x
	m := plane % g.M
	var b float32
	if c.bias {
		b = c.run.a[g.M*taps+m]
	}
	fill(yrow, b)
	xp := x[(plane/g.M*g.C+m/c.mpg)*c.hw:][:c.hw]
	wk := c.run.a[m*taps : (m+1)*taps]
	for ky := range g.KH {
		if oy < c.oyLo[ky] || oy >= c.oyHi[ky] {
			continue
		}
		xr := xp[(oy*g.SH-g.PT+ky*g.DH)*g.W:][:g.W]
		for kx := range g.KW {
			lo, hi := c.oxLo[kx], c.oxHi[kx]
			if lo >= hi {
				continue
			}
			a, base := wk[ky*g.KW+kx], kx*g.DW-g.PL
			if g.SW == 1 {
				c.k.Axpy(yrow[lo:hi], xr[lo+base:hi+base], a)
				continue
			}
			for ox := lo; ox < hi; ox++ {
				yrow[ox] += a * xr[ox*g.SW+base]
			}
		}
	}
}
