package ptx

import (
	"math"

	"github.com/kilnml/kiln/internal/kdesc"
)

// BatchNorm is a kdesc.BatchNorm with the kernel's block.
type BatchNorm struct {
	kdesc.BatchNorm
	Block int // threads per block (0: 256)
}

// EmitBatchNorm writes inference batch normalisation, one element per
// thread: (x - mean[c]) / √(var[c] + eps) · scale[c] + bias[c].
// Parameters: out, x, scale, bias, mean, var.
func EmitBatchNorm(b *BatchNorm) (*Kernel, error) {
	if err := floatOnly(b.DType); err != nil {
		return nil, err
	}
	n := b.N * b.C * b.Spatial
	f := newFn(b.Name)
	out, xp := f.ptrParam("out"), f.ptrParam("x")
	scale, bias, mean, vr := f.ptrParam("scale"), f.ptrParam("bias"), f.ptrParam("mean"), f.ptrParam("var")
	x := ix{f: f, wide: n > math.MaxInt32/2}
	es := b.DType.Size()
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		r, _ := x.divmod(i, max(b.Spatial, 1))
		_, c := x.divmod(r, b.C)
		ld := func(p string) string { return f.load(b.DType, x.addr(p, c, es)) }
		d, s, y := f.reg(cF32), f.reg(cF32), f.reg(cF32)
		f.op("sub.f32 %s, %s, %s", d, f.load(b.DType, x.addr(xp, i, es)), ld(mean))
		f.op("add.f32 %s, %s, %s", s, ld(vr), fimm(b.Eps))
		f.op("sqrt.rn.f32 %s, %s", s, s)
		f.op("div.rn.f32 %s, %s, %s", y, d, s)
		f.op("fma.rn.f32 %s, %s, %s, %s", y, y, ld(scale), ld(bias))
		f.store(b.DType, x.addr(out, i, es), y)
	})
	return f.kernel(GridStride(n, blockOr(b.Block), maxGridStrideBlocks)), nil
}

// RoPE is a kdesc.RoPE with the kernel's block.
type RoPE struct {
	kdesc.RoPE
	Block int // threads per block (0: 256)
}

// EmitRoPE writes the rotary embedding, one pair per thread (each
// thread reads both elements before writing, so out may alias x).
// Parameters: out, x, cos, sin.
func EmitRoPE(r *RoPE) (*Kernel, error) {
	if err := floatOnly(r.DType); err != nil {
		return nil, err
	}
	n := r.Rows * r.Half
	f := newFn(r.Name)
	out, xp, cos, sin := f.ptrParam("out"), f.ptrParam("x"), f.ptrParam("cos"), f.ptrParam("sin")
	x := ix{f: f, wide: 2*n > math.MaxInt32/2}
	es := r.DType.Size()
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		row, k := x.divmod(i, max(r.Half, 1))
		_, pos := x.divmod(row, max(r.Seq, 1))
		ka := k // the pair's first element within the row
		if r.Interleaved {
			ka = x.mad(k, 2, x.imm(0))
		}
		ea := x.mad(row, 2*r.Half, ka)
		eb := x.reg()
		if r.Interleaved {
			f.op("add.%s %s, %s, 1", x.t(), eb, ea)
		} else {
			f.op("add.%s %s, %s, %d", x.t(), eb, ea, r.Half)
		}
		cs := x.mad(pos, r.Half, k)
		a, b := f.load(r.DType, x.addr(xp, ea, es)), f.load(r.DType, x.addr(xp, eb, es))
		c, s := f.load(r.DType, x.addr(cos, cs, es)), f.load(r.DType, x.addr(sin, cs, es))
		// a·c - b·s and b·c + a·s, the second product fused into the sum.
		ya, yb := f.reg(cF32), f.reg(cF32)
		f.op("mul.f32 %s, %s, %s", ya, b, s)
		f.op("neg.f32 %s, %s", ya, ya)
		f.op("fma.rn.f32 %s, %s, %s, %s", ya, a, c, ya)
		f.op("mul.f32 %s, %s, %s", yb, a, s)
		f.op("fma.rn.f32 %s, %s, %s, %s", yb, b, c, yb)
		f.store(r.DType, x.addr(out, ea, es), ya)
		f.store(r.DType, x.addr(out, eb, es), yb)
	})
	return f.kernel(GridStride(n, blockOr(r.Block), maxGridStrideBlocks)), nil
}
