package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Operand is an input of an elementwise kernel (kdesc.Operand): its
// dtype and its element strides over the output's dims.
type Operand = kdesc.Operand

// Instr is one op of an elementwise chain (kdesc.Instr).
type Instr = kdesc.Instr

// Elementwise is a fused chain evaluated once per output element
// (kdesc.Elementwise). Buffers: out, in0, in1, ...
type Elementwise = kdesc.Elementwise

// EmitElementwise writes an Elementwise: one thread per element, inputs
// read through their broadcast strides (collapsed with the output's).
func EmitElementwise(e *Elementwise) (*Kernel, error) {
	n := product(e.Shape)
	if err := checkCount(e.Name, n); err != nil {
		return nil, err
	}
	if len(e.Body) == 0 {
		return nil, fmt.Errorf("msl: %s: empty chain", e.Name)
	}
	ot, err := Storage(e.Out)
	if err != nil {
		return nil, err
	}
	bufs := []Buffer{{Name: "out", Type: ot}}
	strides := make([][]int, len(e.Inputs))
	dts := make([]tensor.DType, 0, len(e.Inputs)+len(e.Body))
	for i, in := range e.Inputs {
		t, err := Storage(in.DType)
		if err != nil {
			return nil, err
		}
		if len(in.Strides) != len(e.Shape) {
			return nil, fmt.Errorf("msl: %s: input %d has %d strides for rank %d", e.Name, i, len(in.Strides), len(e.Shape))
		}
		bufs = append(bufs, Buffer{Name: fmt.Sprintf("in%d", i), Type: t, Const: true})
		strides[i] = in.Strides
		dts = append(dts, in.DType)
	}
	var b strings.Builder
	b.WriteString(sig(e.Name, bufs, attrGid))
	b.WriteString("{\n")
	fmt.Fprintf(&b, "    if (gid >= %du) { return; }\n", n)
	if len(e.Inputs) > 0 {
		dims, st := Collapse(e.Shape, strides...)
		outs := make([]string, len(e.Inputs))
		for i := range outs {
			outs[i] = fmt.Sprintf("o%d", i)
		}
		b.WriteString(offsetCode("    ", "gid", dims, st, outs, nil))
		for i, in := range e.Inputs {
			fmt.Fprintf(&b, "    %s v%d = %s;\n", compute(in.DType), i, load(in.DType, fmt.Sprintf("in%d[o%d]", i, i)))
		}
	}
	for j, in := range e.Body {
		id := len(e.Inputs) + j
		args := make([]string, len(in.Args))
		adt := make([]tensor.DType, len(in.Args))
		for k, a := range in.Args {
			if a < 0 || a >= id {
				return nil, fmt.Errorf("msl: %s: instruction %d reads value %d", e.Name, j, a)
			}
			args[k] = fmt.Sprintf("v%d", a)
			adt[k] = dts[a]
		}
		if in.Op == graph.OpPow && len(args) == 2 && !isFloat(adt[0]) {
			b.WriteString(intPow(fmt.Sprintf("v%d", id), compute(in.DType), args[0], args[1]))
			dts = append(dts, in.DType)
			continue
		}
		x, err := opExpr(in, args, adt)
		if err != nil {
			return nil, fmt.Errorf("msl: %s: %w", e.Name, err)
		}
		fmt.Fprintf(&b, "    %s v%d = %s;\n", compute(in.DType), id, x)
		dts = append(dts, in.DType)
	}
	last := len(dts) - 1
	if dts[last] != e.Out {
		return nil, fmt.Errorf("msl: %s: chain yields %v, out is %v", e.Name, dts[last], e.Out)
	}
	fmt.Fprintf(&b, "    out[gid] = %s;\n}\n", store(e.Out, fmt.Sprintf("v%d", last)))
	g, t := linear(n)
	return &Kernel{Name: e.Name, Source: b.String(), Buffers: bufs, Groups: g, Threads: t, Variant: "elementwise"}, nil
}

// opExpr is the MSL expression of one instruction on its argument values.
func opExpr(in Instr, a []string, dt []tensor.DType) (string, error) {
	want := 1
	switch {
	case in.Op.IsBinary():
		want = 2
	case in.Op == graph.OpWhere:
		want = 3
	}
	if len(a) != want {
		return "", fmt.Errorf("%v takes %d arguments, got %d", in.Op, want, len(a))
	}
	x := a[0]
	fl := isFloat(dt[0])
	ct := compute(in.DType)
	switch in.Op {
	case graph.OpNeg:
		return "-" + x, nil
	case graph.OpAbs:
		return "abs(" + x + ")", nil
	case graph.OpRelu:
		return fmt.Sprintf("max(%s, %s(0))", x, ct), nil
	case graph.OpClip:
		lo, hi := x, ""
		if fl {
			lo = fmt.Sprintf("min(max(%s, %s), %s)", x, flit(in.Attrs.Min), flit(in.Attrs.Max))
			return lo, nil
		}
		// ints: compare in float so ±Inf bounds mean "none"
		hi = fmt.Sprintf("(float(%s) < %s ? %s(ceil(%s)) : (float(%s) > %s ? %s(floor(%s)) : %s))",
			x, flit(in.Attrs.Min), ct, flit(in.Attrs.Min), x, flit(in.Attrs.Max), ct, flit(in.Attrs.Max), x)
		return hi, nil
	case graph.OpNot:
		return "!" + x, nil
	case graph.OpCast:
		if in.DType == tensor.Bool {
			return "(" + x + " != 0)", nil
		}
		return ct + "(" + x + ")", nil
	case graph.OpWhere:
		return fmt.Sprintf("(%s ? %s : %s)", a[0], a[1], a[2]), nil
	}
	if in.Op.IsBinary() {
		y := a[1]
		switch in.Op {
		case graph.OpAdd:
			return x + " + " + y, nil
		case graph.OpSub:
			return x + " - " + y, nil
		case graph.OpMul:
			return x + " * " + y, nil
		case graph.OpDiv:
			return x + " / " + y, nil
		case graph.OpPow:
			if !fl {
				return "", fmt.Errorf("integer %v is a statement (intPow)", in.Op)
			}
			// precise: fast::pow is undefined for x < 0 (Pow(x, 2) of a
			// centred value) and skips pow's special cases.
			return "precise::pow(" + x + ", " + y + ")", nil
		case graph.OpMax:
			return "max(" + x + ", " + y + ")", nil
		case graph.OpMin:
			return "min(" + x + ", " + y + ")", nil
		case graph.OpEqual:
			return "(" + x + " == " + y + ")", nil
		case graph.OpLess:
			return "(" + x + " < " + y + ")", nil
		case graph.OpLessOrEqual:
			return "(" + x + " <= " + y + ")", nil
		case graph.OpGreater:
			return "(" + x + " > " + y + ")", nil
		case graph.OpGreaterOrEqual:
			return "(" + x + " >= " + y + ")", nil
		case graph.OpAnd:
			return "(" + x + " && " + y + ")", nil
		case graph.OpOr:
			return "(" + x + " || " + y + ")", nil
		case graph.OpXor:
			return "(" + x + " != " + y + ")", nil
		case graph.OpMod, graph.OpFmod:
			return remainder(in.Op, x, y, fl), nil
		case graph.OpShiftLeft: // u8 in uint: shifts past 7 give 0, as C++ leaves them undefined
			return fmt.Sprintf("(%s < 8u ? (%s << %s) & 255u : 0u)", y, x, y), nil
		case graph.OpShiftRight:
			return fmt.Sprintf("(%s < 8u ? %s >> %s : 0u)", y, x, y), nil
		}
	}
	if in.Op == graph.OpSign {
		// Not MSL's sign, which maps NaN to 0.
		if fl {
			return fmt.Sprintf("(%s > 0.0f ? 1.0f : (%s < 0.0f ? -1.0f : %s))", x, x, x), nil
		}
		return fmt.Sprintf("%s(int(%s > 0) - int(%s < 0))", ct, x, x), nil
	}
	if !fl {
		return "", fmt.Errorf("%v on %v is not supported on Metal", in.Op, dt[0])
	}
	return floatUnary(in.Op, x, in.Attrs)
}

// remainder is Fmod (the dividend's sign, C's % and fmod) or Mod (the
// divisor's sign: the C remainder plus y where the signs differ). Integer
// MinInt % -1 is undefined in C++, so y == -1 gives 0 directly (never
// true for uint).
func remainder(op graph.Op, x, y string, fl bool) string {
	r := fmt.Sprintf("(%s == -1 ? 0 : %s %% %s)", y, x, y)
	zero := "0"
	if fl {
		r, zero = fmt.Sprintf("fmod(%s, %s)", x, y), fmt.Sprintf("copysign(0.0f, %s)", y)
	}
	if op == graph.OpFmod {
		return r
	}
	return fmt.Sprintf("(%s != 0 && ((%s < 0) != (%s < 0)) ? %s + %s : (%s == 0 ? %s : %s))", r, r, y, r, y, r, zero, r)
}

// floatUnary is a float-only unary op; Act of GEMM/conv epilogues uses it.
func floatUnary(op graph.Op, x string, at graph.Attrs) (string, error) {
	switch op {
	case graph.OpExp:
		return "exp(" + x + ")", nil
	case graph.OpLog:
		return "log(" + x + ")", nil
	case graph.OpSqrt:
		return "sqrt(" + x + ")", nil
	case graph.OpRsqrt:
		return "rsqrt(" + x + ")", nil
	case graph.OpReciprocal:
		return "(1.0f / " + x + ")", nil
	case graph.OpTanh:
		return "precise::tanh(" + x + ")", nil
	case graph.OpSigmoid:
		return "(1.0f / (1.0f + exp(-" + x + ")))", nil
	case graph.OpRelu:
		return "max(" + x + ", 0.0f)", nil
	case graph.OpLeakyRelu:
		return fmt.Sprintf("(%s >= 0.0f ? %s : %s * %s)", x, x, flit(at.Alpha), x), nil
	case graph.OpClip: // as opExpr's float Clip
		return fmt.Sprintf("min(max(%s, %s), %s)", x, flit(at.Min), flit(at.Max)), nil
	case graph.OpGelu:
		return fmt.Sprintf("(0.5f * %s * (1.0f + kiln_erf(%s * 0.70710678f)))", x, x), nil
	case graph.OpGeluTanh:
		return fmt.Sprintf("(0.5f * %s * (1.0f + precise::tanh(0.7978845608f * (%s + 0.044715f * %s * %s * %s))))", x, x, x, x, x), nil
	case graph.OpSilu:
		return "(" + x + " / (1.0f + exp(-" + x + ")))", nil
	case graph.OpErf:
		return "kiln_erf(" + x + ")", nil
	case graph.OpSin:
		return "precise::sin(" + x + ")", nil
	case graph.OpCos:
		return "precise::cos(" + x + ")", nil
	case graph.OpFloor:
		return "floor(" + x + ")", nil
	case graph.OpCeil:
		return "ceil(" + x + ")", nil
	case graph.OpRound:
		return "rint(" + x + ")", nil // half to even
	case graph.OpElu:
		// Selects, not max/min: MSL's max(NaN, 0) is 0.
		return fmt.Sprintf("(%s > 0.0f ? %s : %s * kiln_expm1(%s))", x, x, flit(at.Alpha), x), nil
	case graph.OpSelu:
		return fmt.Sprintf("(%s > 0.0f ? %s * %s : %s * kiln_expm1(%s))", x, flit(at.Beta), x,
			flit(at.Alpha*at.Beta), x), nil
	case graph.OpCelu:
		// max(0,x) + min(0, α(e^(x/α)-1)) is x for x >= 0 and the
		// exponential side below, for either sign of α.
		return fmt.Sprintf("(%s >= 0.0f ? %s : %s * kiln_expm1(%s / %s))", x, x, flit(at.Alpha), x, flit(at.Alpha)), nil
	case graph.OpThresholdedRelu:
		return fmt.Sprintf("(%s > %s ? %s : 0.0f)", x, flit(at.Alpha), x), nil
	case graph.OpShrink:
		return fmt.Sprintf("(%s < -%s ? %s + %s : (%s > %s ? %s - %s : 0.0f))", x, flit(at.Alpha), x, flit(at.Beta),
			x, flit(at.Alpha), x, flit(at.Beta)), nil
	case graph.OpSoftplus:
		return fmt.Sprintf("(max(%s, 0.0f) + kiln_log1p(exp(-abs(%s))))", x, x), nil
	case graph.OpSoftsign:
		return fmt.Sprintf("(%s / (1.0f + abs(%s)))", x, x), nil
	case graph.OpTan, graph.OpSinh, graph.OpCosh, graph.OpAsin, graph.OpAcos, graph.OpAtan,
		graph.OpAsinh, graph.OpAcosh, graph.OpAtanh:
		return "precise::" + strings.ToLower(op.String()) + "(" + x + ")", nil
	}
	return "", fmt.Errorf("no MSL form for %v", op)
}
