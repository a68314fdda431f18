package ptxemu

// raceShadow checks a block's shared memory: it reports reads of bytes
// no thread has written (shared memory starts as garbage), and data races:
// two
// threads touching the same byte with at least one write, neither
// access atomic, and no synchronisation between them. Synchronisation is
// a completed block barrier (bar.sync), or bar.warp.sync for two lanes of
// one warp; warp shuffles do not order memory (the PTX memory model
// gives them no such effect). Every byte remembers its last writer and
// up to two distinct readers since the last block barrier, each with the
// line and the warp-barrier count of the accessor's warp at the time.
type raceShadow struct {
	epoch  uint32   // completed block barriers
	start  uint32   // the epoch the running block started in
	warpEp []uint32 // completed bar.warp.sync per warp
	w      []access // last write
	r1, r2 []access // readers (r2.tid -1: one reader so far)
}

type access struct {
	epoch  uint32 // block epoch of the access
	warpEp uint32 // the accessor's warp epoch
	tid    int32
	line   int32
}

func newRaceShadow(n, warps int) *raceShadow {
	return &raceShadow{warpEp: make([]uint32, warps), w: make([]access, n), r1: make([]access, n), r2: make([]access, n)}
}

// nextEpoch starts a new barrier interval: earlier accesses are ordered
// before every later one.
func (r *raceShadow) nextEpoch() { r.epoch++ }

// newBlock starts a block: nothing in shared memory is written yet.
func (r *raceShadow) newBlock() {
	r.epoch++
	r.start = r.epoch
}

// live reports whether access a is unordered with respect to thread me
// now: same block epoch, and not separated by a warp barrier of their
// common warp.
func (r *raceShadow) live(a access, me int32) bool {
	if a.epoch != r.epoch || a.tid < 0 {
		return false
	}
	if w := a.tid / 32; w == me/32 && a.warpEp != r.warpEp[w] {
		return false
	}
	return true
}

func (r *raceShadow) check(t *thread, addr, n int, write bool) {
	me := int32(t.lin)
	cur := access{epoch: r.epoch, warpEp: r.warpEp[t.warp], tid: me, line: int32(t.b.l.k.prog[t.pc-1].line)}
	for i := addr; i < addr+n; i++ {
		if !write && r.w[i].epoch < r.start {
			t.fail("reads shared memory at %s, which no thread of the block has written", t.b.l.k.describeShared(i))
		}
		if w := r.w[i]; w.tid != me && r.live(w, me) {
			t.b.raceFault(t, write, i, w, true)
		}
		if write {
			if rd := r.r1[i]; rd.tid != me && r.live(rd, me) {
				t.b.raceFault(t, true, i, rd, false)
			}
			if rd := r.r2[i]; rd.tid != me && r.live(rd, me) {
				t.b.raceFault(t, true, i, rd, false)
			}
			r.w[i] = cur
			continue
		}
		switch {
		case !r.live(r.r1[i], me) || r.r1[i].tid == me:
			r.r1[i] = cur
		case !r.live(r.r2[i], me) || r.r2[i].tid == me:
			r.r2[i] = cur
		}
	}
}

func (b *block) raceFault(t *thread, write bool, addr int, other access, otherWrote bool) {
	did := map[bool]string{true: "writes", false: "reads"}[write]
	done := map[bool]string{true: "wrote", false: "read"}[otherWrote]
	t.fail("shared-memory data race on %s: thread %s %s it, and thread %s %s it at line %d with no barrier between",
		b.l.k.describeShared(addr), b.threadName(t.lin), did, b.threadName(int(other.tid)), done, other.line)
}
