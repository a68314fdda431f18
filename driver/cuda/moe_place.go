package cuda

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// moeShared is what a program's clones share of one splittable layer:
// the host copy of its expert weights and the full device copy used
// while some clone runs the layer with every expert resident.
type moeShared struct {
	mu    sync.Mutex
	host  [3][]byte // gate, up, down as written (nil until written)
	ver   uint64    // writes of any of the three; programs re-place on a change
	wver  atomic.Uint64
	full  [3]*Buffer // nil unless users > 0
	users int        // programs running the layer all-resident on full
}

// moeRun is one program's placement of one OpMoE layer.
type moeRun struct {
	l    *moeLayer
	s    *moeShared // nil for a layer that cannot split
	mask []bool     // nil: every expert resident
	// placed: the device holds what mask asks, of weights version ver.
	placed  bool
	ver     uint64
	onFull  bool // counted among s.users
	split   bool // the last placement split the layer
	nres    int
	compact [3]*Buffer
	remap   *Buffer
	zero    *Buffer // [T, H] zeros: the split kernel's addend
	addend  *Buffer // the host's sum, uploaded
	keep    *Buffer // the last run's ids
	idBytes int
	// host scratch for the split: the layer's inputs (tokens, ids and
	// routing weights read back; the host copy of the expert weights)
	// and the host's sum
	ins            []tensor.Tensor
	sum            tensor.Tensor
	host           *ops.MoEHost
	plain          *launchArgs // the layer's kernel over full weights
	resid, add     *launchArgs // the split's two kernels
	fnSplit, fnAdd *Kernel
}

// newMoERuns gives a program its layers' placement state (everything
// resident, nothing placed yet) and marks their steps.
func (pr *program) newMoERuns() {
	for i := range pr.sh.lw.moe {
		l := &pr.sh.lw.moe[i]
		m := &moeRun{l: l, idBytes: pr.sh.p.Slots[l.node.Inputs[1].ID].Bytes}
		if l.why == "" {
			m.s, m.fnSplit, m.fnAdd = pr.sh.moe[i], pr.sh.moeFns[2*i], pr.sh.moeFns[2*i+1]
		}
		pr.moe = append(pr.moe, m)
		pr.steps[l.step].moe = m
	}
}

// MoELayers lists the program's OpMoE nodes in forward order
// (exec.MoEPlacer).
func (pr *program) MoELayers() []*graph.Node {
	out := make([]*graph.Node, len(pr.moe))
	for i, m := range pr.moe {
		out[i] = m.l.node
	}
	return out
}

// SetMoEResident sets the layers' masks (exec.MoEPlacer); the device
// placement follows at the next run.
func (pr *program) SetMoEResident(masks [][]bool) error {
	if pr.closed {
		return errClosed
	}
	if len(masks) != len(pr.moe) {
		return fmt.Errorf("cuda: %d residency masks for %d MoE layers", len(masks), len(pr.moe))
	}
	for i, m := range pr.moe {
		e := m.l.node.Inputs[moeFirstExpert].Shape[0]
		if masks[i] != nil && len(masks[i]) != e {
			return fmt.Errorf("cuda: MoE layer %d (%s): a mask of %d entries for %d experts", i, m.l.node, len(masks[i]), e)
		}
		if !allTrue(masks[i]) && m.s == nil {
			return fmt.Errorf("cuda: MoE layer %d (%s) cannot keep experts off the device: %s", i, m.l.node, m.l.why)
		}
	}
	for i, m := range pr.moe {
		var mask []bool
		if !allTrue(masks[i]) {
			mask = append(mask, masks[i]...)
		}
		if !equalMasks(mask, m.mask) {
			m.mask, m.placed = mask, false
		}
	}
	return nil
}

func allTrue(mask []bool) bool {
	for _, r := range mask {
		if !r {
			return false
		}
	}
	return true
}

func equalMasks(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// MoEIDs downloads layer i's ids of the last run (exec.MoEPlacer).
func (pr *program) MoEIDs(i int, dst []byte) error {
	if pr.closed {
		return errClosed
	}
	if i < 0 || i >= len(pr.moe) {
		return fmt.Errorf("cuda: MoE layer %d of %d", i, len(pr.moe))
	}
	m := pr.moe[i]
	if m.keep == nil {
		return fmt.Errorf("cuda: MoE layer %d (%s): no run yet", i, m.l.node)
	}
	if len(dst) != m.idBytes {
		return fmt.Errorf("cuda: MoE layer %d ids are %d bytes, destination %d", i, m.idBytes, len(dst))
	}
	return pr.stream.Download(m.keep, 0, dst)
}

var _ exec.MoEPlacer = (*program)(nil)

// writeExpert keeps the host copy of a splittable layer's expert weight
// and refreshes the full device copy if there is one; split placements
// re-upload their rows at their next run.
func (pr *program) writeExpert(layer, which int, data []byte) error {
	s := pr.sh.moe[layer]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.host[which] == nil {
		s.host[which] = make([]byte, len(data))
	}
	copy(s.host[which], data)
	s.ver++
	s.wver.Add(1)
	if s.full[which] == nil {
		return nil
	}
	pr.up.Add(int64(len(data)))
	// On the program's stream, then waited for: clones' streams read the
	// full copy too (as Write does for the weight region).
	if err := pr.stream.Upload(s.full[which], 0, data); err != nil {
		return err
	}
	return pr.stream.sync()
}

// readExpert copies the host copy of an expert weight (zeros when never
// written).
func (pr *program) readExpert(layer, which int, dst []byte) {
	s := pr.sh.moe[layer]
	s.mu.Lock()
	defer s.mu.Unlock()
	n := copy(dst, s.host[which])
	clear(dst[n:])
}

// moePrepare places every layer whose mask or weights changed since it
// was placed; the caller holds the context. Nothing happens (and nothing
// is allocated) when nothing changed. The uploads go on the program's
// stream and are waited for once, so every clone's stream sees them.
func (pr *program) moePrepare() error {
	placed := false
	for i, m := range pr.moe {
		if m.keep == nil {
			var err error
			if m.keep, err = pr.sh.d.Alloc(m.idBytes); err != nil {
				return err
			}
		}
		if m.s == nil {
			continue
		}
		m.s.mu.Lock()
		ver := m.s.ver
		m.s.mu.Unlock()
		if m.placed && m.ver == ver {
			continue
		}
		var err error
		if m.mask == nil {
			err = pr.placeFull(m)
		} else {
			err = pr.placeSplit(m)
		}
		if err != nil {
			return fmt.Errorf("cuda: placing MoE layer %d (%s): %w", i, m.l.node, err)
		}
		m.placed, m.ver, placed = true, ver, true
	}
	if placed {
		return pr.stream.sync()
	}
	return nil
}

// placeFull runs the layer on the shared full weights, allocating and
// uploading them if no clone does yet.
func (pr *program) placeFull(m *moeRun) error {
	if err := pr.freeSplit(m); err != nil {
		return err
	}
	s := m.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !m.onFull {
		if s.users == 0 {
			for w, n := range m.l.experts {
				b, err := pr.sh.d.Alloc(pr.sh.p.Slots[n.ID].Bytes)
				if err != nil {
					s.freeFull()
					return err
				}
				s.full[w] = b
				if s.host[w] != nil {
					if err := pr.stream.Upload(b, 0, s.host[w]); err != nil {
						s.freeFull()
						return err
					}
					pr.up.Add(int64(len(s.host[w])))
				}
			}
		}
		s.users++
		m.onFull = true
	}
	args := pr.stepArgs(m.l, s.full[0].Ptr, s.full[1].Ptr, s.full[2].Ptr)
	buf, err := pr.sh.fns[pr.kernelIndex(m.l.step)].Entry.Pack(args...)
	if err != nil {
		return err
	}
	m.plain, m.split = newLaunchArgs(buf), false
	pr.steps[m.l.step].args, pr.steps[m.l.step].variant = m.plain, "ptx"
	return nil
}

// freeFull frees the full device copies; s.mu is held.
func (s *moeShared) freeFull() {
	for w, b := range s.full {
		_ = b.Free()
		s.full[w] = nil
	}
}

// leaveFull stops m using the shared full weights, freeing them when no
// clone does.
func (m *moeRun) leaveFull() {
	if !m.onFull {
		return
	}
	s := m.s
	s.mu.Lock()
	defer s.mu.Unlock()
	m.onFull = false
	if s.users--; s.users == 0 {
		s.freeFull()
	}
}

// freeSplit frees m's compact weights and remap.
func (pr *program) freeSplit(m *moeRun) error {
	var errs []error
	for w, b := range m.compact {
		errs = append(errs, b.Free())
		m.compact[w] = nil
	}
	errs = append(errs, m.remap.Free())
	m.remap = nil
	return errors.Join(errs...)
}

// stepArgs are the layer kernel's pointer arguments (out, x, ids,
// weights, then the expert weights given).
func (pr *program) stepArgs(l *moeLayer, gate, up, down Ptr) []any {
	sp := pr.sh.lw.steps[l.step]
	args := make([]any, 0, len(sp.ptrs)+2)
	for _, r := range sp.ptrs[:1+moeFirstExpert] {
		args = append(args, uintptr(pr.ptr(r)))
	}
	return append(args, uintptr(gate), uintptr(up), uintptr(down))
}

// kernelIndex is the index in sh.fns of lowered step j's kernel.
func (pr *program) kernelIndex(j int) int {
	k := 0
	for _, sp := range pr.sh.lw.steps[:j] {
		if sp.kernel != nil {
			k++
		}
	}
	return k
}
