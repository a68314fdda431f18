package ptx

// attentionValues emits phase 3 of EmitAttention: out[d] = inv·Σ_j
// p_j·V[j][d] over the probabilities p in shared `scores`. When the
// block holds G ≥ 2 copies of the DV features, each copy sums every G-th
// key and the copies' partial sums meet in shared memory, so a row's
// serial chain of value loads is SK/G long instead of SK; the key loop
// is also unrolled four ways to keep four loads in flight per thread.
// n is the count of keys, an immediate or a register.
func (f *fn) attentionValues(a *Attention, x ix, block int, tid, n, scores, v, vBase, out, oBase, inv string) {
	es := a.DType.Size()
	groups := 1
	if a.DV > 0 && a.DV <= block/2 && block%a.DV == 0 {
		groups = block / a.DV
	}
	// sum accumulates the keys j0, j0+step, ... of feature d into acc.
	sum := func(d, j0 string, step int, acc string) {
		dx := x.ext(d)
		f.unrolledLoopU32(j0, n, step, 4, func(j string) {
			p := f.reg(cF32)
			f.op("ld.shared.f32 %s, [%s]", p, f.sharedAddr(scores, j))
			va := x.mad(x.ext(j), a.DV, vBase)
			f.op("add.%s %s, %s, %s", x.t(), va, va, dx)
			f.op("fma.rn.f32 %s, %s, %s, %s", acc, p, f.load(a.DType, x.addr(v, va, es)), acc)
		})
	}
	store := func(d, acc string) {
		f.op("mul.f32 %s, %s, %s", acc, acc, inv)
		oa := x.reg()
		f.op("add.%s %s, %s, %s", x.t(), oa, oBase, x.ext(d))
		f.store(a.DType, x.addr(out, oa, es), acc)
	}
	if groups == 1 {
		f.loopU32(tid, a.DV, block, func(d string) {
			acc := f.f32(0)
			sum(d, "0", 1, acc)
			store(d, acc)
		})
		return
	}
	part := f.shared("part", ".f32", (groups-1)*a.DV, 4)
	u := ix{f: f}
	grp, d := u.divmod(tid, a.DV)
	acc := f.f32(0)
	sum(d, grp, groups, acc)
	// Groups 1.. leave their sums at part[(grp-1)·DV + d]; group 0 adds
	// them in order and stores.
	lead := f.reg(cPred)
	f.op("setp.eq.u32 %s, %s, 0", lead, grp)
	own := f.reg(cB32)
	f.op("sub.u32 %s, %s, 1", own, grp)
	f.op("mad.lo.u32 %s, %s, %d, %s", own, own, a.DV, d)
	parked, done := f.label("parked"), f.label("stored")
	f.op("@%s bra %s", lead, parked)
	f.op("st.shared.f32 [%s], %s", f.sharedAddr(part, own), acc)
	f.place(parked)
	f.op("bar.sync 0")
	f.op("@!%s bra %s", lead, done)
	first := f.sharedAddr(part, d)
	for g := range groups - 1 {
		pv := f.reg(cF32)
		f.op("ld.shared.f32 %s, [%s+%d]", pv, first, 4*g*a.DV)
		f.op("add.rn.f32 %s, %s, %s", acc, acc, pv)
	}
	store(d, acc)
	f.place(done)
}

// unrolledLoopU32 is loopU32 with the body written `unroll` times per
// trip (j, j+step, ...) while all of them are below n (an immediate or
// a register), then a plain loop for the rest.
func (f *fn) unrolledLoopU32(start, n string, step, unroll int, body func(j string)) {
	j := f.reg(cB32)
	f.op("mov.u32 %s, %s", j, start)
	top, tail := f.label("unr"), f.label("unrtail")
	p, last := f.reg(cPred), f.reg(cB32)
	f.place(top)
	f.op("add.u32 %s, %s, %d", last, j, (unroll-1)*step)
	f.op("setp.ge.u32 %s, %s, %s", p, last, n)
	f.op("@%s bra %s", p, tail)
	for r := range unroll {
		jr := f.reg(cB32)
		f.op("add.u32 %s, %s, %d", jr, j, r*step)
		body(jr)
	}
	f.op("add.u32 %s, %s, %d", j, j, unroll*step)
	f.op("bra.uni %s", top)
	f.place(tail)
	f.loopU32To(j, n, step, body)
}
