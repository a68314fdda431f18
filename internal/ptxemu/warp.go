package ptxemu

import (
	"fmt"
	"strings"
)

// warpFn completes a warp collective for the group of waiting thread t
// once every participant has arrived (returning true), or reports that
// it must wait longer (false).
type warpFn func(b *block, lanes []thread, t *thread) (bool, *Error)

// collect runs f, turning a fault into an Error blamed on *who.
func (b *block) collect(who **thread, in *inst, f func()) (err *Error) {
	defer func() {
		if r := recover(); r != nil {
			fl, ok := r.(*fault)
			if !ok {
				panic(r)
			}
			err = b.errorAt(*who, in, fl.msg)
		}
	}()
	f()
	return nil
}

// release resumes a lane after its collective.
func release(t *thread) {
	t.state, t.wait = tRun, nil
	t.pc++
}

// alignedReady checks a .sync.aligned collective: every lane of the warp
// must exist and reach the same instruction. A lane that exited is an
// error; one waiting elsewhere may still come (after a collective of its
// own), and if it never does the block deadlocks, which is reported.
func alignedReady(b *block, lanes []thread, t *thread) (bool, *Error) {
	in := t.wait
	if len(lanes) != 32 {
		return false, b.errorAt(t, in, fmt.Sprintf("%s needs a full warp; this one has %d threads", opName(in), len(lanes)))
	}
	for i := range lanes {
		u := &lanes[i]
		switch {
		case u.state == tExit:
			return false, b.errorAt(t, in, fmt.Sprintf("%s: lane %d exited (line %d); every lane of the warp must execute it", opName(in), i, u.exitLine))
		case u.state == tRun:
			return false, nil
		case u.wait != in:
			return false, nil
		}
	}
	return true, nil
}

func opName(in *inst) string {
	name, _, _ := strings.Cut(in.text, " ")
	return name
}

// Shuffle modes.
const (
	shflUp = iota
	shflDown
	shflBfly
	shflIdx
)

// decShfl: shfl.sync.mode.b32 d[|p], a, b, c, membermask.
func decShfl(d *dec) error {
	if !d.has("sync") {
		return fmt.Errorf("shfl without .sync (removed in PTX 6.4 for sm_70+) is not supported")
	}
	mode := d.oneOf("up", "down", "bfly", "idx")
	if mode == "" {
		return fmt.Errorf("shfl needs .up, .down, .bfly or .idx")
	}
	d.in.mode = map[string]int{"up": shflUp, "down": shflDown, "bfly": shflBfly, "idx": shflIdx}[mode]
	if _, err := d.typ1(tB32); err != nil {
		return err
	}
	if err := d.nops(5); err != nil {
		return err
	}
	ds, ps, _ := strings.Cut(d.raw[0], "|")
	d.raw[0] = strings.TrimSpace(ds)
	dst, err := d.dst(0, tB32)
	if err != nil {
		return err
	}
	p := operand{kind: okNone, reg: -1}
	if ps != "" {
		d.raw[0] = strings.TrimSpace(ps)
		if p, err = d.dst(0, tPred); err != nil {
			return err
		}
	}
	d.in.op = []operand{dst, p}
	for i := 1; i < 5; i++ {
		o, err := d.src(i, tB32)
		if err != nil {
			return err
		}
		d.in.op = append(d.in.op, o)
	}
	d.in.coll, d.in.warp = collWarp, shflResolve
	return nil
}

// shflLane is the ISA's source-lane computation for one lane: j and
// whether it is in range (pval).
func shflLane(mode, lane int, b, c uint32) (int, bool) {
	bval := int(b & 31)
	cval := int(c & 31)
	segmask := int((c >> 8) & 31)
	maxLane := (lane & segmask) | (cval &^ segmask)
	minLane := lane & segmask
	var j int
	var pval bool
	switch mode {
	case shflUp:
		j = lane - bval
		pval = j >= maxLane
	case shflDown:
		j = lane + bval
		pval = j <= maxLane
	case shflBfly:
		j = lane ^ bval
		pval = j <= maxLane
	default:
		j = minLane | (bval &^ segmask)
		pval = j <= maxLane
	}
	if !pval {
		j = lane
	}
	return j, pval
}

// memberGroup finds the lanes of a membermask collective (shfl.sync,
// bar.warp.sync) for waiting lane t: every non-exited lane named in the
// mask (operand mi) must wait at the same instruction with the same mask.
// It returns the mask and the group, or ready false to keep waiting.
func memberGroup(b *block, lanes []thread, t *thread, mi int) (member uint32, group [32]*thread, ready bool, err *Error) {
	in := t.wait
	who := t
	if err = b.collect(&who, in, func() { member = uint32(t.v(&in.op[mi])) }); err != nil {
		return
	}
	if member&(1<<uint(t.lane)) == 0 {
		err = b.errorAt(t, in, fmt.Sprintf("lane %d executes %s with membermask %#08x, which does not name it", t.lane, opName(in), member))
		return
	}
	for l := range 32 {
		if member&(1<<uint(l)) == 0 || l >= len(lanes) || lanes[l].state == tExit {
			continue
		}
		u := &lanes[l]
		if u.state == tRun {
			return
		}
		if u.wait != in {
			return // elsewhere for now; a deadlock if it never comes
		}
		group[l] = u
	}
	err = b.collect(&who, in, func() {
		for _, u := range group {
			if u != nil {
				who = u
				if m := uint32(u.v(&in.op[mi])); m != member {
					u.fail("lanes disagree on the membermask (%#08x here, %#08x in lane %d)", m, member, t.lane)
				}
			}
		}
	})
	return member, group, err == nil, err
}

// shflResolve exchanges values once every participant has arrived.
func shflResolve(b *block, lanes []thread, t *thread) (bool, *Error) {
	member, group, ready, err := memberGroup(b, lanes, t, 5)
	if !ready || err != nil {
		return false, err
	}
	in := t.wait
	var src [32]uint64
	out := [32]struct {
		v uint64
		p bool
	}{}
	who := t
	err = b.collect(&who, in, func() {
		for l, u := range group {
			if u != nil {
				who = u
				src[l] = u.v(&in.op[2])
			}
		}
		for l, u := range group {
			if u == nil {
				continue
			}
			who = u
			j, pval := shflLane(in.mode, l, uint32(u.v(&in.op[3])), uint32(u.v(&in.op[4])))
			if group[j] == nil {
				u.fail("reads lane %d, which does not take part (not in membermask %#08x, exited, or past the block)", j, member)
			}
			out[l].v, out[l].p = src[j], pval
		}
	})
	if err != nil {
		return false, err
	}
	for l, u := range group {
		if u != nil {
			u.put(&in.op[0], out[l].v)
			u.put(&in.op[1], b2u(out[l].p))
			release(u)
		}
	}
	return true, nil
}

// warpSyncResolve completes bar.warp.sync: the lanes meet, and their
// earlier shared-memory accesses are ordered before their later ones.
func warpSyncResolve(b *block, lanes []thread, t *thread) (bool, *Error) {
	_, group, ready, err := memberGroup(b, lanes, t, 0)
	if !ready || err != nil {
		return false, err
	}
	for _, u := range group {
		if u != nil {
			release(u)
		}
	}
	if b.race != nil {
		b.race.warpEp[t.warp]++
	}
	return true, nil
}

// decLdmatrix: ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}{.shared}.b16 d, [a].
func decLdmatrix(d *dec) error {
	if !d.has("sync") || !d.has("aligned") || !d.has("m8n8") {
		return fmt.Errorf("ldmatrix: only .sync.aligned.m8n8 is supported")
	}
	num := map[string]int{"x1": 1, "x2": 2, "x4": 4}[d.oneOf("x1", "x2", "x4")]
	if num == 0 {
		return fmt.Errorf("ldmatrix needs .x1, .x2 or .x4")
	}
	trans := d.has("trans")
	sp, err := d.space()
	if err != nil {
		return err
	}
	if sp != spShared && sp != spGeneric {
		return fmt.Errorf("ldmatrix reads shared memory")
	}
	if _, err := d.typ1(tB16); err != nil {
		return err
	}
	if err := d.nops(2); err != nil {
		return err
	}
	v, err := d.k.parseOperand(d.raw[0])
	if err != nil {
		return err
	}
	if v.kind != okVec || len(v.vec) != num {
		return fmt.Errorf("ldmatrix .x%d needs %d registers in braces", num, num)
	}
	for _, r := range v.vec {
		if r < 0 {
			return fmt.Errorf("ldmatrix destinations cannot be sinks")
		}
		if err := d.checkReg(r, tB32); err != nil {
			return err
		}
	}
	a, err := d.addr(1, sp)
	if err != nil {
		return err
	}
	d.in.sp = symSpace(sp, a)
	d.in.op = []operand{v, a}
	d.in.mode = num
	d.in.coll = collWarp
	d.in.warp = func(b *block, lanes []thread, t *thread) (bool, *Error) {
		return ldmatrixResolve(b, lanes, t, trans)
	}
	return nil
}

// ldmatrixResolve: lanes 8i..8i+7 give the row addresses of matrix i (16
// bytes each); lane L then holds, of each matrix, row L/4, columns
// 2(L%4) and 2(L%4)+1 (low half first), or with .trans the transpose:
// rows 2(L%4) and 2(L%4)+1 of column L/4.
func ldmatrixResolve(b *block, lanes []thread, t *thread, trans bool) (bool, *Error) {
	ok, err := alignedReady(b, lanes, t)
	if !ok || err != nil {
		return false, err
	}
	in := t.wait
	num := in.mode
	for i := range lanes {
		release(&lanes[i]) // pc past the instruction: accesses report its line
	}
	var m [4][8][8]uint16
	who := t
	err = b.collect(&who, in, func() {
		for i := range num {
			for r := range 8 {
				u := &lanes[8*i+r]
				who = u
				sp := in.sp
				row := u.mem(sp, u.ea(&in.op[1]), 16, 16, accRead)
				for c := range 8 {
					m[i][r][c] = uint16(row[2*c]) | uint16(row[2*c+1])<<8
				}
			}
		}
	})
	if err != nil {
		return false, err
	}
	for l := range lanes {
		u := &lanes[l]
		g, q := l/4, l%4
		for i := range num {
			var lo, hi uint16
			if trans {
				lo, hi = m[i][2*q][g], m[i][2*q+1][g]
			} else {
				lo, hi = m[i][g][2*q], m[i][g][2*q+1]
			}
			u.set(in.op[0].vec[i], uint64(lo)|uint64(hi)<<16)
		}
	}
	return true, nil
}

// warpDecoders are the decoders of warp collectives.
var warpDecoders = map[string]func(*dec) error{
	"shfl": decShfl, "ldmatrix": decLdmatrix, "mma": decMma,
}
