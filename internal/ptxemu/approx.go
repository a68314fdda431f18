package ptxemu

import (
	"fmt"
	"math"
)

// errBound is the largest error the ISA allows an approximate
// instruction: some ulps, a relative error, or an absolute one.
type errBound struct {
	ulps     int
	rel, abs float64
}

func ulps(n int) errBound { return errBound{ulps: n} }

// Error bounds of the approximate f32 instructions, from the PTX ISA.
var (
	boundEx2   = errBound{rel: 0x1p-22}           // 2 ulp
	boundLg2   = errBound{abs: math.Exp2(-22.6)}  // on [0.5, 2]; relative 2^-22 elsewhere
	boundRsqrt = errBound{rel: math.Exp2(-22.9)}  // full range
	boundSqrt  = errBound{rel: 0x1p-23}           // sqrt.approx
	boundSin   = errBound{abs: math.Exp2(-20.9)}  // sin/cos.approx on [-π, π]
	boundTanh  = errBound{rel: math.Exp2(-10.98)} // tanh.approx
)

// approx encodes an approximate f32 result: y itself (correctly
// rounded) under ApproxExact, or y moved by the bound under ApproxBound,
// in a direction hashed from the inputs.
func (th *thread) approx(y float32, eb errBound, a, b float64, ftz bool) uint64 {
	if th.b.l.opts.Approx == ApproxBound && y == y && !math.IsInf(float64(y), 0) {
		h := (math.Float64bits(a)*0x9E3779B97F4A7C15 ^ math.Float64bits(b)*0xC2B2AE3D27D4EB4F) >> 63
		dir := float32(1)
		if h == 1 {
			dir = -1
		}
		switch {
		case eb.ulps > 0:
			for range eb.ulps {
				y = math.Nextafter32(y, dir*float32(math.Inf(1)))
			}
		case eb.rel > 0:
			y = float32(float64(y) * (1 + float64(dir)*eb.rel))
		default:
			y = float32(float64(y) + float64(dir)*eb.abs)
		}
	}
	if ftz {
		y = ftz32(y)
	}
	return f32bits(y)
}

// decApprox: ex2, lg2, rsqrt, sqrt, rcp, sin, cos, tanh.
func decApprox(d *dec) error {
	t, err := d.typ1(tF32, tF64)
	if err != nil {
		return err
	}
	in := d.in
	in.t = t
	in.approx = d.has("approx")
	in.rnd = d.rounding()
	in.ftz = d.has("ftz")
	op := d.base
	ieee := op == "sqrt" || op == "rcp"
	switch {
	case in.approx && in.rnd != rNone, !in.approx && !ieee, !in.approx && in.rnd == rNone:
		return fmt.Errorf("%s needs exactly one of .approx%s", op, map[bool]string{true: " or a rounding modifier", false: ""}[ieee])
	case t == tF64 && !(op == "sqrt" || op == "rcp" || op == "rsqrt"):
		return fmt.Errorf("%s takes .f32", op)
	case t == tF64 && in.approx && op == "sqrt":
		return fmt.Errorf("sqrt.approx takes .f32")
	case t == tF64 && in.approx && !in.ftz && op == "rcp":
		return fmt.Errorf("rcp.approx.f64 needs .ftz")
	case t == tF64 && in.ftz && !(in.approx && op == "rcp") && op != "rsqrt":
		return fmt.Errorf(".ftz does not apply to %s.f64", op)
	}
	if err := d.operands(t, t); err != nil {
		return err
	}
	if t == tF64 {
		in.fn = func(th *thread, in *inst) {
			x := fval(th.v(&in.op[1]), tF64)
			var y float64
			switch {
			case op == "rsqrt":
				y = 1 / math.Sqrt(x)
			case op == "sqrt":
				s := math.Sqrt(x)
				y = s
				if s != 0 && s == s && !math.IsInf(s, 0) {
					y = directed64(s, math.FMA(-s, s, x), in.rnd)
				}
			default:
				q := 1 / x
				y = q
				if q != 0 && q == q && !math.IsInf(q, 0) {
					y = directed64(q, math.FMA(-q, x, 1)/x, in.rnd)
				}
			}
			th.put(&in.op[0], f64bits(y))
		}
		return nil
	}
	in.fn = func(th *thread, in *inst) {
		x := floatIn(th, &in.op[1], tF32, in.ftz)
		if !in.approx { // sqrt.rnd, rcp.rnd: IEEE
			var y float64
			if op == "sqrt" {
				y = oddSqrt(x)
			} else {
				y = oddDiv(1, x)
			}
			th.put(&in.op[0], floatOut(y, tF32, in.rnd, false, in.ftz))
			return
		}
		var y float64
		eb := ulps(1)
		switch op {
		case "ex2":
			y, eb = math.Exp2(x), boundEx2
		case "lg2":
			y, eb = math.Log2(x), boundLg2
			if x < 0.5 || x > 2 {
				eb = errBound{rel: 0x1p-22}
			}
		case "rsqrt":
			y, eb = 1/math.Sqrt(x), boundRsqrt
		case "sqrt":
			y, eb = math.Sqrt(x), boundSqrt
		case "rcp":
			y = 1 / x
		case "sin":
			y, eb = math.Sin(x), boundSin
		case "cos":
			y, eb = math.Cos(x), boundSin
		case "tanh":
			y, eb = math.Tanh(x), boundTanh
		}
		th.put(&in.op[0], th.approx(float32(roundTo(y, f32Fmt, rRN)), eb, x, 0, in.ftz))
	}
	return nil
}
