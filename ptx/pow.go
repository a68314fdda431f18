package ptx

// Pow. Floats: |x|^y = exp(y·log|x|), with log|x| carried in two f32
// (hi + lo, to about 2^-31 relative) so that y·log|x|, up to ±104 before
// exp saturates, keeps the precision exp needs (the emulator sweep sees
// 4e-7 relative at worst); then math.Pow's special cases (signs for odd
// integer y, NaN for a negative base and a non-integer exponent, 1 for
// y = 0 or x = 1). Integers: repeated squaring with wrapping products,
// as the reference kernel. A negative integer exponent, an error on the
// CPU, gives 1 here (the kernel cannot fail; like integer division by
// zero, the value is unspecified).

// pow emits x^y for two operands of one kind.
func (f *fn) pow(in Instr, x, y val) val {
	if x.k != kF32 {
		return val{f.intPow(in, x, y), x.k, in.DType}
	}
	return val{f.powF32(x.r, y.r), kF32, in.DType}
}

// powF32 is math.Pow in f32.
func (f *fn) powF32(x, y string) string {
	a := f.reg(cF32)
	f.op("abs.f32 %s, %s", a, x)
	hi, lo := f.logHiLo(a)
	// t = y·(hi + lo) as th + tl (the product's error is exact in an fma).
	th, tl := f.reg(cF32), f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", th, y, hi)
	nth := f.reg(cF32)
	f.op("neg.f32 %s, %s", nth, th)
	f.op("fma.rn.f32 %s, %s, %s, %s", tl, y, hi, nth)
	f.op("fma.rn.f32 %s, %s, %s, %s", tl, y, lo, tl)
	// Past ±128 (or for Inf and NaN) exp saturates and tl is noise or NaN.
	ath := f.reg(cF32)
	f.op("abs.f32 %s, %s", ath, th)
	p := f.reg(cPred)
	f.op("setp.lt.f32 %s, %s, 0f43000000", p, ath)
	f.op("selp.f32 %s, %s, 0f00000000, %s", tl, tl, p)
	// exp(th + tl) = exp(th)·(1 + tl); an infinite exp(th) stays.
	e := f.exp(th)
	mag := f.reg(cF32)
	f.op("fma.rn.f32 %s, %s, %s, %s", mag, e, tl, e)
	f.op("setp.eq.f32 %s, %s, 0f7F800000", p, e)
	f.op("selp.f32 %s, %s, %s, %s", mag, e, mag, p)
	return f.powSpecials(x, y, mag)
}

// logHiLo is log(a) for a ≥ 0 as hi + lo. With a = 2^e·m, u = m-1 and
// log(m) = 2·atanh(u/(m+1)) = 2f + f³·Q(f²): f is computed as fh + fl
// (m+1 and the quotient's remainder exact through Fast2Sum and fma), the
// large terms e·ln2Hi + 2fh are summed exactly, and the small ones go
// to lo. log(0) = -Inf, log(Inf) = Inf, NaN stays (lo is then unused).
func (f *fn) logHiLo(a string) (hi, lo string) {
	m, ef := f.logSplit(a)
	u, vh, d, vl := f.reg(cF32), f.reg(cF32), f.reg(cF32), f.reg(cF32)
	f.op("sub.f32 %s, %s, 0f3F800000", u, m) // exact (Sterbenz)
	f.op("add.f32 %s, %s, 0f3F800000", vh, m)
	f.op("sub.f32 %s, %s, 0f40000000", d, vh)
	f.op("sub.f32 %s, %s, %s", vl, u, d) // m+1 = vh + vl exactly
	fh, nf, rho, fl := f.reg(cF32), f.reg(cF32), f.reg(cF32), f.reg(cF32)
	f.op("div.rn.f32 %s, %s, %s", fh, u, vh)
	f.op("neg.f32 %s, %s", nf, fh)
	f.op("fma.rn.f32 %s, %s, %s, %s", rho, nf, vh, u)
	f.op("fma.rn.f32 %s, %s, %s, %s", rho, nf, vl, rho)
	f.op("div.rn.f32 %s, %s, %s", fl, rho, vh)
	s, tail := f.reg(cF32), f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", s, fh, fh)
	f.op("mul.f32 %s, %s, %s", tail, s, f.horner(logCoeffs[1:], s))
	f.op("mul.f32 %s, %s, %s", tail, tail, fh)
	// Fast2Sum of e·ln2Hi (exact, and the larger unless e = 0) and 2fh.
	big, two, z, err := f.reg(cF32), f.reg(cF32), f.reg(cF32), f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", big, ef, fimm(ln2Hi))
	f.op("add.f32 %s, %s, %s", two, fh, fh)
	hi = f.reg(cF32)
	f.op("add.f32 %s, %s, %s", hi, big, two)
	f.op("sub.f32 %s, %s, %s", z, hi, big)
	f.op("sub.f32 %s, %s, %s", err, two, z)
	lo = f.reg(cF32)
	f.op("fma.rn.f32 %s, %s, 0f40000000, %s", lo, fl, tail)
	f.op("fma.rn.f32 %s, %s, %s, %s", lo, ef, fimm(ln2Lo), lo)
	f.op("add.f32 %s, %s, %s", lo, lo, err)
	// Renormalise (Fast2Sum again): |lo| ≤ ulp(hi)/2, so the product's
	// low part stays small enough for exp's first-order correction.
	h2, lo2 := f.reg(cF32), f.reg(cF32)
	f.op("add.f32 %s, %s, %s", h2, hi, lo)
	f.op("sub.f32 %s, %s, %s", z, h2, hi)
	f.op("sub.f32 %s, %s, %s", lo2, lo, z)
	hi, lo = h2, lo2
	q := f.reg(cPred)
	f.op("setp.eq.f32 %s, %s, 0f7F800000", q, a)
	f.op("selp.f32 %s, 0f7F800000, %s, %s", hi, hi, q)
	f.op("setp.eq.f32 %s, %s, 0f00000000", q, a)
	f.op("selp.f32 %s, 0fFF800000, %s, %s", hi, hi, q)
	return f.keepNaN(a, hi), lo
}

// powSpecials gives |x|^y (mag) its sign and math.Pow's special cases.
func (f *fn) powSpecials(x, y, mag string) string {
	yt, half, ht := f.reg(cF32), f.reg(cF32), f.reg(cF32)
	f.op("cvt.rzi.f32.f32 %s, %s", yt, y)
	f.op("mul.f32 %s, %s, 0f3F000000", half, y)
	f.op("cvt.rzi.f32.f32 %s, %s", ht, half)
	isInt, odd := f.reg(cPred), f.reg(cPred)
	f.op("setp.eq.f32 %s, %s, %s", isInt, yt, y) // ±Inf count as even integers
	f.op("setp.neu.f32 %s, %s, %s", odd, ht, half)
	f.op("and.pred %s, %s, %s", odd, odd, isInt)
	// A negative x (-0 and -Inf included) and an odd integer y: negative.
	xb := f.reg(cB32)
	f.op("mov.b32 %s, %s", xb, x)
	p, q := f.reg(cPred), f.reg(cPred)
	f.op("setp.lt.s32 %s, %s, 0", p, xb)
	f.op("and.pred %s, %s, %s", p, p, odd)
	r, nm := f.reg(cF32), f.reg(cF32)
	f.op("neg.f32 %s, %s", nm, mag)
	f.op("selp.f32 %s, %s, %s, %s", r, nm, mag, p)
	// A finite x < 0 and a non-integer y: NaN.
	f.op("setp.lt.f32 %s, %s, 0f00000000", p, x)
	f.op("setp.gt.f32 %s, %s, 0fFF800000", q, x)
	f.op("and.pred %s, %s, %s", p, p, q)
	f.op("not.pred %s, %s", q, isInt)
	f.op("and.pred %s, %s, %s", p, p, q)
	f.op("selp.f32 %s, 0f7FC00000, %s, %s", r, r, p)
	// y = 1: x itself.
	f.op("setp.eq.f32 %s, %s, 0f3F800000", p, y)
	f.op("selp.f32 %s, %s, %s, %s", r, x, r, p)
	// 1 for y = ±0, x = 1, and x = -1 with y = ±Inf, whatever else is NaN.
	ay := f.reg(cF32)
	f.op("abs.f32 %s, %s", ay, y)
	f.op("setp.eq.f32 %s, %s, 0f7F800000", p, ay)
	f.op("setp.eq.f32 %s, %s, 0fBF800000", q, x)
	f.op("and.pred %s, %s, %s", p, p, q)
	f.op("setp.eq.or.f32 %s, %s, 0f3F800000, %s", p, x, p)
	f.op("setp.eq.or.f32 %s, %s, 0f00000000, %s", p, y, p)
	f.op("selp.f32 %s, 0f3F800000, %s, %s", r, r, p)
	return r
}

// intPow is b^e by repeated squaring (a divergent loop of at most 31 or
// 63 steps); e ≤ 0 gives 1. I8/U8 results wrap to their byte.
func (f *fn) intPow(in Instr, b, e val) string {
	t, c, bt := selType(b.k), b.k.class(), "b32"
	if b.k == kS64 {
		bt = "b64"
	}
	r, bb, ee, bit := f.reg(c), f.reg(c), f.reg(c), f.reg(c)
	f.op("mov.%s %s, 1", t, r)
	f.op("mov.%s %s, %s", t, bb, b.r)
	f.op("mov.%s %s, %s", t, ee, e.r)
	loop, done := f.label("pow"), f.label("powend")
	p := f.reg(cPred)
	f.place(loop)
	f.op("setp.le.%s %s, %s, 0", t, p, ee)
	f.op("@%s bra %s", p, done)
	f.op("and.%s %s, %s, 1", bt, bit, ee)
	f.op("setp.ne.%s %s, %s, 0", t, p, bit)
	f.op("@%s mul.lo.%s %s, %s, %s", p, t, r, r, bb)
	f.op("mul.lo.%s %s, %s, %s", t, bb, bb, bb)
	f.op("shr.%s %s, %s, 1", t, ee, ee)
	f.op("bra %s", loop)
	f.place(done)
	return f.narrowWrap(in.DType, r)
}
