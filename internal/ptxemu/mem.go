package ptxemu

import (
	"fmt"
	"math"
	"strings"
)

// memQualifiers have no effect in a sequentially consistent emulation:
// cache operators, memory-order and scope qualifiers.
var memQualifiers = []string{"weak", "volatile", "relaxed", "acquire", "release", "cta", "gpu", "sys",
	"ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc"}

// space consumes a state-space modifier (none: generic).
func (d *dec) space() (space, error) {
	switch d.oneOf("global", "shared", "local", "param", "const") {
	case "global":
		return spGlobal, nil
	case "shared":
		return spShared, nil
	case "local":
		return spLocal, nil
	case "param":
		return spParam, nil
	case "const":
		return 0, fmt.Errorf("the .const space is not supported")
	}
	for _, w := range d.words {
		if strings.HasPrefix(w, "shared::") {
			return 0, fmt.Errorf(".%s is not supported (only a CTA's own shared memory)", w)
		}
	}
	return spGeneric, nil
}

// vecWidth consumes .v2/.v4.
func (d *dec) vecWidth() int {
	switch d.oneOf("v2", "v4") {
	case "v2":
		return 2
	case "v4":
		return 4
	}
	return 1
}

// symSpace resolves a generic access through a symbol to the symbol's
// own space (the generic address of a shared array is its window).
func symSpace(sp space, o operand) space {
	if sp == spGeneric && o.sym != nil {
		return o.sym.space
	}
	return sp
}

var ldstTypes = []typ{tB8, tB16, tB32, tB64, tU8, tU16, tU32, tU64, tS8, tS16, tS32, tS64, tF16, tBF16, tF32, tF64}

// decLdSt: ld{.space}{.vN}.type d, [a] and st{.space}{.vN}.type [a], s.
func decLdSt(d *dec) error {
	in := d.in
	sp, err := d.space()
	if err != nil {
		return err
	}
	d.ignore(memQualifiers...)
	in.vec = d.vecWidth()
	t, err := d.typ1(ldstTypes...)
	if err != nil {
		return err
	}
	in.t = t
	if err := d.nops(2); err != nil {
		return err
	}
	load := d.base == "ld"
	ai, vi := 1, 0
	if !load {
		ai, vi = 0, 1
		if sp == spParam {
			return fmt.Errorf("st.param is not supported (no calls)")
		}
	}
	a, err := d.addr(ai, sp)
	if err != nil {
		return err
	}
	in.sp = symSpace(sp, a)
	var v operand
	if in.vec > 1 {
		if v, err = d.k.parseOperand(d.raw[vi]); err != nil {
			return err
		}
		if v.kind != okVec || len(v.vec) != in.vec {
			return fmt.Errorf("a .v%d access needs %d registers in braces", in.vec, in.vec)
		}
		for _, r := range v.vec {
			if r >= 0 {
				if err := d.checkReg(r, t); err != nil {
					return err
				}
			} else if !load {
				return fmt.Errorf("a sink cannot be stored")
			}
		}
	} else if load {
		v, err = d.dst(vi, t)
	} else {
		v, err = d.src(vi, t)
	}
	if err != nil {
		return err
	}
	in.op = []operand{v, a}
	if load {
		in.fn = execLd
	} else {
		in.fn = execSt
	}
	return nil
}

func execLd(th *thread, in *inst) {
	size := in.t.bytes()
	b := th.mem(in.sp, th.ea(&in.op[1]), size*in.vec, size*in.vec, accRead)
	if in.vec == 1 {
		th.put(&in.op[0], extend(loadBits(b), in.t))
		return
	}
	for i, r := range in.op[0].vec {
		if r >= 0 {
			th.set(r, extend(loadBits(b[i*size:(i+1)*size]), in.t))
		}
	}
}

func execSt(th *thread, in *inst) {
	size := in.t.bytes()
	if in.vec == 1 {
		v := th.v(&in.op[0])
		storeBits(th.mem(in.sp, th.ea(&in.op[1]), size, size, accWrite), v)
		return
	}
	var vals [4]uint64
	for i, r := range in.op[0].vec {
		vals[i] = th.r(r)
	}
	b := th.mem(in.sp, th.ea(&in.op[1]), size*in.vec, size*in.vec, accWrite)
	for i := range in.vec {
		storeBits(b[i*size:(i+1)*size], vals[i])
	}
}

// decCvta: cvta{.to}.space.size d, a converts between a space's
// addresses and generic ones (the identity for global).
func decCvta(d *dec) error {
	to := d.has("to")
	sp, err := d.space()
	if err != nil {
		return err
	}
	if sp != spGlobal && sp != spShared && sp != spLocal {
		return fmt.Errorf("cvta needs .global, .shared or .local")
	}
	t, err := d.typ1(tU32, tU64)
	if err != nil {
		return err
	}
	if err := d.operands(t, t); err != nil {
		return err
	}
	var window uint64
	switch sp {
	case spShared:
		window = sharedWindow
	case spLocal:
		window = localWindow
	}
	m := mask(t.bits())
	d.in.fn = func(th *thread, in *inst) {
		a := th.v(&in.op[1])
		switch {
		case window == 0:
		case !to:
			a += window
		case a < window || a >= window+windowSize:
			th.fail("cvta.to.%v: %#x is not a generic %v address", sp, a, sp)
		default:
			a -= window
		}
		th.put(&in.op[0], a&m)
	}
	return nil
}

// decAtom: atom{.space}.op.type d, [a], b{, c} and red{.space}.op.type
// [a], b. Global atomics are serialised across parallel blocks; shared
// ones are exempt from the race detector.
func decAtom(d *dec) error {
	in := d.in
	sp, err := d.space()
	if err != nil {
		return err
	}
	if sp == spParam || sp == spLocal {
		return fmt.Errorf("atomics on %v memory", sp)
	}
	d.ignore(memQualifiers...)
	op := d.oneOf("and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max")
	if op == "" {
		return fmt.Errorf("%s needs an operation", d.base)
	}
	if d.has("noftz") {
		return fmt.Errorf(".noftz atomics are not supported")
	}
	allowed := map[string][]typ{
		"and": {tB32, tB64}, "or": {tB32, tB64}, "xor": {tB32, tB64}, "cas": {tB32, tB64}, "exch": {tB32, tB64},
		"add": {tU32, tS32, tU64, tF32, tF64}, "inc": {tU32}, "dec": {tU32},
		"min": {tU32, tS32, tU64, tS64}, "max": {tU32, tS32, tU64, tS64},
	}[op]
	t, err := d.typ1(allowed...)
	if err != nil {
		return err
	}
	in.t = t
	red := d.base == "red"
	n := 3
	if op == "cas" {
		n = 4
	}
	if red {
		n--
		if op == "cas" || op == "exch" {
			return fmt.Errorf("red.%s does not exist", op)
		}
	}
	if err := d.nops(n); err != nil {
		return err
	}
	ai := 1
	if red {
		ai = 0
		in.op = append(in.op, operand{kind: okSink, reg: -1})
	} else {
		o, err := d.dst(0, t)
		if err != nil {
			return err
		}
		in.op = append(in.op, o)
	}
	a, err := d.addr(ai, sp)
	if err != nil {
		return err
	}
	in.sp = symSpace(sp, a)
	in.op = append(in.op, a)
	for i := ai + 1; i < n; i++ {
		o, err := d.src(i, t)
		if err != nil {
			return err
		}
		in.op = append(in.op, o)
	}
	in.fn = func(th *thread, in *inst) { execAtom(th, in, op) }
	return nil
}

func execAtom(th *thread, in *inst, op string) {
	size := in.t.bytes()
	addr := th.ea(&in.op[1])
	if in.sp != spShared && !(addr >= sharedWindow && addr < sharedWindow+windowSize) {
		th.b.l.mem.atomic.Lock()
		defer th.b.l.mem.atomic.Unlock()
	}
	b := th.mem(in.sp, addr, size, size, accAtomic)
	w := in.t.bits()
	old := loadBits(b)
	x := th.v(&in.op[2]) & mask(w)
	var nv uint64
	switch op {
	case "and":
		nv = old & x
	case "or":
		nv = old | x
	case "xor":
		nv = old ^ x
	case "exch":
		nv = x
	case "cas":
		nv = old
		if old == x {
			nv = th.v(&in.op[3]) & mask(w)
		}
	case "inc":
		nv = old + 1
		if old >= x {
			nv = 0
		}
	case "dec":
		nv = old - 1
		if old == 0 || old > x {
			nv = x
		}
	case "add":
		switch in.t {
		case tF32: // flushes subnormal inputs and results, rounds to nearest
			nv = uint64(math.Float32bits(ftz32(ftz32(f32(old)) + ftz32(f32(x)))))
		case tF64:
			nv = math.Float64bits(math.Float64frombits(old) + math.Float64frombits(x))
		default:
			nv = old + x
		}
	default: // min, max
		less := old < x
		if in.t.signed() {
			less = sext(old, w) < sext(x, w)
		}
		nv = old
		if less == (op == "max") {
			nv = x
		}
	}
	storeBits(b, nv&mask(w))
	th.put(&in.op[0], old)
}

// decCpAsync: cp.async.{ca,cg}.shared.global [dst], [src], size{, srcsize}
// copies at once (completing early is a valid schedule); commit_group,
// wait_group and wait_all then have nothing to wait for.
func decCpAsync(d *dec) error {
	in := d.in
	if !d.has("async") {
		return fmt.Errorf("cp needs .async")
	}
	if d.has("commit_group") || d.has("wait_all") {
		in.fn = func(*thread, *inst) {}
		return d.nops(0)
	}
	if d.has("wait_group") {
		in.fn = func(*thread, *inst) {}
		return d.nops(1)
	}
	if d.oneOf("ca", "cg") == "" || !d.has("shared") || !d.has("global") || len(d.types) != 0 {
		return fmt.Errorf("cp.async needs .ca or .cg, .shared and .global")
	}
	if len(d.raw) != 3 && len(d.raw) != 4 {
		return fmt.Errorf("cp.async takes 3 or 4 operands")
	}
	dst, err := d.addr(0, spShared)
	if err != nil {
		return err
	}
	src, err := d.addr(1, spGlobal)
	if err != nil {
		return err
	}
	size, err := d.src(2, tU32)
	if err != nil || size.kind != okImm || (size.imm != 4 && size.imm != 8 && size.imm != 16) {
		return fmt.Errorf("cp.async size must be 4, 8 or 16")
	}
	in.op = []operand{dst, src, size}
	if len(d.raw) == 4 {
		n, err := d.src(3, tU32)
		if err != nil {
			return err
		}
		in.op = append(in.op, n)
	}
	in.fn = func(th *thread, in *inst) {
		n := int(in.op[2].imm)
		have := n
		if len(in.op) > 3 {
			have = int(uint32(th.v(&in.op[3])))
			if have > n {
				th.fail("cp.async source size %d exceeds the copy size %d", have, n)
			}
		}
		var buf [16]byte
		if have > 0 {
			copy(buf[:], th.mem(spGlobal, th.ea(&in.op[1]), have, min(have&-have, n), accRead))
		}
		copy(th.mem(spShared, th.ea(&in.op[0]), n, n, accWrite), buf[:n])
	}
	return nil
}

// memDecoders are the decoders of memory instructions.
var memDecoders = map[string]func(*dec) error{
	"ld": decLdSt, "st": decLdSt, "cvta": decCvta, "atom": decAtom, "red": decAtom, "cp": decCpAsync,
}
