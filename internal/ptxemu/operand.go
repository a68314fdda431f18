package ptxemu

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// opKind says what an operand is.
type opKind uint8

const (
	okNone    opKind = iota
	okReg            // a register
	okImm            // an immediate, resolved to the operand's type
	okSpecial        // a special register (%tid.x, ...)
	okSym            // a symbol's address as a value (mov.u32 %r, As)
	okAddr           // [base+offset]
	okVec            // {a, b, ...}
	okSink           // _
	okLabel          // a branch target
)

// operand is a decoded operand.
type operand struct {
	kind opKind
	reg  int32   // okReg; okAddr base register (-1 for none)
	imm  uint64  // okImm bits; okAddr offset
	neg  bool    // !p
	sp   special // okSpecial
	sym  *symbol // okSym; okAddr base symbol
	vec  []int32 // okVec registers (-1 for a sink)
	lit  literal // okImm before resolution
	text string
}

// special registers.
type special uint8

const (
	spTidX special = iota
	spTidY
	spTidZ
	spNtidX
	spNtidY
	spNtidZ
	spCtaidX
	spCtaidY
	spCtaidZ
	spNctaidX
	spNctaidY
	spNctaidZ
	spLaneid
	spWarpid
	spNwarpid
	spLanemaskEq
	spLanemaskLt
	spLanemaskLe
	spLanemaskGt
	spLanemaskGe
)

var specials = map[string]special{
	"%tid.x": spTidX, "%tid.y": spTidY, "%tid.z": spTidZ,
	"%ntid.x": spNtidX, "%ntid.y": spNtidY, "%ntid.z": spNtidZ,
	"%ctaid.x": spCtaidX, "%ctaid.y": spCtaidY, "%ctaid.z": spCtaidZ,
	"%nctaid.x": spNctaidX, "%nctaid.y": spNctaidY, "%nctaid.z": spNctaidZ,
	"%laneid": spLaneid, "%warpid": spWarpid, "%nwarpid": spNwarpid,
	"%lanemask_eq": spLanemaskEq, "%lanemask_lt": spLanemaskLt, "%lanemask_le": spLanemaskLe,
	"%lanemask_gt": spLanemaskGt, "%lanemask_ge": spLanemaskGe,
}

// literal is an immediate as written: an integer, or a float given as
// f32 bits (0f), f64 bits (0d) or a decimal.
type literal struct {
	isFloat bool
	is32    bool   // 0f form: bits are f32 bits
	bits    uint64 // integer two's complement, or float bits
}

func parseLiteral(s string) (literal, bool) {
	switch {
	case s == "WARP_SZ":
		return literal{bits: 32}, true
	case len(s) == 10 && (strings.HasPrefix(s, "0f") || strings.HasPrefix(s, "0F")):
		v, err := strconv.ParseUint(s[2:], 16, 32)
		return literal{isFloat: true, is32: true, bits: v}, err == nil
	case len(s) == 18 && (strings.HasPrefix(s, "0d") || strings.HasPrefix(s, "0D")):
		v, err := strconv.ParseUint(s[2:], 16, 64)
		return literal{isFloat: true, bits: v}, err == nil
	}
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimSuffix(strings.TrimPrefix(s, "-"), "U")
	if body == "" {
		return literal{}, false
	}
	var v uint64
	var err error
	switch {
	case strings.HasPrefix(body, "0x") || strings.HasPrefix(body, "0X"):
		v, err = strconv.ParseUint(body[2:], 16, 64)
	case strings.HasPrefix(body, "0b") || strings.HasPrefix(body, "0B"):
		v, err = strconv.ParseUint(body[2:], 2, 64)
	case strings.ContainsAny(body, ".eE"):
		f, ferr := strconv.ParseFloat(body, 64)
		if neg {
			f = -f
		}
		return literal{isFloat: true, bits: math.Float64bits(f)}, ferr == nil
	case len(body) > 1 && body[0] == '0':
		v, err = strconv.ParseUint(body[1:], 8, 64)
	default:
		v, err = strconv.ParseUint(body, 10, 64)
	}
	if err != nil {
		return literal{}, false
	}
	if neg {
		v = -v
	}
	return literal{bits: v}, true
}

// resolve converts a literal to the bits of an operand of type t.
func (l literal) resolve(t typ) (uint64, error) {
	switch {
	case t.isInt():
		if l.isFloat {
			return 0, fmt.Errorf("float literal for a %v operand", t)
		}
		return l.bits & mask(t.bits()), nil
	case t == tF32:
		switch {
		case !l.isFloat:
			return 0, fmt.Errorf("integer literal for an .f32 operand (write 0fXXXXXXXX)")
		case l.is32:
			return l.bits, nil
		}
		return uint64(math.Float32bits(float32(math.Float64frombits(l.bits)))), nil
	case t == tF64:
		switch {
		case !l.isFloat:
			return 0, fmt.Errorf("integer literal for an .f64 operand (write 0dXXXXXXXXXXXXXXXX)")
		case l.is32:
			return math.Float64bits(float64(math.Float32frombits(uint32(l.bits)))), nil
		}
		return l.bits, nil
	}
	return 0, fmt.Errorf("no immediates for %v operands", t)
}

// splitOperands splits at top-level commas (not inside {} or []).
func splitOperands(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" || len(out) > 0 {
		out = append(out, t)
	}
	return out
}

// parseOperand decodes one operand's text against the kernel's names.
func (k *kernel) parseOperand(s string) (operand, error) {
	o := operand{text: s, reg: -1}
	switch {
	case s == "_":
		o.kind = okSink
		return o, nil
	case strings.HasPrefix(s, "{"):
		if !strings.HasSuffix(s, "}") {
			return o, fmt.Errorf("bad vector operand %q", s)
		}
		o.kind = okVec
		for _, e := range strings.Split(s[1:len(s)-1], ",") {
			e = strings.TrimSpace(e)
			if e == "_" {
				o.vec = append(o.vec, -1)
				continue
			}
			r, ok := k.regIdx[e]
			if !ok {
				return o, fmt.Errorf("vector element %q is not a register", e)
			}
			o.vec = append(o.vec, r)
		}
		return o, nil
	case strings.HasPrefix(s, "["):
		if !strings.HasSuffix(s, "]") {
			return o, fmt.Errorf("bad address %q", s)
		}
		return k.parseAddr(o, strings.ReplaceAll(s[1:len(s)-1], " ", ""))
	case strings.HasPrefix(s, "!"):
		r, ok := k.regIdx[strings.TrimSpace(s[1:])]
		if !ok || !k.regs[r].pred {
			return o, fmt.Errorf("%q: ! applies to predicate registers only", s)
		}
		o.kind, o.reg, o.neg = okReg, r, true
		return o, nil
	}
	if r, ok := k.regIdx[s]; ok {
		o.kind, o.reg = okReg, r
		return o, nil
	}
	if sp, ok := specials[s]; ok {
		o.kind, o.sp = okSpecial, sp
		return o, nil
	}
	if sym, ok := k.syms[s]; ok {
		o.kind, o.sym = okSym, sym
		return o, nil
	}
	if _, ok := k.labels[s]; ok {
		o.kind = okLabel
		return o, nil
	}
	if l, ok := parseLiteral(s); ok {
		o.kind, o.lit = okImm, l
		return o, nil
	}
	if strings.HasPrefix(s, "%") {
		return o, fmt.Errorf("unknown register %q", s)
	}
	return o, fmt.Errorf("unknown name %q", s)
}

// parseAddr decodes base[+offset] inside brackets.
func (k *kernel) parseAddr(o operand, e string) (operand, error) {
	o.kind = okAddr
	base, off := e, ""
	if i := strings.IndexAny(e[1:], "+-"); i >= 0 {
		base, off = e[:i+1], e[i+1:]
	}
	if l, ok := parseLiteral(base); ok && off == "" {
		if l.isFloat {
			return o, fmt.Errorf("float address %q", e)
		}
		o.imm = l.bits
		return o, nil
	}
	if r, ok := k.regIdx[base]; ok {
		if k.regs[r].pred || k.regs[r].bits < 32 {
			return o, fmt.Errorf("address register %s must be 32 or 64 bits", base)
		}
		o.reg = r
	} else if sym, ok := k.syms[base]; ok {
		o.sym = sym
	} else if sym, ok := k.params[base]; ok {
		o.sym = sym
	} else {
		return o, fmt.Errorf("unknown address base %q", base)
	}
	if off != "" {
		off = strings.TrimPrefix(off, "+")
		l, ok := parseLiteral(off)
		if !ok || l.isFloat {
			return o, fmt.Errorf("bad address offset %q", off)
		}
		o.imm = l.bits
	}
	return o, nil
}
