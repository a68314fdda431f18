package ptx

import (
	"strings"

	"github.com/kilnml/kiln/tensor"
)

// mmaDim is one dimension of an operand tile: m or n (base is the
// block's first index) or k (isK: the base is the current k step).
type mmaDim struct {
	base             string
	isK              bool
	ext, lim, stride int // tile extent, matrix extent, element stride
}

// mmaOperand is one input of the tensor-core GEMM. Its tile is kept in
// shared memory as rows along the operand's contiguous dimension (outer
// × inner elements), so the copy from global memory is a straight row
// copy; each row is padded by 8 elements, which keeps it 16-byte aligned
// and puts ldmatrix's eight row reads in distinct banks. ldmatrix
// transposes when the rows run along m or n rather than k.
type mmaOperand struct {
	dt           tensor.DType
	ptr, off     string // global pointer, batch offset (elements)
	isA          bool
	kInner       bool // rows run along k
	outer, inner mmaDim
	vec          bool   // 16-byte cp.async rows (zero-filled past the edge)
	sh           string // shared array: two stages
}

func newMmaOperand(dt tensor.DType, ptr, off string, isA bool, mn0 string, mnExt, kExt, mnLim, kLim, mnStride, kStride int,
	batchOK bool) *mmaOperand {
	o := &mmaOperand{dt: dt, ptr: ptr, off: off, isA: isA, kInner: kStride == 1 || mnStride != 1}
	mn := mmaDim{base: mn0, ext: mnExt, lim: mnLim, stride: mnStride}
	k := mmaDim{isK: true, ext: kExt, lim: kLim, stride: kStride}
	o.outer, o.inner = k, mn
	if o.kInner {
		o.outer, o.inner = mn, k
	}
	// A 16-byte chunk of 8 elements must start 16-byte aligned: rows
	// contiguous and every other stride a multiple of 8 elements.
	o.vec = o.inner.stride == 1 && o.outer.stride%8 == 0 && batchOK
	return o
}

// multiplesOf reports whether every stride is a multiple of m.
func multiplesOf(st []int, m int) bool {
	for _, s := range st {
		if s%m != 0 {
			return false
		}
	}
	return true
}

// ld is the padded row length in elements.
func (o *mmaOperand) ld() int { return o.inner.ext + 8 }

// stageBytes is the size of one stage of the tile.
func (o *mmaOperand) stageBytes() int { return 2 * o.outer.ext * o.ld() }

// stage copies the tile at k step k0 into the stage at byte offset cur,
// with zeros past the matrix's edges.
func (o *mmaOperand) stage(f *fn, x ix, tid string, threads int, k0, cur string) {
	base := func(d mmaDim) string {
		if d.isK {
			return k0
		}
		return d.base
	}
	sh := f.reg(cB32)
	f.op("mov.u32 %s, %s", sh, o.sh)
	f.op("add.u32 %s, %s, %s", sh, sh, cur)
	per := 1 // elements per copy
	if o.vec {
		per = 8
	}
	rowItems := o.inner.ext / per
	n := o.outer.ext * rowItems
	for l := range CeilDiv(n, threads) {
		e := f.reg(cB32)
		f.op("add.u32 %s, %s, %d", e, tid, l*threads)
		done := f.label("st")
		if (l+1)*threads > n {
			p := f.reg(cPred)
			f.op("setp.ge.u32 %s, %s, %d", p, e, n)
			f.op("@%s bra %s", p, done)
		}
		oi, ii := f.reg(cB32), f.reg(cB32)
		f.op("div.u32 %s, %s, %d", oi, e, rowItems)
		f.op("rem.u32 %s, %s, %d", ii, e, rowItems)
		if per > 1 {
			f.op("shl.b32 %s, %s, 3", ii, ii)
		}
		gO, gI := f.reg(cB32), f.reg(cB32)
		f.op("add.u32 %s, %s, %s", gO, base(o.outer), oi)
		f.op("add.u32 %s, %s, %s", gI, base(o.inner), ii)
		idx := x.mad(x.ext(gO), o.outer.stride, o.off)
		idx = x.mad(x.ext(gI), o.inner.stride, idx)
		sa := f.reg(cB32)
		f.op("mad.lo.u32 %s, %s, %d, %s", sa, oi, o.ld(), ii)
		f.op("mad.lo.u32 %s, %s, 2, %s", sa, sa, sh)
		in := f.reg(cPred)
		f.op("setp.lt.u32 %s, %s, %d", in, gO, o.outer.lim)
		if o.vec {
			// Bytes of the row chunk inside the matrix; cp.async zero-fills
			// the rest, and a chunk wholly outside reads from the base.
			nb := f.reg(cB32)
			f.op("sub.s32 %s, %d, %s", nb, o.inner.lim, gI)
			f.op("min.s32 %s, %s, 8", nb, nb)
			f.op("max.s32 %s, %s, 0", nb, nb)
			f.op("shl.b32 %s, %s, 1", nb, nb)
			f.op("selp.u32 %s, %s, 0, %s", nb, nb, in)
			f.op("setp.ne.u32 %s, %s, 0", in, nb)
			safe := x.reg()
			f.op("selp.%s %s, %s, 0, %s", x.t(), safe, idx, in)
			f.op("cp.async.cg.shared.global [%s], [%s], 16, %s", sa, x.addr(o.ptr, safe, 2), nb)
		} else {
			q := f.reg(cPred)
			f.op("setp.lt.u32 %s, %s, %d", q, gI, o.inner.lim)
			f.op("and.pred %s, %s, %s", in, in, q)
			h := f.reg(cB16)
			f.op("mov.b16 %s, 0", h)
			f.op("@%s ld.global.b16 %s, [%s]", in, h, x.addr(o.ptr, idx, 2))
			f.op("st.shared.b16 [%s], %s", sa, h)
		}
		f.place(done)
	}
}

// laneAddr is the shared address (stage 0) of the row this lane gives
// ldmatrix .x4 for the warp's first 16×16 piece (at m or n offset wmn0):
// lanes 8j..8j+7 address matrix j. For A the matrices are (m 0-7, k
// 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15), giving
// a0..a3; for B, (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n
// 8-15, k 8-15), giving b0, b1 of two adjacent n8 products.
func (o *mmaOperand) laneAddr(f *fn, lane, wmn0 string) string {
	j, r := f.reg(cB32), f.reg(cB32)
	f.op("shr.u32 %s, %s, 3", j, lane)
	f.op("and.b32 %s, %s, 7", r, lane)
	mnP, kP := f.reg(cB32), f.reg(cB32)
	lo, hi := mnP, kP
	if !o.isA {
		lo, hi = kP, mnP
	}
	f.op("and.b32 %s, %s, 1", lo, j)
	f.op("shr.u32 %s, %s, 1", hi, j)
	mn := f.reg(cB32)
	f.op("mad.lo.u32 %s, %s, 8, %s", mn, mnP, wmn0)
	row, e := f.reg(cB32), f.reg(cB32)
	if o.kInner { // row m/n, column k
		f.op("add.u32 %s, %s, %s", row, mn, r)
		f.op("shl.b32 %s, %s, 3", e, kP)
		f.op("mad.lo.u32 %s, %s, %d, %s", e, row, o.ld(), e)
	} else { // row k, column m/n
		f.op("mad.lo.u32 %s, %s, 8, %s", row, kP, r)
		f.op("mad.lo.u32 %s, %s, %d, %s", e, row, o.ld(), mn)
	}
	a := f.reg(cB32)
	f.op("mov.u32 %s, %s", a, o.sh)
	f.op("mad.lo.u32 %s, %s, 2, %s", a, e, a)
	return a
}

// ldmatrix loads the fragments of the 16×16 piece at k step kk and m or
// n step idx (16 wide) from the lane's row address base.
func (o *mmaOperand) ldmatrix(f *fn, base string, kk, idx int) []string {
	off := 2 * (16*idx*o.ld() + 16*kk)
	tr := ""
	if !o.kInner {
		off, tr = 2*(16*kk*o.ld()+16*idx), ".trans"
	}
	r := []string{f.reg(cB32), f.reg(cB32), f.reg(cB32), f.reg(cB32)}
	f.op("ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%s}, [%s+%d]", tr, strings.Join(r, ", "), base, off)
	return r
}
