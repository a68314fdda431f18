package ptxemu

import (
	"fmt"
	"strings"
)

// block is one worker's state for running blocks one after another.
type block struct {
	l       *launchState
	ctaid   [3]uint32
	threads []thread
	order   []*thread // scheduling order
	shared  []byte
	race    *raceShadow
	arrived [16]int // bar.arrive counts per barrier id
}

func newBlock(ls *launchState) *block {
	b := &block{l: ls}
	n := ls.geo.Threads()
	nr := len(ls.k.regs)
	regs := make([]uint64, n*nr)
	def := make([]bool, n*nr)
	b.threads = make([]thread, n)
	b.order = make([]*thread, n)
	for i := range b.threads {
		t := &b.threads[i]
		*t = thread{b: b, regs: regs[i*nr : (i+1)*nr], def: def[i*nr : (i+1)*nr], lin: i,
			lane: i % 32, warp: i / 32, local: make([]byte, ls.k.local)}
		c := coords(i, ls.geo.Block)
		t.tid = [3]uint32{uint32(c[0]), uint32(c[1]), uint32(c[2])}
		b.order[i] = t
		if ls.opts.ReverseThreads {
			b.order[i] = &b.threads[n-1-i]
		}
	}
	b.shared = make([]byte, ls.shared)
	if !ls.opts.NoRaceCheck && ls.shared > 0 {
		b.race = newRaceShadow(ls.shared, (n+31)/32)
	}
	return b
}

// run executes block number i (linear, x fastest) to completion.
func (b *block) run(i int) *Error {
	g := b.l.geo.Grid
	c := coords(i, g)
	b.ctaid = [3]uint32{uint32(c[0]), uint32(c[1]), uint32(c[2])}
	for j := range b.threads {
		t := &b.threads[j]
		clear(t.def)
		clear(t.regs)
		clear(t.local)
		t.pc, t.state, t.steps, t.wait = 0, tRun, 0, nil
	}
	// Shared memory starts as garbage on a GPU; a recognisable pattern
	// makes reads of never-written shared memory stand out as NaNs.
	for j := range b.shared {
		b.shared[j] = 0xff
	}
	if b.race != nil {
		b.race.newBlock()
	}
	b.arrived = [16]int{}
	for {
		ran := false
		for _, t := range b.order {
			if t.state == tRun {
				ran = true
				if err := b.step(t); err != nil {
					return err
				}
			}
		}
		done := true
		for j := range b.threads {
			if b.threads[j].state != tExit {
				done = false
				break
			}
		}
		if done {
			return nil
		}
		progressed, err := b.resolveWarps()
		if err != nil {
			return err
		}
		if !progressed {
			if progressed, err = b.resolveBarriers(); err != nil {
				return err
			}
		}
		if !progressed && !ran {
			return b.deadlock()
		}
	}
}

// step runs thread t until it blocks at a collective or exits.
func (b *block) step(t *thread) (err *Error) {
	prog := b.l.k.prog
	var in *inst
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(*fault)
			if !ok {
				panic(r)
			}
			err = b.errorAt(t, in, f.msg)
		}
	}()
	maxSteps := b.l.opts.MaxSteps
	for t.state == tRun {
		in = &prog[t.pc]
		if in.guard >= 0 && (t.r(in.guard) != 0) == in.guardNeg {
			t.pc++
			continue
		}
		if t.steps++; t.steps > maxSteps {
			t.fail("executed %d instructions without finishing (Options.MaxSteps)", maxSteps)
		}
		switch in.coll {
		case collNone:
			t.pc++
			in.fn(t, in)
		case collArrive:
			id, count := b.barrierOperands(t, in)
			b.arrived[id] += count
			t.pc++
		default:
			if in.coll == collBar {
				t.barID, t.barCount = b.barrierOperands(t, in)
			}
			t.state, t.wait = tWait, in
		}
	}
	return nil
}

// barrierOperands reads a barrier's id and thread count (0: all).
func (b *block) barrierOperands(t *thread, in *inst) (id, count int) {
	id = int(uint32(t.v(&in.op[0])))
	if id > 15 {
		t.fail("barrier %d (sm_80 has barriers 0-15)", id)
	}
	if len(in.op) > 1 {
		count = int(uint32(t.v(&in.op[1])))
		if count <= 0 || count%32 != 0 || count > len(b.threads)+31 {
			t.fail("barrier thread count %d must be a positive multiple of 32 up to the block size", count)
		}
	}
	if in.coll == collArrive && count == 0 {
		t.fail("bar.arrive needs a thread count")
	}
	return id, count
}

// resolveWarps completes every warp collective whose participants have
// all arrived.
func (b *block) resolveWarps() (bool, *Error) {
	progressed := false
	nw := (len(b.threads) + 31) / 32
	for w := range nw {
		lanes := b.threads[w*32 : min(w*32+32, len(b.threads))]
		for i := range lanes {
			t := &lanes[i]
			if t.state != tWait || t.wait.coll != collWarp {
				continue
			}
			ok, err := t.wait.warp(b, lanes, t)
			if err != nil {
				return false, err
			}
			progressed = progressed || ok
		}
	}
	return progressed, nil
}

// resolveBarriers releases every barrier all its threads have reached.
func (b *block) resolveBarriers() (bool, *Error) {
	var waiting [16]int
	var first [16]*thread
	live := 0
	var exited *thread
	for j := range b.threads {
		t := &b.threads[j]
		switch {
		case t.state == tWait && t.wait.coll == collBar:
			id := t.barID
			if f := first[id]; f == nil {
				first[id] = t
			} else if f.barCount != t.barCount {
				return false, b.errorAt(t, t.wait, fmt.Sprintf("barrier %d: thread count %d, but thread %s waits with %d", id, t.barCount, b.threadName(f.lin), f.barCount))
			}
			waiting[id]++
			live++
		case t.state == tExit:
			if exited == nil {
				exited = t
			}
		default:
			live++
		}
	}
	progressed := false
	for id, f := range first {
		if f == nil {
			continue
		}
		need := f.barCount
		if need == 0 {
			need = len(b.threads)
			if exited != nil && waiting[id] == live {
				return false, b.errorAt(f, f.wait, fmt.Sprintf("barrier %d can never complete: %d threads wait, but thread %s exited (line %d)",
					id, waiting[id], b.threadName(exited.lin), exited.exitLine))
			}
		}
		if waiting[id]+b.arrived[id] < need {
			continue
		}
		b.arrived[id] = 0
		for j := range b.threads {
			t := &b.threads[j]
			if t.state == tWait && t.wait.coll == collBar && t.barID == id {
				t.state, t.wait = tRun, nil
				t.pc++
			}
		}
		progressed = true
		if b.race != nil {
			b.race.nextEpoch()
		}
	}
	return progressed, nil
}

// deadlock reports a block in which no thread can move.
func (b *block) deadlock() *Error {
	type group struct {
		in    *inst
		first int
		n     int
	}
	var groups []*group
	byInst := map[*inst]*group{}
	exited := 0
	for j := range b.threads {
		t := &b.threads[j]
		if t.state != tWait {
			exited++
			continue
		}
		g := byInst[t.wait]
		if g == nil {
			g = &group{in: t.wait, first: j}
			byInst[t.wait] = g
			groups = append(groups, g)
		}
		g.n++
	}
	var parts []string
	for _, g := range groups {
		parts = append(parts, fmt.Sprintf("%d threads (first %s) wait at line %d `%s`", g.n, b.threadName(g.first), g.in.line, g.in.text))
	}
	if exited > 0 {
		parts = append(parts, fmt.Sprintf("%d threads exited", exited))
	}
	return b.errorAt(nil, nil, "deadlock: "+strings.Join(parts, "; "))
}
