package ops

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
)

// A ConvTranspose of 4×4 input planes with a 4×4 kernel at stride 2,
// pad 1 (a DCGAN generator's 4² → 8² step) runs on asm.ConvT4 where the
// convolution kernels have it (AVX-512): the sums of every tap of every
// input cell, three output channels' sixteen taps a vector (each
// broadcast input feeding three FMAs), folded into each channel's 8×8
// plane in registers. Its sixteen input cells are one segment of the
// phase product, which broadcasts a weight for every FMA: on Zen 5 that
// ran the 256 → 128 channel step at 0.82-0.88 of the GEMM of the same
// products, this at ~200 GFLOP/s. No product outside the output is ever
// added, so weights that are not finite need no fallback. Weights that
// are params are packed once, each tile's input channels' 48 weights
// contiguous; weights computed at run time are read as stored (a tile's
// 48 weights of an input channel are contiguous there too), only a last
// tile of fewer than three channels packed, with zeros.

// convTT4 is the ConvT4 plan of a convTFast (nil where it does not
// apply).
type convTT4 struct {
	f       *convTFast
	k       *asm.ConvT4
	tiles   int       // output channels in tiles of asm.ConvT4Cols
	packed  []float32 // params: each tile's [input channel][48]; run-time weights: the last tile's, where partial
	weights convWeights
	zeros   []float32  // the bias where there is none
	sums    []float32  // a tile's sums, at each chunk's first tile
	w, b    []float32  // the run's weights and bias
	x, y    []float32  // the current image
	errs    firstError // of a run's chunks (none is expected: the plan sizes every operand)
	body    func(lo, hi int)
	pack    func(lo, hi int)
}

// newConvTT4 returns the ConvT4 plan of f, or nil where it does not
// apply: not a 2-D 4×4 input with a 4×4 kernel at stride 2, pad 1 and
// dilation 1 into an 8×8 output, groups, or no vector ConvT4.
func newConvTT4(f *convTFast, n *graph.Node) *convTT4 {
	g := &f.convTGeom
	if g.groups != 1 || g.in != [3]int{1, 4, 4} || g.k != [3]int{1, 4, 4} || g.out != [3]int{1, 8, 8} ||
		g.s[1] != 2 || g.s[2] != 2 || g.d[1] != 1 || g.d[2] != 1 || g.pb[1] != 1 || g.pb[2] != 1 {
		return nil
	}
	k := asm.NewConvT4()
	if k == nil {
		return nil
	}
	const cols = asm.ConvT4Cols
	p := &convTT4{f: f, k: k, tiles: (g.m + cols - 1) / cols}
	p.weights = convWeights{cached: FromWeights(n.Inputs[1]), version: f.env.WeightsVersion}
	switch {
	case p.weights.cached:
		p.packed = make([]float32, p.tiles*g.c*16*cols)
	case g.m%cols != 0:
		p.packed = make([]float32, g.c*16*cols)
	}
	if !g.bias {
		p.zeros = make([]float32, g.m)
	}
	p.sums = make([]float32, p.tiles*256*cols)
	p.body, p.pack = p.runTiles, p.packTiles
	return p
}

// run computes every image of x through weights w (and bias) into y.
func (p *convTT4) run(x, w, bias, y []float32) error {
	g := &p.f.convTGeom
	p.w, p.b = w, bias
	if p.b == nil {
		p.b = p.zeros
	}
	defer func() { p.w, p.b, p.x, p.y = nil, nil, nil, nil }()
	switch {
	case p.weights.cached:
		if err := p.weights.repack(w, nil, func() error { p.f.env.For(p.tiles, 1, p.pack); return nil }); err != nil {
			return err
		}
	case p.packed != nil:
		p.packTiles(p.tiles-1, p.tiles)
	}
	p.errs.reset()
	for b := range g.n {
		p.x = x[b*g.c*g.inSz : (b+1)*g.c*g.inSz]
		p.y = y[b*g.m*g.outSz : (b+1)*g.m*g.outSz]
		p.f.env.For(p.tiles, 1, p.body)
	}
	return p.errs.reset()
}

// packTiles packs tiles [lo, hi)'s weights into packed: a tile of
// three output channels takes, per input channel, their sixteen taps
// each (48 floats, contiguous in the weights too), zeros past the last
// channel. Without params, only the partial last tile is packed, at 0.
func (p *convTT4) packTiles(lo, hi int) {
	g := &p.f.convTGeom
	const cols = 16 * asm.ConvT4Cols
	for tl := lo; tl < hi; tl++ {
		dst := p.packed
		if p.weights.cached {
			dst = p.packed[tl*g.c*cols:]
		}
		have := min(g.m*16-tl*cols, cols)
		for ci := range g.c {
			row := dst[ci*cols : (ci+1)*cols]
			copy(row, p.w[ci*g.m*16+tl*cols:][:have])
			clear(row[have:])
		}
	}
}

// runTiles computes the output channels of tiles [lo, hi) of the
// current image, through the chunk's sums.
func (p *convTT4) runTiles(lo, hi int) {
	g := &p.f.convTGeom
	const cols = asm.ConvT4Cols
	sums := p.sums[lo*256*cols:][:256*cols]
	for tl := lo; tl < hi; tl++ {
		w, ldw := p.w[tl*16*cols:], g.m*16
		switch {
		case p.weights.cached:
			w, ldw = p.packed[tl*g.c*16*cols:], 16*cols
		case p.packed != nil && tl == p.tiles-1:
			w, ldw = p.packed, 16*cols
		}
		c0, c1 := tl*cols, min((tl+1)*cols, g.m)
		err := p.k.Sums(sums, p.x, w, ldw, g.c)
		if err == nil {
			err = p.k.Planes(p.y[c0*64:c1*64], sums, p.b[c0:c1])
		}
		p.errs.add(err)
	}
}
