package ptx

import (
	"fmt"
	"math"
	"strings"
)

// class is a virtual register class; ptxas allocates the real registers.
type class int

const (
	cPred class = iota
	cB16
	cB32
	cB64
	cF32
	cF64
	numClass
)

var classDecl = [numClass]struct{ typ, prefix string }{
	{".pred", "%p"}, {".b16", "%h"}, {".b32", "%r"}, {".b64", "%rd"}, {".f32", "%f"}, {".f64", "%fd"},
}

// fn accumulates the body of one .entry.
type fn struct {
	name    string
	params  []Param
	n       [numClass]int
	body    strings.Builder
	labels  int
	decls   []string // .shared declarations
	sharedB int
}

func newFn(name string) *fn { return &fn{name: name} }

// reg allocates a fresh virtual register.
func (f *fn) reg(c class) string {
	f.n[c]++
	return fmt.Sprintf("%s%d", classDecl[c].prefix, f.n[c])
}

// op emits one instruction (the semicolon is added).
func (f *fn) op(format string, a ...any) {
	f.body.WriteString("\t")
	fmt.Fprintf(&f.body, format, a...)
	f.body.WriteString(";\n")
}

// label returns a fresh label name; place marks where it points.
func (f *fn) label(hint string) string {
	f.labels++
	return fmt.Sprintf("$L_%s_%d", hint, f.labels)
}

func (f *fn) place(l string) { f.body.WriteString(l + ":\n") }

// shared declares a block-shared array of n elements of ty (".f32") and
// returns its name.
func (f *fn) shared(name, ty string, n, align int) string {
	f.decls = append(f.decls, fmt.Sprintf(".shared .align %d %s %s[%d];", align, ty, name, n))
	f.sharedB += n * Type(ty).Size()
	return name
}

// ptrParam declares a pointer parameter and returns a register holding it
// as a global address.
func (f *fn) ptrParam(name string) string {
	f.params = append(f.params, Param{Name: name, Type: U64})
	raw, g := f.reg(cB64), f.reg(cB64)
	f.op("ld.param.u64 %s, [%s]", raw, name)
	f.op("cvta.to.global.u64 %s, %s", g, raw)
	return g
}

// kernel finishes the entry.
func (f *fn) kernel(l Launch) *Kernel {
	var b strings.Builder
	fmt.Fprintf(&b, ".visible .entry %s(", f.name)
	for i, p := range f.params {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n\t" + p.decl())
	}
	b.WriteString("\n)\n{\n")
	for c := range numClass {
		if f.n[c] > 0 {
			fmt.Fprintf(&b, "\t.reg %s %s<%d>;\n", classDecl[c].typ, classDecl[c].prefix, f.n[c]+1)
		}
	}
	for _, d := range f.decls {
		b.WriteString("\t" + d + "\n")
	}
	b.WriteString(f.body.String())
	b.WriteString("\tret;\n}\n")
	return &Kernel{Name: f.name, Params: f.params, Launch: l, Shared: f.sharedB, entry: b.String()}
}

// fimm writes an f32 immediate exactly (PTX's 0fXXXXXXXX form).
func fimm(x float32) string { return fmt.Sprintf("0f%08X", math.Float32bits(x)) }

// f32 materialises a constant in a register.
func (f *fn) f32(x float32) string {
	r := f.reg(cF32)
	f.op("mov.f32 %s, %s", r, fimm(x))
	return r
}

// globalIndex returns the thread's index in the grid (x only) and the
// grid's thread count, as u32 or u64 registers.
func (f *fn) globalIndex(wide bool) (idx, stride string) {
	tid, ctaid, ntid, nctaid := f.reg(cB32), f.reg(cB32), f.reg(cB32), f.reg(cB32)
	f.op("mov.u32 %s, %%tid.x", tid)
	f.op("mov.u32 %s, %%ctaid.x", ctaid)
	f.op("mov.u32 %s, %%ntid.x", ntid)
	f.op("mov.u32 %s, %%nctaid.x", nctaid)
	if wide {
		idx, stride = f.reg(cB64), f.reg(cB64)
		t := f.reg(cB64)
		f.op("mul.wide.u32 %s, %s, %s", idx, ctaid, ntid)
		f.op("cvt.u64.u32 %s, %s", t, tid)
		f.op("add.u64 %s, %s, %s", idx, idx, t)
		f.op("mul.wide.u32 %s, %s, %s", stride, nctaid, ntid)
		return idx, stride
	}
	idx, stride = f.reg(cB32), f.reg(cB32)
	f.op("mad.lo.u32 %s, %s, %s, %s", idx, ctaid, ntid, tid)
	f.op("mul.lo.u32 %s, %s, %s", stride, nctaid, ntid)
	return idx, stride
}

// ix is integer index arithmetic in 32 or 64 bits; kernels pick 64 only
// when an index can pass 2³¹.
type ix struct {
	f    *fn
	wide bool
}

func (x ix) t() string {
	if x.wide {
		return "u64"
	}
	return "u32"
}

func (x ix) reg() string {
	if x.wide {
		return x.f.reg(cB64)
	}
	return x.f.reg(cB32)
}

// imm loads an integer constant.
func (x ix) imm(v int) string {
	r := x.reg()
	x.f.op("mov.%s %s, %d", x.t(), r, v)
	return r
}

// divmod returns a/d and a%d for a constant d.
func (x ix) divmod(a string, d int) (q, r string) {
	q, r = x.reg(), x.reg()
	x.f.op("div.%s %s, %s, %d", x.t(), q, a, d)
	x.f.op("rem.%s %s, %s, %d", x.t(), r, a, d)
	return q, r
}

// mad returns a*m + c for a constant m (which may be negative: the
// arithmetic wraps, so signed strides work on unsigned registers).
func (x ix) mad(a string, m int, c string) string {
	r := x.reg()
	if x.wide {
		x.f.op("mad.lo.s64 %s, %s, %d, %s", r, a, m, c)
	} else {
		x.f.op("mad.lo.s32 %s, %s, %d, %s", r, a, m, c)
	}
	return r
}

// addr returns base + i*size as a 64-bit address; i is signed.
func (x ix) addr(base, i string, size int) string {
	a := x.f.reg(cB64)
	if x.wide {
		x.f.op("mad.lo.s64 %s, %s, %d, %s", a, i, size, base)
	} else {
		x.f.op("mad.wide.s32 %s, %s, %d, %s", a, i, size, base)
	}
	return a
}

// redReg is the register type a reduction folds: f32, or s32/s64 for
// integer reductions (reduce_int.go).
type redReg struct {
	c    class
	t    string // PTX type of the value (mov, shared scratch)
	size int
}

var regF32 = redReg{cF32, "f32", 4}

// warpReduce folds v, a value of type rt, across the 32 lanes of a warp
// with op (e.g. "add.f32", "max.NaN.f32"); every lane ends with the
// result.
func (f *fn) warpReduce(v, op string, rt redReg) string {
	for off := 16; off >= 1; off /= 2 {
		o := f.reg(rt.c)
		if rt.c == cB64 { // shuffles move 32 bits: two halves
			lo, hi := f.reg(cB32), f.reg(cB32)
			f.op("mov.b64 {%s, %s}, %s", lo, hi, v)
			f.op("shfl.sync.bfly.b32 %s, %s, %d, 31, -1", lo, lo, off)
			f.op("shfl.sync.bfly.b32 %s, %s, %d, 31, -1", hi, hi, off)
			f.op("mov.b64 %s, {%s, %s}", o, lo, hi)
		} else {
			f.op("shfl.sync.bfly.b32 %s, %s, %d, 31, -1", o, v, off)
		}
		n := f.reg(rt.c)
		f.op("%s %s, %s, %s", op, n, v, o)
		v = n
	}
	return v
}

// blockReduce folds v across a block of `threads` threads (a multiple of
// 32) through a 32-slot shared scratch array; every thread gets the
// result. tid is %tid.x in a u32 register.
func (f *fn) blockReduce(v, op, tid, scratch string, threads int, identity float32) string {
	return f.blockReduceT(v, op, tid, scratch, threads, fimm(identity), regF32)
}

// blockReduceT is blockReduce for a value of type rt; identity is an
// immediate of that type and scratch holds 32 of them.
func (f *fn) blockReduceT(v, op, tid, scratch string, threads int, identity string, rt redReg) string {
	v = f.warpReduce(v, op, rt)
	if threads <= 32 {
		return v
	}
	warps := threads / 32
	lane, warp := f.reg(cB32), f.reg(cB32)
	f.op("and.b32 %s, %s, 31", lane, tid)
	f.op("shr.u32 %s, %s, 5", warp, tid)
	p := f.reg(cPred)
	f.op("setp.eq.u32 %s, %s, 0", p, lane)
	a := f.reg(cB32)
	f.op("mov.u32 %s, %s", a, scratch)
	wa := f.reg(cB32)
	f.op("mad.lo.u32 %s, %s, %d, %s", wa, warp, rt.size, a)
	f.op("bar.sync 0") // earlier readers of the scratch are done
	f.op("@%s st.shared.%s [%s], %s", p, rt.t, wa, v)
	f.op("bar.sync 0")
	// Every warp reloads the per-warp values (identity past the last) and
	// folds them again, so all threads end with the same result.
	la := f.reg(cB32)
	f.op("mad.lo.u32 %s, %s, %d, %s", la, lane, rt.size, a)
	w := f.reg(rt.c)
	f.op("mov.%s %s, %s", rt.t, w, identity)
	q := f.reg(cPred)
	f.op("setp.lt.u32 %s, %s, %d", q, lane, warps)
	f.op("@%s ld.shared.%s %s, [%s]", q, rt.t, w, la)
	return f.warpReduce(w, op, rt)
}
