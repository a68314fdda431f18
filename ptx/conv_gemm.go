package ptx

import "fmt"

// emitConvGemm writes the implicit-GEMM convolution: block (bx, by, bz)
// computes a BM×BN tile of group bz's [M/Groups, N·OH·OW] output. Each
// K step stages BK rows of the weights (As, transposed, as the GEMM
// stages A) and BK taps of BN pixels gathered from x (Bs: zero in the
// padding and past the edges), then accumulates TM×TN outputs per
// thread. Every thread stages a single pixel column (threads is a
// multiple of BN), so its pixel's coordinates are computed once.
func emitConvGemm(c *Conv, t GemmTile) (*Kernel, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	threads := t.Threads()
	if threads%t.BN != 0 {
		return nil, fmt.Errorf("ptx: %s: tile %+v: %d threads must be a multiple of BN", c.Name, t, threads)
	}
	cpg, mpg := c.C/c.Groups, c.M/c.Groups
	taps, ohw := c.KH*c.KW, c.OH*c.OW
	depth, pixels := cpg*taps, c.N*ohw
	f, x, out, xp, wp, bias, res := convSetup(c)
	lda := stagedLd(t.BM, walksK(true, depth, 1)) // the weights, walked along k
	as := f.shared("As", ".f32", t.kStep()*lda, 16)
	bs := f.shared("Bs", ".f32", t.kStep()*t.BN, 16) // pixel columns: dense rows
	tid, bx, by, bz := f.reg(cB32), f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("mov.u32 %s, %%tid.x", tid)
	f.op("mov.u32 %s, %%ctaid.x", bx)
	f.op("mov.u32 %s, %%ctaid.y", by)
	f.op("mov.u32 %s, %%ctaid.z", bz)
	u := ix{f: f} // tile-local arithmetic stays 32-bit
	tx, ty, grp := f.gemmLanes(t, tid)
	m0, p0 := u.mad(by, t.BM, u.imm(0)), u.mad(bx, t.BN, u.imm(0))
	// The staged pixel: p0 + tid % BN, valid below N·OH·OW.
	sk, sp := u.divmod(tid, t.BN)
	gp := u.mad(sp, 1, p0)
	pok := f.reg(cPred)
	f.op("setp.lt.u32 %s, %s, %d", pok, gp, pixels)
	b, q := x.divmod(x.ext(gp), ohw)
	oy, ox := x.divmod(q, c.OW)
	g := x.ext(bz)
	plane0 := x.mad(x.mad(b, c.C, x.mad(g, cpg, x.imm(0))), c.H*c.W, x.imm(0))
	iy0, ix0 := x.origin(oy, c.SH, c.PT), x.origin(ox, c.SW, c.PL)
	wOff := x.mad(g, mpg*depth, x.imm(0))
	bsAddr := f.reg(cB32)
	f.op("mov.u32 %s, %s", bsAddr, bs)
	f.op("mad.lo.u32 %s, %s, 4, %s", bsAddr, tid, bsAddr)

	acc := make([][]string, t.TM)
	for i := range acc {
		acc[i] = make([]string, t.TN)
		for j := range acc[i] {
			acc[i][j] = f.f32(0)
		}
	}
	k0 := u.imm(0)
	f.gridLoop(u, k0, u.imm(t.kStep()), depth, func() {
		f.stageTile(x, tid, threads, t.BM, t.kStep(), true, m0, k0, mpg, depth, wp, wOff, depth, 1, c.DType, as)
		// The im2col gather: every (predicated) load, then every store
		// (see loadFloatIf).
		per := t.BN * t.kStep() / threads
		vals := make([]string, per)
		for l := range per {
			gk := u.mad(sk, 1, k0)
			if l > 0 {
				f.op("add.u32 %s, %s, %d", gk, gk, l*threads/t.BN)
			}
			ok := f.reg(cPred)
			f.op("setp.lt.u32 %s, %s, %d", ok, gk, depth)
			f.op("and.pred %s, %s, %s", ok, ok, pok)
			ci, r := u.divmod(gk, taps)
			ky, kx := u.divmod(r, c.KW)
			iy := x.mad(x.ext(ky), c.DH, iy0)
			f.inside(x, ok, iy, c.H)
			ixx := x.mad(x.ext(kx), c.DW, ix0)
			f.inside(x, ok, ixx, c.W)
			src := x.mad(x.mad(x.ext(ci), c.H*c.W, plane0), 1, x.mad(iy, c.W, ixx))
			vals[l] = f.loadFloatIf(c.DType, x.addr(xp, src, c.DType.Size()), ok)
		}
		for l, v := range vals {
			f.op("st.shared.f32 [%s+%d], %s", bsAddr, 4*l*threads, v)
		}
		f.op("bar.sync 0")
		f.tileFMA(t, acc, as, bs, tx, ty, grp, lda, t.BN)
		f.op("bar.sync 0")
	})
	done := f.sumGroups(t, acc, tx, ty, grp)
	for i := range t.TM {
		gm := u.mad(ty, t.TM, m0)
		f.op("add.u32 %s, %s, %d", gm, gm, i)
		for j := range t.TN {
			gq := u.mad(tx, t.TN, p0)
			f.op("add.u32 %s, %s, %d", gq, gq, j)
			skip := f.label("skip")
			f.outside(u, gm, mpg, skip)
			f.outside(u, gq, pixels, skip)
			m := x.mad(g, mpg, x.ext(gm))
			ob, oq := x.divmod(x.ext(gq), ohw)
			o := x.mad(x.mad(ob, c.M, m), ohw, oq)
			if err := f.convEpilogue(c, x, acc[i][j], m, o, out, bias, res); err != nil {
				return nil, err
			}
			f.place(skip)
		}
	}
	if done != "" {
		f.place(done)
	}
	l := Launch{Grid: [3]int{max(CeilDiv(pixels, t.BN), 1), max(CeilDiv(mpg, t.BM), 1), c.Groups}, Block: [3]int{threads, 1, 1}}
	return f.kernel(l), nil
}

// tileFMA accumulates one staged K step: thread (tx, ty) of K group grp
// multiplies its TM rows of As by its TN columns of Bs over the group's
// BK rows of the step; lda and ldb are the staged tiles' row lengths.
func (f *fn) tileFMA(t GemmTile, acc [][]string, as, bs, tx, ty, grp string, lda, ldb int) {
	aRow, bCol := f.reg(cB32), f.reg(cB32)
	f.op("mov.u32 %s, %s", aRow, as)
	f.op("mad.lo.u32 %s, %s, %d, %s", aRow, ty, 4*t.TM, aRow)
	f.op("mad.lo.u32 %s, %s, %d, %s", aRow, grp, 4*t.BK*lda, aRow)
	f.op("mov.u32 %s, %s", bCol, bs)
	f.op("mad.lo.u32 %s, %s, %d, %s", bCol, tx, 4*t.TN, bCol)
	f.op("mad.lo.u32 %s, %s, %d, %s", bCol, grp, 4*t.BK*ldb, bCol)
	for kk := range t.BK {
		av := f.sharedRow(aRow, 4*kk*lda, t.TM, t.TM%4 == 0)
		bv := f.sharedRow(bCol, 4*kk*ldb, t.TN, t.TN%4 == 0)
		for i := range t.TM {
			for j := range t.TN {
				f.op("fma.rn.f32 %s, %s, %s, %s", acc[i][j], av[i], bv[j], acc[i][j])
			}
		}
	}
}
