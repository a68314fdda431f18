package ptxemu

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// Float arithmetic against math/big: the exact result of each operation
// rounded by big.Float to the format's precision in the instruction's
// mode is what the ISA specifies for .rn/.rz/.rm/.rp ("IEEE 754
// compliant", fma "computed without loss of precision in the
// intermediate product and addition, rounded once").

var bigModes = map[string]big.RoundingMode{"rn": big.ToNearestEven, "rz": big.ToZero, "rm": big.ToNegativeInf, "rp": big.ToPositiveInf}

// randNormal draws a float with prec significant bits and a binary
// exponent in [-e, e].
func randNormal(r *rand.Rand, prec, e int) float64 {
	m := 1 + float64(r.Uint64()>>(64-uint(prec-1)))/math.Ldexp(1, prec-1)
	x := math.Ldexp(m, r.IntN(2*e+1)-e)
	if r.IntN(2) == 0 {
		x = -x
	}
	return x
}

// exactOp computes op on float64 inputs exactly (Quo and Sqrt round
// directly at the target precision) and rounds to prec bits in mode.
func exactOp(op string, prec uint, mode big.RoundingMode, a, b, c float64) *big.Float {
	x := func(v float64) *big.Float { return new(big.Float).SetPrec(2000).SetFloat64(v) }
	z := new(big.Float).SetPrec(2000)
	out := new(big.Float).SetPrec(prec).SetMode(mode)
	switch op {
	case "add":
		z.Add(x(a), x(b))
	case "sub":
		z.Sub(x(a), x(b))
	case "mul":
		z.Mul(x(a), x(b))
	case "fma":
		z.Add(new(big.Float).SetPrec(2000).Mul(x(a), x(b)), x(c))
	case "div":
		return out.Quo(x(a), x(b))
	case "sqrt":
		if prec == 53 {
			return out.Sqrt(x(math.Abs(a))) // round to nearest only
		}
		return sqrtDirected(x(math.Abs(a)), prec, mode)
	case "rcp":
		return out.Quo(x(1), x(a))
	}
	return out.Set(z)
}

// sqrtDirected rounds √x to f32 (prec 24) in mode. big.Float.Sqrt ignores
// the rounding mode, so the two neighbours of its result are told apart
// by squaring them exactly.
func sqrtDirected(x *big.Float, prec uint, mode big.RoundingMode) *big.Float {
	c := new(big.Float).SetPrec(prec).Sqrt(x)
	sq := func(y *big.Float) int { return new(big.Float).SetPrec(2000).Mul(y, y).Cmp(x) }
	step := func(y *big.Float, up bool) *big.Float {
		f, _ := y.Float64()
		g := math.Nextafter32(float32(f), float32(math.Inf(map[bool]int{true: 1, false: -1}[up])))
		return new(big.Float).SetPrec(prec).SetFloat64(float64(g))
	}
	lo, hi := c, c
	switch sq(c) {
	case 0:
		return c
	case 1:
		lo = step(c, false)
	default:
		hi = step(c, true)
	}
	if mode == big.ToPositiveInf {
		return hi
	}
	if mode == big.ToNearestEven {
		return c
	}
	return lo
}

func TestFloatRoundingF32(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, op := range []string{"add", "sub", "mul", "fma", "div", "sqrt", "rcp"} {
		for mode, bm := range bigModes {
			var rows [][]uint64
			var want []float32
			for range 300 {
				a, b, c := randNormal(r, 24, 20), randNormal(r, 24, 20), randNormal(r, 24, 40)
				if op == "sqrt" {
					a = math.Abs(a)
				}
				if r.IntN(4) == 0 { // near-cancellation
					c = -a * b * (1 + math.Ldexp(float64(r.IntN(9)-4), -20))
					c = float64(float32(c))
					b2 := -a
					if op == "add" || op == "sub" {
						b = b2 * (1 + math.Ldexp(1, -20))
						b = float64(float32(b))
					}
				}
				w, _ := exactOp(op, 24, bm, a, b, c).Float32()
				want = append(want, w)
				rows = append(rows, []uint64{uint64(math.Float32bits(float32(a))), uint64(math.Float32bits(float32(b))), uint64(math.Float32bits(float32(c)))})
			}
			opcode, nsrc := op+"."+mode+".f32", 2
			switch op {
			case "fma":
				nsrc = 3
			case "sqrt", "rcp":
				nsrc = 1
			}
			for i := range rows {
				rows[i] = rows[i][:nsrc]
			}
			got := opN(t, opcode, "f32", rep("f32", nsrc), rows)
			for i, g := range got {
				if uint32(g) != math.Float32bits(want[i]) {
					t.Errorf("%s %v = %v (%#08x), want %v (%#08x)", opcode, rows[i], math.Float32frombits(uint32(g)), g, want[i], math.Float32bits(want[i]))
					break
				}
			}
		}
	}
}

// TestFloatRoundingF64: f64 arithmetic in every mode (fma and sqrt: to
// nearest; the ISA allows fma.f64 all modes, the emulator .rn).
func TestFloatRoundingF64(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, op := range []string{"add", "sub", "mul", "div", "rcp", "fma", "sqrt"} {
		for mode, bm := range bigModes {
			if (op == "fma" || op == "sqrt") && mode != "rn" {
				continue
			}
			n := map[string]int{"fma": 3, "sqrt": 1, "rcp": 1}[op]
			if n == 0 {
				n = 2
			}
			var rows [][]uint64
			var want []float64
			for range 200 {
				a, b, c := randNormal(r, 53, 200), randNormal(r, 53, 200), randNormal(r, 53, 400)
				if op == "sqrt" {
					a = math.Abs(a)
				}
				w, _ := exactOp(op, 53, bm, a, b, c).Float64()
				want = append(want, w)
				rows = append(rows, []uint64{math.Float64bits(a), math.Float64bits(b), math.Float64bits(c)}[:n])
			}
			opcode := op + "." + mode + ".f64"
			got := opN(t, opcode, "f64", rep("f64", n), rows)
			for i, g := range got {
				if g != math.Float64bits(want[i]) {
					t.Errorf("%s %#x = %v, want %v", opcode, rows[i], math.Float64frombits(g), want[i])
					break
				}
			}
		}
	}
}

// TestFmaSingleRounding: a case where rounding a·b+c to f64 first and
// then to f32 lands on an f32 tie and rounds the wrong way. Exact value
// 1 + 2^-23 + 2^-24 - 2^-70: just below the tie, so 1 + 2^-23.
func TestFmaSingleRounding(t *testing.T) {
	a := uint64(0x39800001) // 2^-12·(1+2^-23)
	b := uint64(0x397FFFFE) // 2^-12·(1-2^-23)
	c := uint64(0x3F800001) // 1+2^-23
	if got := op1(t, "fma.rn.f32", "f32", rep("f32", 3), a, b, c); got != 0x3F800001 {
		t.Errorf("fma.rn.f32 = %#08x, want 0x3F800001", got)
	}
	// Double rounding through float64 would give 1+2^-22.
	if dbl := math.Float32bits(float32(math.FMA(float64(math.Float32frombits(uint32(a))), float64(math.Float32frombits(uint32(b))), float64(math.Float32frombits(uint32(c)))))); dbl != 0x3F800002 {
		t.Fatalf("the case no longer double-rounds (%#08x); pick another", dbl)
	}
	// mad.rn.f32 is the same fused operation.
	if got := op1(t, "mad.rn.f32", "f32", rep("f32", 3), a, b, c); got != 0x3F800001 {
		t.Errorf("mad.rn.f32 = %#08x, want 0x3F800001", got)
	}
}

func TestFloatRoundingHalf(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	enc := map[string]func(float64) uint64{
		"f16":  func(x float64) uint64 { return uint64(tensor.F32ToF16(float32(x))) },
		"bf16": func(x float64) uint64 { return uint64(tensor.F32ToBF16(float32(x))) },
	}
	for _, h := range []struct {
		ty         string
		prec, e    int
		minN, maxF float64
	}{{"f16", 11, 4, 0x1p-14, 65504}, {"bf16", 8, 20, 0x1p-126, 3e38}} {
		for _, op := range []string{"add", "mul", "fma"} {
			var rows [][]uint64
			var want []float64
			for len(rows) < 300 {
				a, b, c := randNormal(r, h.prec, h.e), randNormal(r, h.prec, h.e), randNormal(r, h.prec, h.e)
				w, _ := exactOp(op, uint(h.prec), big.ToNearestEven, a, b, c).Float64()
				if math.Abs(w) < h.minN || math.Abs(w) > h.maxF {
					continue // big.Float has no subnormals or overflow
				}
				want = append(want, w)
				rows = append(rows, []uint64{enc[h.ty](a), enc[h.ty](b), enc[h.ty](c)})
			}
			n := 2
			if op == "fma" {
				n = 3
			}
			for i := range rows {
				rows[i] = rows[i][:n]
			}
			opcode := op + ".rn." + h.ty
			got := opN(t, opcode, "b16", rep("b16", n), rows)
			for i, g := range got {
				if g != enc[h.ty](want[i]) {
					t.Errorf("%s %v = %#04x, want %#04x (%v)", opcode, rows[i], g, enc[h.ty](want[i]), want[i])
					break
				}
			}
		}
	}
}

func f32b(x float32) uint64 { return uint64(math.Float32bits(x)) }

// TestFloatSpecials: .ftz, .sat, canonical NaN and IEEE specials.
func TestFloatSpecials(t *testing.T) {
	sub := f32b(1e-40) // subnormal
	negSub := f32b(-1e-40)
	cases := []struct {
		op   string
		a, b uint64
		want uint64
	}{
		{"add.f32", sub, 0, sub},                               // subnormals kept by default
		{"add.ftz.f32", sub, 0, 0},                             // flushed input
		{"add.ftz.f32", negSub, 0x80000000, 0x80000000},        // -0 + -0
		{"mul.ftz.f32", f32b(-1e-20), f32b(1e-20), 0x80000000}, // subnormal result flushed, sign kept
		{"mul.rn.f32", f32b(-1e-20), f32b(1e-20), f32b(-1e-20 * 1e-20)},
		{"add.sat.f32", f32b(0.75), f32b(0.5), f32b(1)},
		{"add.sat.f32", f32b(-0.75), f32b(0.5), 0},
		{"add.sat.f32", 0x7FC00001, f32b(1), 0},      // NaN saturates to +0
		{"add.f32", 0x7FC00001, f32b(1), 0x7FFFFFFF}, // canonical NaN
		{"sub.f32", f32b(float32(math.Inf(1))), f32b(float32(math.Inf(1))), 0x7FFFFFFF},
		{"mul.f32", f32b(0), f32b(float32(math.Inf(-1))), 0x7FFFFFFF},
		{"mul.rz.f32", f32b(3e38), f32b(10), 0x7F7FFFFF}, // rz overflow: largest finite
		{"mul.rm.f32", f32b(3e38), f32b(10), 0x7F7FFFFF}, // toward -Inf: largest finite
		{"mul.rp.f32", f32b(3e38), f32b(10), 0x7F800000}, // toward +Inf: +Inf
		{"mul.rm.f32", f32b(-3e38), f32b(10), 0xFF800000},
		{"mul.rp.f32", f32b(-3e38), f32b(10), 0xFF7FFFFF},
		{"div.rn.f32", f32b(1), f32b(0), 0x7F800000},
		{"div.rn.f32", f32b(-1), f32b(0), 0xFF800000},
		{"div.rn.f32", f32b(0), f32b(0), 0x7FFFFFFF},
		{"copysign.f32", f32b(-1), f32b(2), f32b(-2)}, // d = |b| with the sign of a
		{"copysign.f32", f32b(1), f32b(-2), f32b(2)},
	}
	for _, c := range cases {
		if got := op1(t, c.op, "f32", rep("f32", 2), c.a, c.b); got != c.want {
			t.Errorf("%s %#08x, %#08x = %#08x, want %#08x", c.op, c.a, c.b, got, c.want)
		}
	}
	// div.approx returns 0 for 2^126 < |b| < 2^128 (finite a).
	if got := op1(t, "div.approx.f32", "f32", rep("f32", 2), f32b(1), f32b(0x1.8p127)); got != 0 {
		t.Errorf("div.approx.f32 1/1.5·2^127 = %#08x, want 0", got)
	}
	if got := op1(t, "div.full.f32", "f32", rep("f32", 2), f32b(1), f32b(0x1.8p127)); math.Float32frombits(uint32(got)) == 0 {
		t.Errorf("div.full.f32 1/1.5·2^127 flushed to 0; div.full covers the full range")
	}
	// neg/abs only flip the sign bit, NaN payload included.
	if got := op1(t, "neg.f32", "f32", []string{"f32"}, 0x7FC00001); got != 0xFFC00001 {
		t.Errorf("neg.f32 NaN = %#08x", got)
	}
	if got := op1(t, "abs.ftz.f32", "f32", []string{"f32"}, negSub); got != 0 {
		t.Errorf("abs.ftz.f32 -subnormal = %#08x, want 0", got)
	}
}

// TestMinMax follows the ISA: a NaN operand is ignored unless .NaN, two
// NaNs give the canonical NaN, and -0 is less than +0.
func TestMinMax(t *testing.T) {
	nan, one, two := uint64(0x7FC00001), f32b(1), f32b(2)
	pz, nz := f32b(0), uint64(0x80000000)
	cases := []struct {
		op      string
		a, b, w uint64
	}{
		{"min.f32", one, two, one}, {"max.f32", one, two, two},
		{"min.f32", nan, two, two}, {"max.f32", one, nan, one},
		{"min.f32", nan, nan, 0x7FFFFFFF},
		{"min.NaN.f32", nan, two, 0x7FFFFFFF}, {"max.NaN.f32", one, nan, 0x7FFFFFFF},
		{"max.NaN.f32", one, two, two},
		{"min.f32", pz, nz, nz}, {"min.f32", nz, pz, nz},
		{"max.f32", nz, pz, pz}, {"max.f32", pz, nz, pz},
		{"min.ftz.f32", f32b(-1e-40), pz, nz},
	}
	for _, c := range cases {
		if got := op1(t, c.op, "f32", rep("f32", 2), c.a, c.b); got != c.w {
			t.Errorf("%s %#08x, %#08x = %#08x, want %#08x", c.op, c.a, c.b, got, c.w)
		}
	}
}

// TestSetpFloat checks every comparison against the ISA's tables:
// eq..ge are false when either operand is NaN (ne included), equ..geu
// true, num/nan test for NaN.
func TestSetpFloat(t *testing.T) {
	nan := uint64(0x7FC00000)
	pairs := [][2]uint64{{f32b(1), f32b(2)}, {f32b(2), f32b(2)}, {f32b(3), f32b(2)}, {nan, f32b(2)}, {f32b(2), nan}, {f32b(0), 0x80000000}}
	type rel struct{ lt, eq, gt, un bool }
	rels := []rel{{lt: true}, {eq: true}, {gt: true}, {un: true}, {un: true}, {eq: true}}
	table := map[string]func(r rel) bool{
		"eq": func(r rel) bool { return r.eq }, "ne": func(r rel) bool { return r.lt || r.gt },
		"lt": func(r rel) bool { return r.lt }, "le": func(r rel) bool { return r.lt || r.eq },
		"gt": func(r rel) bool { return r.gt }, "ge": func(r rel) bool { return r.gt || r.eq },
		"equ": func(r rel) bool { return r.un || r.eq }, "neu": func(r rel) bool { return r.un || r.lt || r.gt },
		"ltu": func(r rel) bool { return r.un || r.lt }, "leu": func(r rel) bool { return r.un || r.lt || r.eq },
		"gtu": func(r rel) bool { return r.un || r.gt }, "geu": func(r rel) bool { return r.un || r.gt || r.eq },
		"num": func(r rel) bool { return !r.un }, "nan": func(r rel) bool { return r.un },
	}
	for cmp, f := range table {
		rows := make([][]uint64, len(pairs))
		for i, p := range pairs {
			rows[i] = []uint64{p[0], p[1]}
		}
		got := opN(t, "setp."+cmp+".f32", "pred", rep("f32", 2), rows)
		for i, g := range got {
			if (g != 0) != f(rels[i]) {
				t.Errorf("setp.%s.f32 %#08x, %#08x = %v, want %v", cmp, pairs[i][0], pairs[i][1], g != 0, f(rels[i]))
			}
		}
	}
}

// TestApprox: ApproxExact rounds correctly; ApproxBound moves results by
// at most the ISA's error bound, and does move them.
func TestApprox(t *testing.T) {
	xs := []float32{0.25, -3.5, 10.1, 0.0013, 7, -0.5}
	var rows [][]uint64
	for _, x := range xs {
		rows = append(rows, []uint64{f32b(x)})
	}
	cases := []struct {
		op  string
		ref func(float64) float64
		in  func(float32) bool
		rel float64
	}{
		{"ex2.approx.f32", math.Exp2, func(float32) bool { return true }, 0x1p-22},
		{"ex2.approx.ftz.f32", math.Exp2, func(float32) bool { return true }, 0x1p-22},
		{"rsqrt.approx.f32", func(x float64) float64 { return 1 / math.Sqrt(x) }, func(x float32) bool { return x > 0 }, math.Exp2(-22.9)},
		{"sqrt.approx.f32", math.Sqrt, func(x float32) bool { return x > 0 }, 0x1p-23},
		{"rcp.approx.f32", func(x float64) float64 { return 1 / x }, func(float32) bool { return true }, 0x1p-23},
		{"lg2.approx.f32", math.Log2, func(x float32) bool { return x > 2 || (x > 0 && x < 0.5) }, 0x1p-22},
		{"tanh.approx.f32", math.Tanh, func(float32) bool { return true }, math.Exp2(-10.98)},
	}
	for _, c := range cases {
		exact := opN(t, c.op, "f32", []string{"f32"}, rows)
		bound, err := opNErr(t, c.op, "f32", []string{"f32"}, rows, Options{Approx: ApproxBound})
		if err != nil {
			t.Fatal(err)
		}
		moved := false
		for i, x := range xs {
			if !c.in(x) {
				continue
			}
			ref := c.ref(float64(x))
			e := math.Float32frombits(uint32(exact[i]))
			if e != float32(ref) {
				t.Errorf("%s(%v) exact = %v, want %v", c.op, x, e, float32(ref))
			}
			b := float64(math.Float32frombits(uint32(bound[i])))
			if approx.Far(b, ref, c.rel*math.Abs(ref)*1.0001+math.Abs(ref)*0x1p-24) {
				t.Errorf("%s(%v) bound = %v, %g from %v (bound %g)", c.op, x, b, math.Abs(b-ref)/math.Abs(ref), ref, c.rel)
			}
			moved = moved || float32(b) != e
		}
		if !moved {
			t.Errorf("%s: ApproxBound changed nothing", c.op)
		}
	}
}
