package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// IntProduct is a kdesc.IntProduct: MatMulInteger, DynQuantMatMul or
// ConvInteger (QDQMatMul and QDQConv have no PTX kernel yet).
type IntProduct struct {
	kdesc.IntProduct
}

// The integer GEMM's blocking: a block of intThreads threads computes an
// intTile×intTile tile of out, each thread intTile/16 × intTile/16
// outputs, stepping through K by intBK with both operands' tiles, minus
// their zero points, in shared memory as s32.
const (
	intTile    = 32
	intBK      = 16
	intThreads = 256
	intSub     = intTile / 16 // outputs per thread along each axis
)

// EmitIntProduct writes the int32-accumulating GEMM of MatMulInteger
// and DynQuantMatMul. Every product of two 9-bit differences is exact in
// s32 and the sum wraps (mad.lo.s32) as the CPU's does, so MatMulInteger
// is bit-exact; no float takes part.
//
// DynQuantMatMul quantizes x on the fly: every block first finds x's
// whole range and from it the scale s and zero point z (xRange and
// dynParams, as DynamicQuantizeLinear; one launch has no grid-wide
// barrier, so each block rereads x), quantizes the x elements of its
// tiles as it stages them (q - z, exact as DynamicQuantizeLinear's q),
// and ends each output as the CPU's fused kernel does: float32(sum) ·
// float32(s·wScale[n]) (+ bias[n]), each operation rounded on its own
// (.rn: no fma), so the result has the CPU's bits.
//
// Parameters: out, a, b, a's zero point, b's zero point (MatMulInteger);
// out, x, w, w's zero point, w's scale, then the bias when there is one
// (DynQuantMatMul).
func EmitIntProduct(p *IntProduct) (*Kernel, error) {
	switch p.Op {
	case graph.OpConvInteger:
		return emitConvInteger(p)
	case graph.OpQDQMatMul, graph.OpQDQConv:
		return nil, fmt.Errorf("ptx: %s: no PTX kernel for %v yet (the CPU runs it)", p.Name, p.Op)
	}
	g := p.Gemm
	if g == nil {
		return nil, fmt.Errorf("ptx: %s: %v without its GEMM geometry", p.Name, p.Op)
	}
	dyn := p.Op == graph.OpDynQuantMatMul
	if err := quant8(p.Name, p.B); err != nil {
		return nil, err
	}
	if dyn {
		if p.A != tensor.F32 || g.Out != tensor.F32 {
			return nil, fmt.Errorf("ptx: %s: x %v and result %v, want f32", p.Name, p.A, g.Out)
		}
	} else if err := quant8(p.Name, p.A); err != nil {
		return nil, err
	}
	batches := product(g.Batch)
	if batches > MaxGridYZ || CeilDiv(g.M, intTile) > MaxGridYZ {
		return nil, fmt.Errorf("ptx: %s: %d batches of %d rows exceed the grid", p.Name, batches, g.M)
	}
	if len(g.ABatch) != len(g.Batch) || len(g.BBatch) != len(g.Batch) || (!dyn && (len(p.AZBatch) != len(g.Batch) || len(p.BZBatch) != len(g.Batch))) {
		return nil, fmt.Errorf("ptx: %s: batch strides do not match %d batch dims", p.Name, len(g.Batch))
	}
	f := newFn(p.Name)
	out, ap, bp := f.ptrParam("out"), f.ptrParam("a"), f.ptrParam("b")
	var azp, bzp, wsp, biasp string
	if dyn {
		bzp, wsp = f.ptrParam("bzero"), f.ptrParam("wscale")
		if p.Bias {
			biasp = f.ptrParam("bias")
		}
	} else {
		azp, bzp = f.ptrParam("azero"), f.ptrParam("bzero")
	}
	span := func(batch []int, sm, sn, m, n int) int {
		return absSum(batch, g.Batch) + abs(sm)*max(m-1, 0) + abs(sn)*max(n-1, 0) + 1
	}
	big := max(span(g.ABatch, g.ASm, g.ASk, g.M, g.K), span(g.BBatch, g.BSk, g.BSn, g.K, g.N), batches*g.M*g.N)
	x := ix{f: f, wide: big > math.MaxInt32/2}

	tid, bx, by, bz := f.reg(cB32), f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("mov.u32 %s, %%tid.x", tid)
	f.op("mov.u32 %s, %%ctaid.x", bx)
	f.op("mov.u32 %s, %%ctaid.y", by)
	f.op("mov.u32 %s, %%ctaid.z", bz)
	var scale, zero string
	if dyn {
		lo, hi := f.xRange(x, ap, g.M*g.K, tid, intThreads)
		scale, zero = f.dynParams(lo, hi)
	}
	bzx := x.ext(bz)
	strides := [][]int{g.ABatch, g.BBatch}
	if !dyn {
		strides = append(strides, p.AZBatch, p.BZBatch)
	}
	offs := make([]string, len(strides))
	if len(g.Batch) > 0 {
		offs = x.offsets(bzx, g.Batch, strides, nil)
	} else {
		for i := range offs {
			offs[i] = x.imm(0)
		}
	}
	m0, n0 := f.reg(cB32), f.reg(cB32)
	f.op("mul.lo.u32 %s, %s, %d", m0, by, intTile)
	f.op("mul.lo.u32 %s, %s, %d", n0, bx, intTile)

	// The rows of A and the column of B this thread stages, with their
	// zero points (0 outside the operand: those cells stay 0).
	loads := intTile * intBK / intThreads
	type aRow struct{ base, zero, in string }
	rows := make([]aRow, loads)
	lane16, lane32 := f.reg(cB32), f.reg(cB32)
	f.op("and.b32 %s, %s, 15", lane16, tid)
	f.op("and.b32 %s, %s, 31", lane32, tid)
	for r := range rows {
		m, in := f.reg(cB32), f.reg(cPred)
		f.op("shr.u32 %s, %s, 4", m, tid)
		f.op("add.u32 %s, %s, %d", m, m, r*intThreads/intBK)
		f.op("add.u32 %s, %s, %s", m, m, m0)
		f.op("setp.lt.u32 %s, %s, %d", in, m, g.M)
		mx := x.ext(m)
		rows[r] = aRow{base: x.mad(mx, g.ASm, offs[0]), in: in, zero: zero}
		if !dyn {
			z := f.reg(cB32)
			f.op("mov.u32 %s, 0", z)
			zoff := x.mad(mx, p.AZSm, offs[2])
			f.loadQ8If(p.A, z, x.addr(azp, zoff, 1), in)
			rows[r].zero = z
		}
	}
	n, nIn := f.reg(cB32), f.reg(cPred)
	f.op("add.u32 %s, %s, %s", n, n0, lane32)
	f.op("setp.lt.u32 %s, %s, %d", nIn, n, g.N)
	nx := x.ext(n)
	bCol := x.mad(nx, g.BSn, offs[1])
	bZero := f.reg(cB32)
	f.op("mov.u32 %s, 0", bZero)
	zoff := x.imm(0)
	if dyn {
		zoff = x.mad(nx, p.BZSn, zoff)
	} else {
		zoff = x.mad(nx, p.BZSn, offs[3])
	}
	f.loadQ8If(p.B, bZero, x.addr(bzp, zoff, 1), nIn)

	as := f.shared("ia", ".s32", intBK*intTile, 16)
	bs := f.shared("ib", ".s32", intBK*intTile, 16)
	asBase, bsBase := f.reg(cB32), f.reg(cB32)
	f.op("mov.u32 %s, %s", asBase, as)
	f.op("mov.u32 %s, %s", bsBase, bs)
	// Where this thread stores: A's cell (k = tid%16, row = tid/16 + 16r)
	// at As[k][row]; B's (k = tid/32 + 8r, col = tid%32) at Bs[k][col].
	aSt, bSt, t := f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("shr.u32 %s, %s, 4", t, tid)
	f.op("mad.lo.u32 %s, %s, %d, %s", aSt, lane16, intTile, t)
	f.op("mad.lo.u32 %s, %s, 4, %s", aSt, aSt, asBase)
	f.op("shr.u32 %s, %s, 5", t, tid)
	f.op("mad.lo.u32 %s, %s, %d, %s", bSt, t, intTile, lane32)
	f.op("mad.lo.u32 %s, %s, 4, %s", bSt, bSt, bsBase)
	// Where it reads: rows ty + 16i, columns tx + 16j.
	ty, tx, aRd, bRd := f.reg(cB32), f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("shr.u32 %s, %s, 4", ty, tid)
	f.op("mad.lo.u32 %s, %s, 4, %s", aRd, ty, asBase)
	f.op("mad.lo.u32 %s, %s, 4, %s", bRd, lane16, bsBase)
	f.op("mov.u32 %s, %s", tx, lane16)

	acc := make([][]string, intSub)
	for i := range acc {
		acc[i] = make([]string, intSub)
		for j := range acc[i] {
			acc[i][j] = f.reg(cB32)
			f.op("mov.u32 %s, 0", acc[i][j])
		}
	}
	u := ix{f: f}
	k0 := u.imm(0)
	f.gridLoop(u, k0, u.imm(intBK), g.K, func() {
		kA, kIn := f.reg(cB32), f.reg(cPred)
		f.op("add.u32 %s, %s, %s", kA, k0, lane16)
		f.op("setp.lt.u32 %s, %s, %d", kIn, kA, g.K)
		kAx := x.ext(kA)
		for r, row := range rows {
			ok := f.reg(cPred)
			f.op("and.pred %s, %s, %s", ok, row.in, kIn)
			addr := x.addr(ap, x.mad(kAx, g.ASk, row.base), p.A.Size())
			c := f.reg(cB32)
			f.op("mov.u32 %s, 0", c)
			if dyn {
				v := f.loadFloatIf(tensor.F32, addr, ok)
				quot := f.reg(cF32)
				f.op("div.rn.f32 %s, %s, %s", quot, v, scale)
				qv := f.quantizeInt(quot, false, zero, 0, 255)
				f.op("@%s sub.s32 %s, %s, %s", ok, c, qv, zero)
			} else {
				v := f.reg(cB32)
				f.op("mov.u32 %s, 0", v)
				f.loadQ8If(p.A, v, addr, ok)
				f.op("@%s sub.s32 %s, %s, %s", ok, c, v, row.zero)
			}
			f.op("st.shared.s32 [%s+%d], %s", aSt, r*intThreads/intBK*4, c)
		}
		for r := range loads {
			kB, ok := f.reg(cB32), f.reg(cPred)
			f.op("shr.u32 %s, %s, 5", kB, tid)
			f.op("add.u32 %s, %s, %d", kB, kB, r*intThreads/intTile)
			f.op("add.u32 %s, %s, %s", kB, kB, k0)
			f.op("setp.lt.u32 %s, %s, %d", ok, kB, g.K)
			f.op("and.pred %s, %s, %s", ok, ok, nIn)
			v, c := f.reg(cB32), f.reg(cB32)
			f.op("mov.u32 %s, 0", v)
			f.op("mov.u32 %s, 0", c)
			f.loadQ8If(p.B, v, x.addr(bp, x.mad(x.ext(kB), g.BSk, bCol), 1), ok)
			f.op("@%s sub.s32 %s, %s, %s", ok, c, v, bZero)
			f.op("st.shared.s32 [%s+%d], %s", bSt, r*intThreads/intTile*intTile*4, c)
		}
		f.op("bar.sync 0")
		for kk := range intBK {
			av, bv := make([]string, intSub), make([]string, intSub)
			for i := range av {
				av[i] = f.reg(cB32)
				f.op("ld.shared.s32 %s, [%s+%d]", av[i], aRd, (kk*intTile+16*i)*4)
			}
			for j := range bv {
				bv[j] = f.reg(cB32)
				f.op("ld.shared.s32 %s, [%s+%d]", bv[j], bRd, (kk*intTile+16*j)*4)
			}
			for i := range av {
				for j := range bv {
					f.op("mad.lo.s32 %s, %s, %s, %s", acc[i][j], av[i], bv[j], acc[i][j])
				}
			}
		}
		f.op("bar.sync 0")
	})

	outOff := x.reg()
	f.op("mul.lo.%s %s, %s, %d", x.t(), outOff, bzx, g.M*g.N)
	for i := range intSub {
		m, mIn := f.reg(cB32), f.reg(cPred)
		f.op("add.u32 %s, %s, %s", m, m0, ty)
		f.op("add.u32 %s, %s, %d", m, m, 16*i)
		f.op("setp.lt.u32 %s, %s, %d", mIn, m, g.M)
		row := x.mad(x.ext(m), g.N, outOff)
		for j := range intSub {
			col, ok := f.reg(cB32), f.reg(cPred)
			f.op("add.u32 %s, %s, %s", col, n0, tx)
			f.op("add.u32 %s, %s, %d", col, col, 16*j)
			f.op("setp.lt.u32 %s, %s, %d", ok, col, g.N)
			f.op("and.pred %s, %s, %s", ok, ok, mIn)
			skip := f.label("skip")
			f.op("@!%s bra %s", ok, skip)
			colx := x.ext(col)
			at := x.addr(out, x.mad(colx, 1, row), 4)
			if !dyn {
				f.op("st.global.s32 [%s], %s", at, acc[i][j])
				f.place(skip)
				continue
			}
			sc, v := f.load(tensor.F32, x.addr(wsp, x.mad(colx, p.WScaleSn, x.imm(0)), 4)), f.reg(cF32)
			f.op("mul.rn.f32 %s, %s, %s", sc, scale, sc)
			f.op("cvt.rn.f32.s32 %s, %s", v, acc[i][j])
			f.op("mul.rn.f32 %s, %s, %s", v, v, sc)
			if p.Bias {
				b := f.load(tensor.F32, x.addr(biasp, colx, 4))
				f.op("add.rn.f32 %s, %s, %s", v, v, b)
			}
			f.op("st.global.f32 [%s], %s", at, v)
			f.place(skip)
		}
	}
	l := Launch{Grid: [3]int{CeilDiv(g.N, intTile), CeilDiv(g.M, intTile), max(batches, 1)}, Block: [3]int{intThreads, 1, 1}}
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("ptx: %s: %w", p.Name, err)
	}
	return f.kernel(l), nil
}

// loadQ8If loads the I8 or U8 element at addr into the s32 register dst
// when pred holds (dst keeps its value otherwise).
func (f *fn) loadQ8If(dt tensor.DType, dst, addr, pred string) {
	t := "u8"
	if dt == tensor.I8 {
		t = "s8"
	}
	f.op("@%s ld.global.%s %s, [%s]", pred, t, dst, addr)
}

// emitConvInteger writes ConvInteger as the direct conv kernel with s32
// arithmetic: one output per thread, every tap (x - xZero)·(w - wZero[m])
// added with mad.lo.s32 (exact; the sum wraps as the CPU's int32 one,
// and a wrapping sum is the same in any order); a padding cell counts as
// the zero point, adding nothing. Parameters: out, x, w, x's zero point, w's zero point.
func emitConvInteger(p *IntProduct) (*Kernel, error) {
	cv := p.Conv
	if cv == nil {
		return nil, fmt.Errorf("ptx: %s: ConvInteger without its conv geometry", p.Name)
	}
	for _, dt := range []tensor.DType{p.A, p.B} {
		if err := quant8(p.Name, dt); err != nil {
			return nil, err
		}
	}
	if cv.Groups < 1 || cv.C%cv.Groups != 0 || cv.M%cv.Groups != 0 {
		return nil, fmt.Errorf("ptx: %s: groups %d for channels %d→%d", p.Name, cv.Groups, cv.C, cv.M)
	}
	c := &Conv{Conv: *cv}
	f, x, out, xp, wp, _, _ := convSetup(c)
	xzp, wzp := f.ptrParam("xzero"), f.ptrParam("wzero")
	perChannel := product(p.BZero) > 1
	cpg, mpg := c.C/c.Groups, c.M/c.Groups
	n := c.N * c.M * c.OH * c.OW
	xz := f.load(p.A, xzp)
	i, stride := f.globalIndex(x.wide)
	f.gridLoop(x, i, stride, n, func() {
		r, ox := x.divmod(i, c.OW)
		r, oy := x.divmod(r, c.OH)
		b, m := x.divmod(r, c.M)
		g, _ := x.divmod(m, mpg)
		plane0 := x.mad(x.mad(b, c.C, x.mad(g, cpg, x.imm(0))), c.H*c.W, x.imm(0))
		w0 := x.mad(m, cpg*c.KH*c.KW, x.imm(0))
		zi := x.imm(0)
		if perChannel {
			zi = m
		}
		wz := f.load(p.B, x.addr(wzp, zi, 1))
		acc, v := f.reg(cB32), f.reg(cB32)
		f.op("mov.u32 %s, 0", acc)
		f.convTaps(c, x, plane0, w0, x.origin(oy, c.SH, c.PT), x.origin(ox, c.SW, c.PL), convTap{
			start: func() { f.op("mov.u32 %s, 0", v) },
			inside: func(xAt string) {
				f.op("sub.s32 %s, %s, %s", v, f.load(p.A, x.addr(xp, xAt, 1)), xz)
			},
			end: func(wAt string) {
				w := f.reg(cB32)
				f.op("sub.s32 %s, %s, %s", w, f.load(p.B, x.addr(wp, wAt, 1)), wz)
				f.op("mad.lo.s32 %s, %s, %s, %s", acc, v, w, acc)
			},
		})
		f.op("st.global.s32 [%s], %s", x.addr(out, i, 4), acc)
	})
	return f.kernel(GridStride(n, blockOr(0), maxGridStrideBlocks)), nil
}
