package emu

// raceShadow detects shared-memory data races within a block: two
// threads touching the same byte between two barriers, at least one of
// them writing, neither access atomic. Every byte remembers, for the
// current barrier interval (epoch), its last writer and up to two
// distinct readers, with the lines of those accesses.
type raceShadow struct {
	epoch  uint32
	wEpoch []uint32
	wTid   []int32
	wLine  []int32
	rEpoch []uint32
	r1, r2 []int32 // reader threads (r2 -1: one reader so far)
	r1Line []int32
	r2Line []int32
}

func newRaceShadow(n int) *raceShadow {
	return &raceShadow{
		wEpoch: make([]uint32, n), wTid: make([]int32, n), wLine: make([]int32, n),
		rEpoch: make([]uint32, n), r1: make([]int32, n), r2: make([]int32, n),
		r1Line: make([]int32, n), r2Line: make([]int32, n),
	}
}

// nextEpoch starts a new barrier interval: earlier accesses are ordered
// before every later one.
func (r *raceShadow) nextEpoch() { r.epoch++ }

func (r *raceShadow) check(t *thread, addr, n int, write bool) {
	ep := r.epoch
	me := int32(t.lin)
	line := int32(t.b.l.k.prog[t.pc-1].line)
	for i := addr; i < addr+n; i++ {
		if r.wEpoch[i] == ep && r.wTid[i] != me {
			t.b.raceFault(t, write, i, int(r.wTid[i]), true, int(r.wLine[i]))
		}
		if write {
			if r.rEpoch[i] == ep {
				switch {
				case r.r1[i] != me:
					t.b.raceFault(t, true, i, int(r.r1[i]), false, int(r.r1Line[i]))
				case r.r2[i] >= 0 && r.r2[i] != me:
					t.b.raceFault(t, true, i, int(r.r2[i]), false, int(r.r2Line[i]))
				}
			}
			r.wEpoch[i], r.wTid[i], r.wLine[i] = ep, me, line
			continue
		}
		switch {
		case r.rEpoch[i] != ep:
			r.rEpoch[i], r.r1[i], r.r1Line[i], r.r2[i] = ep, me, line, -1
		case r.r1[i] != me && r.r2[i] < 0:
			r.r2[i], r.r2Line[i] = me, line
		}
	}
}

func (b *block) raceFault(t *thread, write bool, addr, other int, otherWrote bool, otherLine int) {
	acc := map[bool]string{true: "writes", false: "reads"}
	t.fail("shared-memory data race on %s: thread %s %s it, and thread %s %s it at line %d with no barrier between",
		b.l.k.describeShared(addr), b.threadName(t.lin), acc[write], b.threadName(other), map[bool]string{true: "wrote", false: "read"}[otherWrote], otherLine)
}
