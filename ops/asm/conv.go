package asm

import (
	"errors"
	"fmt"
)

// ConvGeom is the geometry of a 2-D convolution or pooling window over
// NCHW data, with the attributes already normalised (as graph's shape
// inference leaves them).
type ConvGeom struct {
	N, C, H, W     int // input
	M              int // output channels (pooling: C)
	OH, OW         int // output spatial dims
	KH, KW         int // window
	SH, SW, DH, DW int // strides and dilations, >= 1 (pooling ignores dilations)
	PT, PL         int // top and left padding; bottom and right only shape OH, OW
	Groups         int // convolution groups (pooling ignores it)
}

func (g *ConvGeom) check() error {
	for _, v := range [...]int{g.N, g.C, g.H, g.W, g.M, g.OH, g.OW, g.KH, g.KW, g.PT, g.PL} {
		if v < 0 {
			return fmt.Errorf("asm: negative size in %+v", *g)
		}
	}
	if g.SH < 1 || g.SW < 1 || g.DH < 1 || g.DW < 1 {
		return fmt.Errorf("asm: strides and dilations must be >= 1 in %+v", *g)
	}
	return nil
}

// validRange is the range of output positions o in [0, out) whose input
// position o·stride + base lies in [0, in).
func validRange(out, in, stride, base int) (lo, hi int) {
	if in-1-base < 0 {
		return 0, 0
	}
	if base < 0 {
		lo = (-base + stride - 1) / stride
	}
	hi = min(out, (in-1-base)/stride+1)
	return min(lo, hi), hi
}

// windowRanges returns, per kernel row and column, the output rows and
// columns that read inside the input.
func windowRanges(g *ConvGeom) (oyLo, oyHi, oxLo, oxHi []int) {
	oyLo, oyHi = make([]int, g.KH), make([]int, g.KH)
	for ky := range g.KH {
		oyLo[ky], oyHi[ky] = validRange(g.OH, g.H, g.SH, ky*g.DH-g.PT)
	}
	oxLo, oxHi = make([]int, g.KW), make([]int, g.KW)
	for kx := range g.KW {
		oxLo[kx], oxHi[kx] = validRange(g.OW, g.W, g.SW, kx*g.DW-g.PL)
	}
	return oyLo, oyHi, oxLo, oxHi
}

// overlapsAny reports whether y shares memory with any of xs.
func overlapsAny(y []float32, xs ...[]float32) bool {
	for _, x := range xs {
		if overlap32(y, x) {
			return true
		}
	}
	return false
}

// Conv2D is a prepared single-precision 2-D convolution
//
//	y[n,m,oy,ox] = bias[m] + Σ w[m,c,ky,kx] · x[n, g·cpg+c, oy·SH-PT+ky·DH, ox·SW-PL+kx·DW]
//
// (g = m / (M/Groups), cells in the padding count as 0), optionally
// followed by an activation and a residual add (ConvArgs). With one input
// channel per group (depthwise, or a single input channel) it runs a
// direct kernel: each output plane sums the taps' shifted reads of a
// zero-padded copy of its input (conv_depthwise.go). Otherwise each output
// channel group is an implicit GEMM (conv_gemm.go): the weights, with the
// bias as an extra column, packed once into the micro-kernel's A panels,
// times input patches packed straight into its B panels, one tile of
// output columns at a time; stride-1 convolutions whose output rows are
// whole panels skip the packing and read the patches in place
// (conv_direct.go), as 1×1 ones over planes of whole segments do on the
// phase product (conv_point.go). Tiles (batch × group × row block × column block,
// chosen by shape: conv_tiles.go) are spread over par; each worker owns
// its panel buffer.
type Conv2D struct {
	g                      ConvGeom
	k                      *RowKernels
	v                      *GemmVariant
	cpg, mpg, kk, hw, ohw  int
	bias, depthwise        bool
	cold                   bool // the weights leave the caches between runs (ColdWeights)
	oyLo, oyHi, oxLo, oxHi []int
	pooled                 // set by NewConv2DPool2x2

	convGemm            // the GEMM path's plan (unused when depthwise or pointwise)
	point    *convPoint // the pointwise path's plan (conv_point.go), or nil
	own      ConvWeights

	dw convDepthwise // the depthwise path's plan (conv_depthwise.go)

	c   *Chunks
	run convRun // operands of the current run
}

// ConvWeights are a convolution's weights and bias packed for one
// Conv2D (see PackWeights), so that runs need not repack them.
type ConvWeights struct {
	data    []float32
	owner   *Conv2D
	wino    bool   // the transformed weights after data's direct packing are usable (conv_wino.go)
	Version uint64 // free for the owner: e.g. the weights version it was packed from
}

// ConvArgs are the operands of one run. W and B are the weights [M,C/G,KH,KW]
// and bias [M] (nil without one); Packed, when set, replaces both.
type ConvArgs struct {
	X, W, B, Y []float32
	Packed     *ConvWeights
	// Act, then ActFunc if set instead, is applied to every output, and
	// Residual (Y's shape, not overlapping it) then added, while each
	// output tile is still in cache. ActFunc is called concurrently on
	// disjoint row segments and must not keep them.
	Act      Activation
	ActFunc  func(seg []float32)
	Residual []float32
	// PostAct, then PostActFunc if set instead, is applied last, after
	// the residual (a ResNet block's Relu after its identity add), with
	// ActFunc's contract.
	PostAct     Activation
	PostActFunc func(seg []float32)
	// ActIsRelu, or ActClampHi > 0, says that ActFunc is the elementwise
	// Relu (EwKernels.Unary(EwRelu)), or the elementwise Clamp to [+0,
	// ActClampHi] (ReLU6), of the variant's own name: where the GEMM
	// variant can, tiles of whole panels clamp their sums in registers
	// before storing them, with the same bits, and skip ActFunc (with no
	// Residual and no PostAct).
	ActIsRelu  bool
	ActClampHi float32
}

// convRun is the state of the run in progress.
type convRun struct {
	x, a, y, res []float32 // a: packed weights
	act, postAct Activation
	actFunc      func(seg []float32)
	postFunc     func(seg []float32)
	wino         bool // the weights allow the Winograd path
	padded       bool // the padded input is filled (else the Winograd runs fill it)
	clamp        uint // gemmRelu or clampFlags: the epilogue the products may apply (ConvArgs.ActIsRelu)
}

// NewConv2D prepares a convolution of geometry g, with a bias input when
// bias is set, using row kernels k and GEMM variant gv (nil: the best
// ones) over par.
func NewConv2D(g ConvGeom, bias bool, k *RowKernels, gv *GemmVariant, par Par) (*Conv2D, error) {
	return newConv2D(g, bias, false, k, gv, par)
}

// newConv2D prepares NewConv2D's convolution, pooled (NewConv2DPool2x2)
// when pool is set.
func newConv2D(g ConvGeom, bias, pool bool, k *RowKernels, gv *GemmVariant, par Par) (*Conv2D, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	if g.Groups < 1 || g.C%g.Groups != 0 || g.M%g.Groups != 0 {
		return nil, fmt.Errorf("asm: conv: %d groups for %d input and %d output channels", g.Groups, g.C, g.M)
	}
	if k == nil {
		k = BestRows()
	}
	if gv == nil {
		gv = BestGemm()
	}
	c := &Conv2D{g: g, k: k, v: gv, bias: bias, cpg: g.C / g.Groups, mpg: g.M / g.Groups, hw: g.H * g.W, ohw: g.OH * g.OW}
	c.kk = c.cpg * g.KH * g.KW
	c.oyLo, c.oyHi, c.oxLo, c.oxHi = windowRanges(&g)
	if pool {
		c.pooled = pooled{on: true, ph: g.OH / 2, pw: g.OW / 2}
	}
	if c.cpg > 1 {
		par = convWorkers(par, 2*g.N*g.M*c.ohw*c.kk)
	}
	if c.cpg == 1 {
		c.depthwise = true
		c.prepareDepthwise(par, depthwiseFor(k))
		return c, nil
	}
	if c.point = c.planPoint(par); c.point != nil {
		return c, nil
	}
	c.prepareGemm(par)
	return c, nil
}

// convParMinFlops is the least work (flops) of a convolution worth each
// worker beyond the first: 2 Mflop, about 10 µs of one Zen 5 core's
// AVX-512 products (the GEMMs' parMinFlops is a quarter of it; a
// convolution's workers also read input the other core wrote, which a
// small one does not amortise). DenseNet-121 at 64²
// (120 convolutions, 84 under two workers' worth: at 8², 4² and 2²) ran
// on two workers no faster than on one (4.04 ms, median of six rounds;
// one worker 3.8-3.9), and in 3.52 with those on one (alternated
// builds, cores that pass a line in 460-490 ns); YOLO-style, SqueezeNet,
// U-Net, DCGAN, ShuffleNetV2, MobileNetV2 and EfficientNet-B0 alike.
// Depthwise convolutions are not held to it: their few flops a byte make
// them memory-bound, and MobileNetV2's small ones on one worker made the
// model 12% slower. (A variable: the package's tests send small
// convolutions down the parallel paths, TestMain.)
var convParMinFlops = convParMinFlopsDefault

const convParMinFlopsDefault = 1 << 21

// convWorkers is par cut to the workers a convolution of flops work
// keeps busy (convParMinFlops each): serial below two workers' worth.
func convWorkers(par Par, flops int) Par {
	t := min(par.Threads, max(1, flops/convParMinFlops))
	if t <= 1 {
		return Par{}
	}
	par.Threads = t
	return par
}

// PackWeights packs w [M,C/G,KH,KW] and b [M] (nil without a bias) into
// pw for this convolution, reusing pw's buffer when it is large enough.
func (c *Conv2D) PackWeights(pw *ConvWeights, w, b []float32) error {
	g := &c.g
	nb := 0
	if c.bias {
		nb = g.M
	}
	if len(w) != g.M*c.kk || len(b) != nb {
		return fmt.Errorf("asm: conv: got w %d, bias %d elements; want %d, %d", len(w), len(b), g.M*c.kk, nb)
	}
	if c.depthwise {
		c.packDepthwise(pw, w, b)
	} else {
		c.packA(pw, w, b)
	}
	pw.wino = false
	if c.wino != nil {
		c.packWino(pw, w, b)
	}
	if c.winoG != nil {
		c.packWinoGemm(pw, w, b)
	}
	pw.owner = c
	return nil
}

// SharesPacking reports whether weights packed for d are packed for c as
// well: the same convolution (geometry, bias, pooling) on the same
// kernel variants. How many workers a plan is for changes how its runs
// split the work, never the packing (TestConvPackingThreadIndependent),
// so a program's serial twin of a step runs on the packed weights of the
// step's pool kernel.
func (c *Conv2D) SharesPacking(d *Conv2D) bool {
	return d != nil && c.g == d.g && c.bias == d.bias && c.pooled.on == d.pooled.on && c.k == d.k && c.v == d.v
}

// Winograd reports whether runs take a Winograd path (conv_wino.go,
// conv_wino_gemm.go), as they do when the weights allow it.
func (c *Conv2D) Winograd() bool { return c.wino != nil || c.winoG != nil }

// Run computes y from x [N,C,H,W], w [M,C/G,KH,KW] and b [M] (nil without
// a bias), packing the weights first. y must not overlap the inputs.
func (c *Conv2D) Run(y, x, w, b []float32) error {
	if err := c.PackWeights(&c.own, w, b); err != nil {
		return err
	}
	return c.RunArgs(&ConvArgs{X: x, Y: y, Packed: &c.own})
}

// RunArgs computes a.Y from a.X and the weights, then the epilogue.
func (c *Conv2D) RunArgs(a *ConvArgs) error {
	g := &c.g
	pw := a.Packed
	if pw == nil {
		if err := c.PackWeights(&c.own, a.W, a.B); err != nil {
			return err
		}
		pw = &c.own
	}
	if pw.owner != c && !c.SharesPacking(pw.owner) {
		return errors.New("asm: conv: weights packed for another convolution")
	}
	ny := g.N * g.M * c.outPlane()
	if len(a.X) != g.N*g.C*c.hw || len(a.Y) != ny || (a.Residual != nil && (c.pooled.on || len(a.Residual) != ny)) {
		return fmt.Errorf("asm: conv: got x %d, y %d, residual %d elements; want %d, %d, %d (none when pooled)",
			len(a.X), len(a.Y), len(a.Residual), g.N*g.C*c.hw, ny, ny)
	}
	if a.Act >= numActs || a.PostAct >= numActs {
		return fmt.Errorf("asm: conv: unknown %v or %v", a.Act, a.PostAct)
	}
	if overlapsAny(a.Y, a.X, pw.data, a.Residual) {
		return errors.New("asm: conv: output overlaps an input")
	}
	x := a.X
	padded := true // the padded copy is made before the run
	if !c.depthwise {
		padded = !c.winoPads(pw.wino)
		x = c.padInput(x, padded)
	}
	c.run = convRun{x: x, a: pw.data, y: a.Y, res: a.Residual, act: a.Act, actFunc: a.ActFunc,
		postAct: a.PostAct, postFunc: a.PostActFunc, wino: pw.wino, padded: padded, clamp: c.clampFlags(a)}
	c.runTiles()
	c.releasePad()
	c.run = convRun{} // keep no reference to the caller's memory
	return nil
}

// clampFlags is the run's in-register epilogue (convRun.clamp): the
// clamp ActFunc is, where the GEMM variant applies it and nothing follows
// it; else 0.
func (c *Conv2D) clampFlags(a *ConvArgs) uint {
	if !c.v.clamp || a.ActFunc == nil || a.Residual != nil || a.PostAct != ActNone || a.PostActFunc != nil {
		return 0
	}
	switch {
	case a.ActIsRelu:
		return gemmRelu
	case a.ActClampHi > 0:
		return clampFlags(a.ActClampHi)
	}
	return 0
}

// epilogue applies the run's activation and residual to y[off:off+n].
func (c *Conv2D) epilogue(off, n int) { c.finish(c.run.y[off:off+n], off) }

// finish applies the run's activation to seg, then adds the residual
// from off (a pooled run, whose seg is scratch, has none), then applies
// the post-residual activation.
func (c *Conv2D) finish(seg []float32, off int) {
	r := &c.run
	if r.actFunc != nil {
		r.actFunc(seg)
	} else if r.act != ActNone {
		r.act.Apply(seg)
	}
	if r.res != nil {
		c.k.Axpy(seg, r.res[off:off+len(seg)], 1) // 1·r + y rounds as r + y
	}
	if r.postFunc != nil {
		r.postFunc(seg)
	} else if r.postAct != ActNone {
		r.postAct.Apply(seg)
	}
}

// fill sets every element of s to v.
func fill(s []float32, v float32) {
	for i := range s {
		s[i] = v
	}
}
