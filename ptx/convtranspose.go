package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/internal/kdesc"
)

// ConvTranspose is a kdesc.ConvTranspose with the kernel's block.
type ConvTranspose struct {
	kdesc.ConvTranspose
	Block int // threads per block (0: 256)
}

// EmitConvTranspose writes a transposed convolution (1 to 3 spatial
// axes) as a gather, one output element per thread: where the CPU
// scatters every input cell into the cells its taps land on, each output
// cell here collects the (tap, input channel of its group) pairs that
// land on it — on each axis, tap k is taken from input cell
// (o + pad − k·dilation) / stride when that is whole and inside the
// input (kdesc.ConvTranspose.Reach). No two threads write one cell, so
// no atomics, and the f32 sum runs in one fixed order: taps outer (axis
// by axis, ascending), the group's input channels inner. Then + bias[m].
// Parameters: out, x, w, then bias when Bias.
func EmitConvTranspose(c *ConvTranspose) (*Kernel, error) {
	if err := floatOnly(c.DType); err != nil {
		return nil, err
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("ptx: %w", err)
	}
	sp, in, kern := c.Spatial(), c.In[2:], c.Kernel
	inSz, kSz := product(in), product(kern)
	ch, cpg, mpg := c.In[1], c.In[1]/c.Groups, c.M/c.Groups
	n := product(c.Out)
	f := newFn(c.Name)
	out, xp, wp := f.ptrParam("out"), f.ptrParam("x"), f.ptrParam("w")
	var bias string
	if c.Bias {
		bias = f.ptrParam("bias")
	}
	x := ix{f: f, wide: max(c.In[0]*ch*inSz, ch*mpg*kSz, n) > math.MaxInt32/2}
	dt, es := c.DType, c.DType.Size()
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		co := x.coords(i, c.Out) // batch, channel m, spatial...
		g, mm := x.divmod(co[1], mpg)
		// The group's first input plane of this image, and the weights
		// w[g·cpg, mm, ...] of its first input channel.
		xb := x.mad(x.mad(co[0], ch, x.mad(g, cpg, x.imm(0))), inSz, x.imm(0))
		wb := x.mad(g, cpg*mpg*kSz, x.mad(mm, kSz, x.imm(0)))
		acc := f.f32(0)
		// taps nests one loop per spatial axis; xo and wo are the offsets
		// (row-major over the axes so far) of the input cell and the tap.
		var taps func(a int, xo, wo string)
		taps = func(a int, xo, wo string) {
			if a == sp {
				xo, wo = x.mad(xo, 1, xb), x.mad(wo, 1, wb)
				f.count(x, cpg, func(ci string) {
					xv := f.load(dt, x.addr(xp, x.mad(ci, inSz, xo), es))
					wv := f.load(dt, x.addr(wp, x.mad(ci, mpg*kSz, wo), es))
					f.op("fma.rn.f32 %s, %s, %s, %s", acc, xv, wv, acc)
				})
				return
			}
			t0 := x.mad(co[2+a], 1, x.imm(c.Pads[a])) // o + pad: tap 0's numerator
			f.count(x, kern[a], func(k string) {
				skip := f.label("tap")
				t := x.mad(k, -c.Dilations[a], t0)
				f.outside(x, t, c.Reach(a), skip)
				src := t
				if s := c.Strides[a]; s > 1 {
					q, r := x.divmod(t, s)
					p := f.reg(cPred)
					f.op("setp.ne.%s %s, %s, 0", x.t(), p, r)
					f.op("@%s bra %s", p, skip)
					src = q
				}
				taps(a+1, x.mad(xo, in[a], src), x.mad(wo, kern[a], k))
				f.place(skip)
			})
		}
		taps(0, x.imm(0), x.imm(0))
		if c.Bias {
			f.op("add.f32 %s, %s, %s", acc, acc, f.load(dt, x.addr(bias, co[1], es)))
		}
		f.store(dt, x.addr(out, i, es), acc)
	})
	return f.kernel(GridStride(n, blockOr(c.Block), maxGridStrideBlocks)), nil
}
