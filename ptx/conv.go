package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Conv is a kdesc.Conv with the kernel's shape: an implicit GEMM per
// group (rows: the group's output channels, columns: the N·OH·OW output
// pixels, depth: the group's input channels × window taps, gathered from
// x into shared memory as im2col columns would hold them) when a group
// has enough output channels to fill a tile, else a direct kernel with
// one output per thread (depthwise and narrow grouped convs).
type Conv struct {
	kdesc.Conv
	Direct bool     // force the direct kernel
	Tile   GemmTile // zero: chosen from the output channels per group
	Block  int      // direct kernel: threads per block (0: 256)
}

// convTile is the default tile: autoTile's for the implicit GEMM
// (channels × pixels over C·KH·KW), with 32-channel blocks for groups of
// fewer than 64 channels where autoTile keeps 64.
func (c *Conv) convTile() GemmTile {
	if c.Tile != (GemmTile{}) {
		return c.Tile
	}
	mpg := c.M / c.Groups
	t := autoTile(mpg, c.N*c.OH*c.OW, c.C/c.Groups*c.KH*c.KW, c.Groups)
	if t == DefaultTile && mpg < 64 {
		return GemmTile{BM: 32, BN: 64, BK: 16, TM: 2, TN: 4}
	}
	return t
}

// EmitConv writes the convolution, then the epilogue: + bias[m], Act,
// + res, PostAct, in that order, as FusedConv2D, or (Pool) + bias[m], Act and the
// max of each 2×2 block, through the direct kernel. Parameters: out, x,
// w, then bias when Bias, then res when Res.
func EmitConv(c *Conv) (*Kernel, error) {
	if err := floatOnly(c.DType); err != nil {
		return nil, err
	}
	if c.Groups < 1 || c.C%c.Groups != 0 || c.M%c.Groups != 0 || min(c.SH, c.SW, c.DH, c.DW, c.KH, c.KW) < 1 {
		return nil, fmt.Errorf("ptx: %s: groups %d, channels %d→%d, window %dx%d, strides %d,%d, dilations %d,%d",
			c.Name, c.Groups, c.C, c.M, c.KH, c.KW, c.SH, c.SW, c.DH, c.DW)
	}
	for i, a := range []graph.Op{c.Act, c.PostAct} {
		if a != graph.OpInvalid && !graph.IsEpilogueAct(a) && !(i == 0 && a == graph.OpClip) {
			return nil, fmt.Errorf("ptx: %s: %v is not an epilogue activation", c.Name, a)
		}
	}
	if c.PostAct != graph.OpInvalid && !c.Res {
		return nil, fmt.Errorf("ptx: %s: a post-residual %v without a residual", c.Name, c.PostAct)
	}
	if c.Pool && (c.Res || c.OH < 2 || c.OW < 2) {
		return nil, fmt.Errorf("ptx: %s: a 2×2 pool of a %d×%d conv output (residual %v)", c.Name, c.OH, c.OW, c.Res)
	}
	mpg, taps := c.M/c.Groups, c.C/c.Groups*c.KH*c.KW
	t := c.convTile()
	if c.Direct || c.Pool || mpg < 16 || taps < 8 || c.Groups > MaxGridYZ || CeilDiv(mpg, t.BM) > MaxGridYZ {
		return emitConvDirect(c)
	}
	return emitConvGemm(c, t)
}

// convSetup declares the parameters and picks the index width: 64-bit
// when any operand can span 2³¹ elements.
func convSetup(c *Conv) (f *fn, x ix, out, xp, wp, bias, res string) {
	f = newFn(c.Name)
	out, xp, wp = f.ptrParam("out"), f.ptrParam("x"), f.ptrParam("w")
	if c.Bias {
		bias = f.ptrParam("bias")
	}
	if c.Res {
		res = f.ptrParam("res")
	}
	big := max(c.N*c.C*c.H*c.W, c.M*c.C/c.Groups*c.KH*c.KW, c.N*c.M*c.OH*c.OW)
	return f, ix{f: f, wide: big > math.MaxInt32/2}, out, xp, wp, bias, res
}

// convEpilogue finishes output element o (channel m) from the f32 sum.
func (f *fn) convEpilogue(c *Conv, x ix, acc, m, o, out, bias, res string) error {
	y, err := f.convFinish(c, x, acc, m, o, bias, res)
	if err != nil {
		return err
	}
	f.store(c.DType, x.addr(out, o, c.DType.Size()), y)
	return nil
}

// convFinish is the f32 value of output element o (channel m) from the
// sum: + bias, Act, + res, PostAct (o is unused without Res).
func (f *fn) convFinish(c *Conv, x ix, acc, m, o, bias, res string) (string, error) {
	es := c.DType.Size()
	y := acc
	if c.Bias {
		y = f.reg(cF32)
		f.op("add.f32 %s, %s, %s", y, acc, f.load(c.DType, x.addr(bias, m, es)))
	}
	if c.Act != graph.OpInvalid {
		v, err := f.unary(Instr{Op: c.Act, DType: tensor.F32, Attrs: c.ActAttrs}, val{y, kF32, tensor.F32})
		if err != nil {
			return "", err
		}
		y = v.r
	}
	if c.Res {
		r := f.reg(cF32)
		f.op("add.f32 %s, %s, %s", r, y, f.load(c.DType, x.addr(res, o, es)))
		y = r
	}
	if c.PostAct != graph.OpInvalid {
		v, err := f.unary(Instr{Op: c.PostAct, DType: tensor.F32}, val{y, kF32, tensor.F32})
		if err != nil {
			return "", err
		}
		y = v.r
	}
	return y, nil
}

// count emits `for k := 0; k < n; k++ { body(k) }` in x's width.
func (f *fn) count(x ix, n int, body func(k string)) {
	k := x.imm(0)
	f.gridLoop(x, k, x.imm(1), n, func() { body(k) })
}

// origin is v·stride − pad, the first input row (column) of a window;
// it may be negative.
func (x ix) origin(v string, stride, pad int) string {
	r := x.mad(v, stride, x.imm(0))
	if pad != 0 {
		f := x.f
		if x.wide {
			f.op("sub.s64 %s, %s, %d", r, r, pad)
		} else {
			f.op("sub.s32 %s, %s, %d", r, r, pad)
		}
	}
	return r
}

// inside narrows predicate ok to coordinate v (signed) in [0, n), with
// one unsigned compare as outside.
func (f *fn) inside(x ix, ok, v string, n int) {
	p := f.reg(cPred)
	f.op("setp.lt.%s %s, %s, %d", x.t(), p, v, n)
	f.op("and.pred %s, %s, %s", ok, ok, p)
}

// outside branches to skip when coordinate v (signed) is not in [0, n):
// one unsigned compare catches both ends.
func (f *fn) outside(x ix, v string, n int, skip string) {
	p := f.reg(cPred)
	f.op("setp.ge.%s %s, %s, %d", x.t(), p, v, n)
	f.op("@%s bra %s", p, skip)
}

// emitConvDirect: one output per thread, looping over the group's
// input channels and the window; taps in the padding multiply zero. A pooled
// output is the max (NaN winning, as EmitPool's) of its 2×2 block's four
// conv outputs, each computed so and finished.
func emitConvDirect(c *Conv) (*Kernel, error) {
	f, x, out, xp, wp, bias, res := convSetup(c)
	cpg, mpg := c.C/c.Groups, c.M/c.Groups
	oh, ow := c.OutHW()
	n := c.N * c.M * oh * ow
	es := c.DType.Size()
	i, stride := f.globalIndex(x.wide)
	var err error
	f.gridLoop(x, i, stride, n, func() {
		r, ox := x.divmod(i, ow)
		r, oy := x.divmod(r, oh)
		b, m := x.divmod(r, c.M)
		g, _ := x.divmod(m, mpg)
		plane0 := x.mad(x.mad(b, c.C, x.mad(g, cpg, x.imm(0))), c.H*c.W, x.imm(0))
		w0 := x.mad(m, cpg*c.KH*c.KW, x.imm(0))
		if !c.Pool {
			acc := f.convSum(c, x, xp, wp, plane0, w0, x.origin(oy, c.SH, c.PT), x.origin(ox, c.SW, c.PL))
			if e := f.convEpilogue(c, x, acc, m, i, out, bias, res); e != nil {
				err = e
			}
			return
		}
		best := f.f32(float32(math.Inf(-1)))
		for d := range 4 { // conv output (2·oy + dy, 2·ox + dx)
			dy, dx := d/2, d%2
			acc := f.convSum(c, x, xp, wp, plane0, w0, x.origin(oy, 2*c.SH, c.PT-dy*c.SH), x.origin(ox, 2*c.SW, c.PL-dx*c.SW))
			v, e := f.convFinish(c, x, acc, m, "", bias, "")
			if e != nil {
				err = e
			}
			f.op("max.NaN.f32 %s, %s, %s", best, best, v)
		}
		f.store(c.DType, x.addr(out, i, es), best)
	})
	if err != nil {
		return nil, err
	}
	return f.kernel(GridStride(n, blockOr(c.Block), maxGridStrideBlocks)), nil
}

// convSum is the f32 sum of one conv output whose window starts at input
// row iy0, column ix0 (signed) of the group's first input plane, plane0,
// and whose weights start at w0.
func (f *fn) convSum(c *Conv, x ix, xp, wp, plane0, w0, iy0, ix0 string) string {
	es := c.DType.Size()
	acc := f.f32(0)
	var v string
	f.convTaps(c, x, plane0, w0, iy0, ix0, convTap{
		// A padding cell is a zero the weight multiplies (0·NaN is NaN,
		// as the CPU kernels and the reference compute it): the input is
		// loaded only inside the plane.
		start:  func() { v = f.f32(0) },
		inside: func(xAt string) { f.op("mov.f32 %s, %s", v, f.load(c.DType, x.addr(xp, xAt, es))) },
		end: func(wAt string) {
			f.op("fma.rn.f32 %s, %s, %s, %s", acc, v, f.load(c.DType, x.addr(wp, wAt, es)), acc)
		},
	})
	return acc
}

// convTap is what a conv kernel emits at each tap of a window: start
// before the bounds check, inside for a cell inside the input plane only
// (xAt: its offset in x), end at every tap (wAt: the weight's offset).
type convTap struct {
	start  func()
	inside func(xAt string)
	end    func(wAt string)
}

// convTaps walks one conv output's window over the group's input
// channels, rows and columns, in that order: the window starts at input
// row iy0, column ix0 (signed) of the group's first input plane, plane0,
// and its weights at w0.
func (f *fn) convTaps(c *Conv, x ix, plane0, w0, iy0, ix0 string, tap convTap) {
	f.count(x, c.C/c.Groups, func(ci string) {
		plane, wc := x.mad(ci, c.H*c.W, plane0), x.mad(ci, c.KH*c.KW, w0)
		f.count(x, c.KH, func(ky string) {
			iy := x.mad(ky, c.DH, iy0)
			row, wr := x.mad(iy, c.W, plane), x.mad(ky, c.KW, wc)
			f.count(x, c.KW, func(kx string) {
				ixx := x.mad(kx, c.DW, ix0)
				tap.start()
				pad := f.label("pad")
				f.outside(x, iy, c.H, pad)
				f.outside(x, ixx, c.W, pad)
				tap.inside(x.mad(ixx, 1, row))
				f.place(pad)
				tap.end(x.mad(kx, 1, wr))
			})
		})
	})
}
