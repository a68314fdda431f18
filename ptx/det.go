package ptx

import (
	"fmt"

	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Det is a kdesc.Det with the kernel's block.
type Det struct {
	kdesc.Det
	Block int // threads per block (0: 64)
}

// maxDetM bounds the matrices the kernel takes: each thread holds its
// matrix in local memory as f64 (8 KiB at 32×32).
const maxDetM = 32

// EmitDet writes one thread per matrix: the CPU reference's pivoted LU
// (ops/detect.go) in f64 in the thread's local memory, operation by
// operation (the first row with the largest |pivot|, a zero pivot ending
// with 0, a row swap negating, each update a·(row) subtracted with its
// own roundings: .rn, no fma), the product of the pivots rounded once
// to the dtype. A determinant is sequential in its columns; matrices are
// the parallel axis, so this suits batches of small ones. Parameters:
// out, x.
func EmitDet(d *Det) (*Kernel, error) {
	if d.DType != tensor.F64 {
		if err := floatOnly(d.DType); err != nil {
			return nil, err
		}
	}
	m := d.M
	if m < 1 || m > maxDetM {
		return nil, fmt.Errorf("ptx: %s: %d×%d matrices; the kernel takes 1 to %d", d.Name, m, m, maxDetM)
	}
	f := newFn(d.Name)
	out, xp := f.ptrParam("out"), f.ptrParam("x")
	x := ix{f: f, wide: d.Count*m*m > 1<<30}
	f.decls = append(f.decls, fmt.Sprintf(".local .align 8 .f64 detA[%d];", m*m))
	la := f.reg(cB64)
	f.op("mov.u64 %s, detA", la)
	at := func(i string) string { // the local address of a[i] (i u32)
		a := f.reg(cB64)
		f.op("mad.wide.u32 %s, %s, 8, %s", a, i, la)
		return a
	}
	ld := func(i string) string {
		v := f.reg(cF64)
		f.op("ld.local.f64 %s, [%s]", v, at(i))
		return v
	}
	u := ix{f: f}
	v := newPoolValue(d.DType)
	es := d.DType.Size()
	k, stride := f.globalIndex(x.wide)
	f.gridLoop(x, k, stride, d.Count, func() {
		base := x.mad(k, m*m, x.imm(0))
		f.count(u, m*m, func(i string) {
			val := v.toF64(f, v.load(f, x.addr(xp, x.mad(x.ext(i), 1, base), es)))
			f.op("st.local.f64 [%s], %s", at(i), val)
		})
		det := f.reg(cF64)
		f.op("mov.f64 %s, %s", det, d64(1))
		end := f.label("det")
		f.count(u, m, func(col string) {
			diag := u.mad(col, m+1, u.imm(0)) // col·m + col
			p, best := f.reg(cB32), f.reg(cF64)
			f.op("mov.u32 %s, %s", p, col)
			f.op("abs.f64 %s, %s", best, ld(diag))
			next := f.reg(cB32)
			f.op("add.u32 %s, %s, 1", next, col)
			f.countFrom(next, m, func(r string) {
				a, gt := f.reg(cF64), f.reg(cPred)
				f.op("abs.f64 %s, %s", a, ld(u.mad(r, m, col)))
				f.op("setp.gt.f64 %s, %s, %s", gt, a, best)
				f.op("@%s mov.u32 %s, %s", gt, p, r)
				f.op("@%s mov.f64 %s, %s", gt, best, a)
			})
			zero := f.reg(cPred)
			f.op("setp.eq.f64 %s, %s, %s", zero, ld(u.mad(p, m, col)), d64(0))
			f.op("@%s mov.f64 %s, %s", zero, det, d64(0))
			f.op("@%s bra %s", zero, end)
			same, noSwap := f.reg(cPred), f.label("noswap")
			f.op("setp.eq.u32 %s, %s, %s", same, p, col)
			f.op("@%s bra %s", same, noSwap)
			f.count(u, m, func(j string) {
				ia, ib := u.mad(col, m, j), u.mad(p, m, j)
				va, vb := ld(ia), ld(ib)
				f.op("st.local.f64 [%s], %s", at(ia), vb)
				f.op("st.local.f64 [%s], %s", at(ib), va)
			})
			f.op("neg.f64 %s, %s", det, det)
			f.place(noSwap)
			piv := ld(diag)
			f.op("mul.rn.f64 %s, %s, %s", det, det, piv)
			f.countFrom(next, m, func(r string) {
				fct := f.reg(cF64)
				f.op("div.rn.f64 %s, %s, %s", fct, ld(u.mad(r, m, col)), piv)
				f.countFrom(col, m, func(j string) {
					ir := u.mad(r, m, j)
					t := f.reg(cF64)
					f.op("mul.rn.f64 %s, %s, %s", t, fct, ld(u.mad(col, m, j)))
					f.op("sub.rn.f64 %s, %s, %s", t, ld(ir), t)
					f.op("st.local.f64 [%s], %s", at(ir), t)
				})
			})
		})
		f.place(end)
		f.storeFromF64(d.DType, x.addr(out, k, es), det)
	})
	block := d.Block
	if block == 0 {
		block = 64
	}
	return f.kernel(GridStride(d.Count, block, maxGridStrideBlocks)), nil
}

// countFrom emits `for k := from; k < n; k++ { body(k) }` for a u32
// register from (copied, so the loop leaves it as it was).
func (f *fn) countFrom(from string, n int, body func(k string)) {
	k := f.reg(cB32)
	f.op("mov.u32 %s, %s", k, from)
	f.gridLoop(ix{f: f}, k, ix{f: f}.imm(1), n, func() { body(k) })
}
