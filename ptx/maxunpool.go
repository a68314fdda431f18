package ptx

import (
	"fmt"

	"github.com/kilnml/kiln/internal/kdesc"
)

// MaxUnpool is a kdesc.MaxUnpool.
type MaxUnpool struct {
	kdesc.MaxUnpool
}

// EmitMaxUnpool writes MaxUnpool as one block, because its order is
// global: x's elements may land anywhere in the output and a later one
// wins a shared index, and only a block can order its threads
// (bar.sync, which also orders their global writes). The block zeroes
// the output, then takes x in chunks of its size, in order: each thread
// puts its element's index in shared memory, and writes its element
// unless a later element of the chunk has the same index (later chunks
// come after the barrier, so they overwrite). An index outside the
// output (the CPU's run-time error) is dropped. One block is a correct
// path, not a fast one; the pools that produce the indices are on the
// GPU either way. Parameters: out, x, indices (I64).
func EmitMaxUnpool(u *MaxUnpool) (*Kernel, error) {
	es := u.DType.Size()
	if es != 1 && es != 2 && es != 4 && es != 8 {
		return nil, fmt.Errorf("ptx: %s: dtype %v", u.Name, u.DType)
	}
	n, size := product(u.Out), u.Size
	if n > 1<<31-1 || size > 1<<31-1 {
		return nil, fmt.Errorf("ptx: %s: %d elements into %d exceed the kernel's 32-bit indexing", u.Name, size, n)
	}
	block := min(MaxThreads, max(32, CeilDiv(size, 32)*32))
	f := newFn(u.Name)
	out, xp, ip := f.ptrParam("out"), f.ptrParam("x"), f.ptrParam("indices")
	x := ix{f: f}
	t, cl := f.moveType(u.DType)
	tid := f.reg(cB32)
	f.op("mov.u32 %s, %%tid.x", tid)
	zero := f.reg(cl)
	if cl == cB16 {
		f.op("mov.b16 %s, 0", zero)
	} else {
		f.op("mov.%s %s, 0", map[class]string{cB32: "b32", cB64: "b64"}[cl], zero)
	}
	o := f.reg(cB32)
	f.op("mov.u32 %s, %s", o, tid)
	f.gridLoop(x, o, x.imm(block), n, func() {
		f.op("st.global.%s [%s], %s", t, x.addr(out, o, es), zero)
	})
	f.op("bar.sync 0")
	slots := f.shared("uidx", ".s64", block, 8)
	sbase := f.reg(cB32)
	f.op("mov.u32 %s, %s", sbase, slots)
	mine := f.reg(cB32)
	f.op("mad.lo.u32 %s, %s, 8, %s", mine, tid, sbase)
	c0 := x.imm(0)
	f.gridLoop(x, c0, x.imm(block), size, func() {
		j, valid, k := f.reg(cB32), f.reg(cPred), f.reg(cB64)
		f.op("add.u32 %s, %s, %s", j, c0, tid)
		f.op("setp.lt.u32 %s, %s, %d", valid, j, size)
		f.op("mov.s64 %s, -1", k)
		f.op("@%s ld.global.s64 %s, [%s]", valid, k, x.addr(ip, j, 8))
		f.op("bar.sync 0") // the previous chunk's readers are done
		f.op("st.shared.s64 [%s], %s", mine, k)
		f.op("bar.sync 0")
		// Write when the index is in range and no later slot holds it
		// (invalid slots hold -1, never in range).
		skip, p := f.label("later"), f.reg(cPred)
		f.op("setp.ge.u64 %s, %s, %d", p, k, n)
		f.op("@%s bra %s", p, skip)
		next := f.reg(cB32)
		f.op("add.u32 %s, %s, 1", next, tid)
		f.countFrom(next, block, func(s string) {
			other, addr := f.reg(cB64), f.reg(cB32)
			f.op("mad.lo.u32 %s, %s, 8, %s", addr, s, sbase)
			f.op("ld.shared.s64 %s, [%s]", other, addr)
			f.op("setp.eq.s64 %s, %s, %s", p, other, k)
			f.op("@%s bra %s", p, skip)
		})
		k32, v := f.reg(cB32), f.reg(cl)
		f.op("cvt.u32.u64 %s, %s", k32, k)
		f.op("ld.global.%s %s, [%s]", t, v, x.addr(xp, j, es))
		f.op("st.global.%s [%s], %s", t, x.addr(out, k32, es), v)
		f.place(skip)
	})
	return f.kernel(Launch{Grid: [3]int{1, 1, 1}, Block: [3]int{block, 1, 1}}), nil
}
