package ptxemu

import "fmt"

type tstate uint8

const (
	tRun  tstate = iota // runnable
	tWait               // blocked at a collective (t.wait)
	tExit               // returned
)

// thread is one emulated thread of the running block.
type thread struct {
	b        *block
	regs     []uint64
	def      []bool
	pc       int
	lin      int // linear index in the block
	tid      [3]uint32
	lane     int
	warp     int
	state    tstate
	steps    int64
	local    []byte
	wait     *inst // the collective it waits at
	barID    int
	barCount int // threads a counted barrier waits for (0: the block)
	exitLine int
	cache    *alloc // the last global allocation it touched
}

// r reads register i, which must have been written.
func (t *thread) r(i int32) uint64 {
	if !t.def[i] && !t.b.l.opts.AllowUninit {
		t.fail("reads register %s, which was never written", t.b.l.k.regs[i].name)
	}
	return t.regs[i]
}

// set writes register i, truncated to its width.
func (t *thread) set(i int32, v uint64) {
	t.regs[i] = v & t.b.l.k.regMask[i]
	t.def[i] = true
}

// put writes a destination operand (a sink discards).
func (t *thread) put(o *operand, v uint64) {
	if o.kind == okReg {
		t.set(o.reg, v)
	}
}

// v reads a source operand's bits.
func (t *thread) v(o *operand) uint64 {
	switch o.kind {
	case okReg:
		return t.r(o.reg)
	case okImm:
		return o.imm
	case okSpecial:
		return t.special(o.sp)
	case okSym:
		return o.sym.off
	}
	t.fail("internal: operand %q has no value", o.text)
	return 0
}

// p reads a predicate operand, honouring !.
func (t *thread) p(o *operand) bool {
	return (t.r(o.reg) != 0) != o.neg
}

func (t *thread) special(s special) uint64 {
	g := t.b.l.geo
	switch s {
	case spTidX, spTidY, spTidZ:
		return uint64(t.tid[s-spTidX])
	case spNtidX, spNtidY, spNtidZ:
		return uint64(g.Block[s-spNtidX])
	case spCtaidX, spCtaidY, spCtaidZ:
		return uint64(t.b.ctaid[s-spCtaidX])
	case spNctaidX, spNctaidY, spNctaidZ:
		return uint64(g.Grid[s-spNctaidX])
	case spLaneid:
		return uint64(t.lane)
	case spWarpid:
		return uint64(t.warp)
	case spNwarpid:
		return uint64((g.Threads() + 31) / 32)
	case spLanemaskEq:
		return 1 << uint(t.lane)
	case spLanemaskLt:
		return 1<<uint(t.lane) - 1
	case spLanemaskLe:
		return 1<<uint(t.lane+1) - 1
	case spLanemaskGt:
		return uint64(^uint32(1<<uint(t.lane+1) - 1))
	case spLanemaskGe:
		return uint64(^uint32(1<<uint(t.lane) - 1))
	}
	return 0
}

// ea computes an address operand's effective address.
func (t *thread) ea(o *operand) uint64 {
	a := o.imm
	switch {
	case o.reg >= 0:
		a += t.r(o.reg)
	case o.sym != nil:
		a += o.sym.off
	}
	return a
}

// access kinds for error messages and the race detector.
const (
	accRead = iota
	accWrite
	accAtomic
)

var accNames = [...]string{"read", "write", "atomic"}

// mem returns the n bytes at addr in space sp for an access of kind acc,
// checking alignment (to align bytes), bounds and, in shared memory,
// races. Generic addresses resolve to their window.
func (t *thread) mem(sp space, addr uint64, n, align int, acc int) []byte {
	if addr%uint64(align) != 0 {
		t.fail("misaligned %v %s of %d bytes at %#x (needs %d-byte alignment)", sp, accNames[acc], n, addr, align)
	}
	if sp == spGeneric {
		switch {
		case addr >= sharedWindow && addr < sharedWindow+windowSize:
			sp, addr = spShared, addr-sharedWindow
		case addr >= localWindow && addr < localWindow+windowSize:
			sp, addr = spLocal, addr-localWindow
		default:
			sp = spGlobal
		}
	}
	switch sp {
	case spGlobal:
		if c := t.cache; c != nil && addr >= c.base && addr+uint64(n) <= c.end() {
			return c.data[addr-c.base : addr-c.base+uint64(n)]
		}
		a, err := t.b.l.mem.find(addr, n)
		if err != nil {
			t.fail("out-of-bounds global %s of %s", accNames[acc], err)
		}
		if a.data == nil {
			b, ok := a.bytes(addr-a.base, n)
			if !ok {
				t.fail("global %s of %d bytes at %#x crosses a page of a sparse allocation", accNames[acc], n, addr)
			}
			return b
		}
		t.cache = a
		return a.data[addr-a.base : addr-a.base+uint64(n)]
	case spShared:
		sh := t.b.shared
		if addr >= uint64(len(sh)) || addr+uint64(n) > uint64(len(sh)) {
			t.fail("out-of-bounds shared %s of %d bytes at shared address %#x (the block has %d bytes of shared memory)", accNames[acc], n, addr, len(sh))
		}
		if t.b.race != nil && acc != accAtomic {
			t.b.race.check(t, int(addr), n, acc == accWrite)
		}
		return sh[addr : addr+uint64(n)]
	case spLocal:
		if addr >= uint64(len(t.local)) || addr+uint64(n) > uint64(len(t.local)) {
			t.fail("out-of-bounds local %s of %d bytes at local address %#x (%d bytes per thread)", accNames[acc], n, addr, len(t.local))
		}
		return t.local[addr : addr+uint64(n)]
	case spParam:
		p := t.b.l.params
		if acc != accRead {
			t.fail("parameters are read-only")
		}
		if addr+uint64(n) > uint64(len(p)) {
			t.fail("parameter read of %d bytes at offset %d past the %d-byte parameter buffer", n, addr, len(p))
		}
		return p[addr : addr+uint64(n)]
	}
	t.fail("internal: bad state space")
	return nil
}

// loadBits reads an n-byte little-endian value.
func loadBits(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// storeBits writes the low len(b) bytes of v little-endian.
func storeBits(b []byte, v uint64) {
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
}

// describeShared names a shared address by the array holding it.
func (k *kernel) describeShared(addr int) string {
	for _, s := range k.syms {
		if s.space == spShared && addr >= int(s.off) && (addr < int(s.off)+s.size || s == k.dynamic) {
			return fmt.Sprintf("%s+%d", s.name, addr-int(s.off))
		}
	}
	return fmt.Sprintf("%#x", addr)
}
