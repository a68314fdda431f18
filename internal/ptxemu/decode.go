package ptxemu

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kilnml/kiln/ptx"
)

// decodeKernel declares the entry's parameters, registers, arrays and
// labels, then decodes every instruction.
func decodeKernel(r rawEntry, e *ptx.Entry) (*kernel, error) {
	k := &kernel{name: r.name, entry: e, params: map[string]*symbol{}, regIdx: map[string]int32{},
		syms: map[string]*symbol{}, labels: map[string]int{}}
	offs, _ := e.Layout()
	k.paramOff = offs
	for i, p := range e.Params {
		k.params[p.Name] = &symbol{name: p.Name, space: spParam, off: uint64(offs[i]), size: p.Bytes()}
	}
	var body []stmt
	for _, s := range r.body {
		var err error
		switch {
		case strings.HasSuffix(s.text, ":"):
			name := strings.TrimSuffix(s.text, ":")
			if _, dup := k.labels[name]; dup {
				err = fmt.Errorf("label %s defined twice", name)
			}
			k.labels[name] = len(body)
		case strings.HasPrefix(s.text, ".reg"):
			err = k.declareRegs(s.text)
		case strings.HasPrefix(s.text, ".shared"), strings.HasPrefix(s.text, ".extern .shared"):
			err = k.declareArray(s.text, spShared)
		case strings.HasPrefix(s.text, ".local"):
			err = k.declareArray(s.text, spLocal)
		case strings.HasPrefix(s.text, ".pragma"), strings.HasPrefix(s.text, ".loc"):
		case strings.HasPrefix(s.text, "."):
			err = fmt.Errorf("unsupported directive %q", s.text)
		default:
			body = append(body, s)
		}
		if err != nil {
			return nil, fmt.Errorf("emu: %s line %d: %w", r.name, s.line, err)
		}
	}
	if k.dynamic != nil {
		k.dynamic.off = uint64(alignUp(k.shared, k.dynamic.align))
	}
	k.regMask = make([]uint64, len(k.regs))
	for i, ri := range k.regs {
		k.regMask[i] = mask(ri.bits)
	}
	k.prog = make([]inst, len(body)+1)
	for i, s := range body {
		if err := k.decodeInst(&k.prog[i], s); err != nil {
			return nil, fmt.Errorf("emu: %s line %d: %q: %w", r.name, s.line, s.text, err)
		}
	}
	// Falling off the end of the body returns, as ret does.
	k.prog[len(body)] = inst{fn: execRet, line: r.line, text: "(end of body)", guard: -1}
	return k, nil
}

func alignUp(n, a int) int {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

// declareRegs handles `.reg .type name<N>` and `.reg .type a, b, c`.
func (k *kernel) declareRegs(text string) error {
	f := strings.Fields(strings.ReplaceAll(text, ",", " "))
	if len(f) < 3 {
		return fmt.Errorf("bad .reg declaration")
	}
	t, ok := typNames[strings.TrimPrefix(f[1], ".")]
	if !ok || t == tTF32 {
		return fmt.Errorf("unsupported register type %s", f[1])
	}
	for _, name := range f[2:] {
		if i := strings.IndexByte(name, '<'); i > 0 && strings.HasSuffix(name, ">") {
			n, err := strconv.Atoi(name[i+1 : len(name)-1])
			if err != nil || n < 0 || n > 1<<20 {
				return fmt.Errorf("bad register count in %s", name)
			}
			for j := range n {
				if err := k.addReg(fmt.Sprintf("%s%d", name[:i], j), t); err != nil {
					return err
				}
			}
			continue
		}
		if err := k.addReg(name, t); err != nil {
			return err
		}
	}
	return nil
}

func (k *kernel) addReg(name string, t typ) error {
	if _, dup := k.regIdx[name]; dup {
		return fmt.Errorf("register %s declared twice", name)
	}
	k.regIdx[name] = int32(len(k.regs))
	k.regs = append(k.regs, regInfo{name: name, bits: t.bits(), pred: t == tPred})
	return nil
}

// declareArray handles `[.extern] .shared|.local [.align N] .type name[dims]`.
func (k *kernel) declareArray(text string, sp space) error {
	if strings.Contains(text, "=") {
		return fmt.Errorf("initialised %v arrays are not supported", sp)
	}
	f := strings.Fields(strings.NewReplacer("[", " [", "]", "] ").Replace(text))
	extern := false
	align := 0
	var t typ
	name := ""
	count := 1
	empty := false
	for i := 0; i < len(f); i++ {
		w := f[i]
		switch {
		case w == ".extern":
			extern = true
		case w == ".shared" || w == ".local":
		case w == ".align" && i+1 < len(f):
			n, err := strconv.Atoi(f[i+1])
			if err != nil || n <= 0 || n&(n-1) != 0 {
				return fmt.Errorf("bad .align %q", f[i+1])
			}
			align = n
			i++
		case strings.HasPrefix(w, "."):
			tt, ok := typNames[w[1:]]
			if !ok || tt == tPred {
				return fmt.Errorf("unsupported array type %s", w)
			}
			t = tt
		case w == "[]":
			empty = true
		case strings.HasPrefix(w, "[") && strings.HasSuffix(w, "]"):
			n, err := strconv.Atoi(w[1 : len(w)-1])
			if err != nil || n <= 0 {
				return fmt.Errorf("bad array size %s", w)
			}
			count *= n
		default:
			name = w
		}
	}
	if name == "" || t == tNone {
		return fmt.Errorf("bad %v declaration", sp)
	}
	if _, dup := k.syms[name]; dup {
		return fmt.Errorf("%s declared twice", name)
	}
	align = max(align, t.bytes())
	sym := &symbol{name: name, space: sp, size: count * t.bytes(), align: align}
	switch {
	case extern || empty:
		if sp != spShared || !extern || !empty || k.dynamic != nil {
			return fmt.Errorf("only one `.extern .shared name[]` (dynamic shared memory) is supported")
		}
		sym.size = 0
		k.dynamic = sym
	case sp == spShared:
		sym.off = uint64(alignUp(k.shared, align))
		k.shared = int(sym.off) + sym.size
	default:
		sym.off = uint64(alignUp(k.local, align))
		k.local = int(sym.off) + sym.size
	}
	k.syms[name] = sym
	return nil
}

// decodeInst parses guard, opcode and operands and hands the instruction
// to its opcode's decoder.
func (k *kernel) decodeInst(in *inst, s stmt) error {
	*in = inst{line: s.line, text: s.text, guard: -1, vec: 1}
	text := s.text
	if strings.HasPrefix(text, "@") {
		sp := strings.IndexByte(text, ' ')
		if sp < 0 {
			return fmt.Errorf("guard without an instruction")
		}
		g := text[1:sp]
		if strings.HasPrefix(g, "!") {
			in.guardNeg, g = true, g[1:]
		}
		r, ok := k.regIdx[g]
		if !ok || !k.regs[r].pred {
			return fmt.Errorf("guard %s is not a predicate register", g)
		}
		in.guard = r
		text = strings.TrimSpace(text[sp+1:])
	}
	opcode, rest, _ := strings.Cut(text, " ")
	parts := strings.Split(opcode, ".")
	d := &dec{k: k, in: in, base: parts[0]}
	for _, w := range parts[1:] {
		if t, ok := typNames[w]; ok {
			d.types = append(d.types, t)
			continue
		}
		d.words = append(d.words, w)
	}
	d.used = make([]bool, len(d.words))
	d.raw = splitOperands(rest)
	fn, ok := decoders[d.base]
	if !ok {
		return fmt.Errorf("unsupported instruction %q", d.base)
	}
	if err := fn(d); err != nil {
		return err
	}
	for i, u := range d.used {
		if !u {
			return fmt.Errorf("unsupported modifier .%s on %s", d.words[i], d.base)
		}
	}
	if in.fn == nil && in.coll == collNone {
		return fmt.Errorf("internal: %s decoded without semantics", d.base)
	}
	return nil
}

// dec is the decoding state of one instruction.
type dec struct {
	k     *kernel
	in    *inst
	base  string
	words []string // non-type modifiers
	used  []bool
	types []typ
	raw   []string // operand texts
}

var decoders map[string]func(*dec) error

func init() {
	decoders = map[string]func(*dec) error{}
	for _, tbl := range []map[string]func(*dec) error{arithDecoders, memDecoders, ctrlDecoders, warpDecoders} {
		for n, f := range tbl {
			decoders[n] = f
		}
	}
}

// has reports and consumes a modifier word (shared::cta counts as
// shared: a CTA's own shared memory is all kiln uses).
func (d *dec) has(w string) bool {
	for i, x := range d.words {
		if x == w || x == w+"::cta" {
			d.used[i] = true
			return true
		}
	}
	return false
}

// oneOf consumes the first of ws present, or returns "".
func (d *dec) oneOf(ws ...string) string {
	for _, w := range ws {
		if d.has(w) {
			return w
		}
	}
	return ""
}

// ignore consumes modifiers with no effect in a sequential emulation
// (cache hints, memory-order qualifiers, .aligned).
func (d *dec) ignore(ws ...string) {
	for _, w := range ws {
		d.has(w)
	}
}

// typ1 requires exactly one type modifier from the allowed set.
func (d *dec) typ1(allowed ...typ) (typ, error) {
	if len(d.types) != 1 {
		return tNone, fmt.Errorf("%s needs one type, got %d", d.base, len(d.types))
	}
	t := d.types[0]
	for _, a := range allowed {
		if a == t {
			return t, nil
		}
	}
	return tNone, fmt.Errorf("%s does not take %v", d.base, t)
}

// rounding consumes a float rounding modifier.
func (d *dec) rounding() rounding {
	switch d.oneOf("rn", "rz", "rm", "rp") {
	case "rn":
		return rRN
	case "rz":
		return rRZ
	case "rm":
		return rRM
	case "rp":
		return rRP
	}
	return rNone
}

// noTypes rejects type modifiers on an instruction that takes none.
func (d *dec) noTypes() error {
	if len(d.types) != 0 {
		return fmt.Errorf("%s takes no type, got %v", d.base, d.types[0])
	}
	return nil
}

// nops checks the operand count.
func (d *dec) nops(n int) error {
	if len(d.raw) != n {
		return fmt.Errorf("%s takes %d operands, got %d", d.base, n, len(d.raw))
	}
	return nil
}

// dst decodes operand i as a destination register of type t (a register
// at least as wide; a predicate for .pred).
func (d *dec) dst(i int, t typ) (operand, error) {
	o, err := d.k.parseOperand(d.raw[i])
	if err != nil {
		return o, err
	}
	if o.kind == okSink {
		return o, nil
	}
	if o.kind != okReg || o.neg {
		return o, fmt.Errorf("destination %q is not a register", d.raw[i])
	}
	return o, d.checkReg(o.reg, t)
}

func (d *dec) checkReg(r int32, t typ) error {
	ri := d.k.regs[r]
	switch {
	case t == tPred && !ri.pred:
		return fmt.Errorf("%s is not a predicate register", ri.name)
	case t != tPred && ri.pred:
		return fmt.Errorf("predicate %s used as a %v operand", ri.name, t)
	case t != tPred && ri.bits < t.bits():
		return fmt.Errorf("register %s has %d bits, a %v operand needs %d", ri.name, ri.bits, t, t.bits())
	}
	return nil
}

// src decodes operand i as a value of type t: a register, an immediate,
// a special register or a symbol address.
func (d *dec) src(i int, t typ) (operand, error) {
	o, err := d.k.parseOperand(d.raw[i])
	if err != nil {
		return o, err
	}
	switch o.kind {
	case okReg:
		return o, d.checkReg(o.reg, t)
	case okImm:
		o.imm, err = o.lit.resolve(t)
		return o, err
	case okSpecial:
		if t.bits() < 32 || t.isFloat() {
			return o, fmt.Errorf("special register %s read as %v", o.text, t)
		}
		return o, nil
	case okSym:
		if o.sym.space == spParam || t.bits() < 32 || t.isFloat() {
			return o, fmt.Errorf("address of %s read as %v", o.text, t)
		}
		return o, nil
	}
	return o, fmt.Errorf("operand %q cannot be a %v source", d.raw[i], t)
}

// operands decodes operand 0 as a destination of type dt and the rest as
// sources of the given types.
func (d *dec) operands(dt typ, st ...typ) error {
	if err := d.nops(1 + len(st)); err != nil {
		return err
	}
	o, err := d.dst(0, dt)
	if err != nil {
		return err
	}
	d.in.op = append(d.in.op, o)
	for i, t := range st {
		o, err := d.src(i+1, t)
		if err != nil {
			return err
		}
		d.in.op = append(d.in.op, o)
	}
	return nil
}

// addr decodes operand i as an address used in space sp.
func (d *dec) addr(i int, sp space) (operand, error) {
	o, err := d.k.parseOperand(d.raw[i])
	if err != nil {
		return o, err
	}
	if o.kind != okAddr {
		return o, fmt.Errorf("operand %q is not an address", d.raw[i])
	}
	if o.sym != nil && o.sym.space != sp && sp != spGeneric {
		return o, fmt.Errorf("%s is a %v symbol, used in a %v access", o.sym.name, o.sym.space, sp)
	}
	if o.sym != nil && o.sym.space == spParam && sp != spParam {
		return o, fmt.Errorf("parameter %s used in a %v access (ld.param reads parameters)", o.sym.name, sp)
	}
	if o.sym == nil && o.reg < 0 && sp == spParam {
		return o, fmt.Errorf("ld.param needs a parameter name")
	}
	return o, nil
}
