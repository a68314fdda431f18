package kiln

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Mixture-of-experts observation: which experts the routers chose on the
// last forward (top-k capture) and how the routed token-expert pairs fall
// on resident and non-resident experts (residency accounting). Every
// OpMoE step of the CPU program (graph.MoEExperts, graph.MoE) is an MoE
// layer, numbered in forward (step) order; its kernel is wrapped once at
// compile time so that after it runs, its expert ids are counted per
// expert and, while capture is on, copied into buffers sized at compile
// time: a run allocates nothing either way. On the CPU residency is
// accounting only: every expert runs on the CPU whatever the masks say.
// OpMoE nodes inside a Loop body are not observed.
//
// A program on a device that places experts (exec.MoEPlacer: CUDA)
// gets the masks too: there a non-resident expert's weights stay off the
// device and its token rows run on the host (see driver/cuda). The
// device copies each layer's ids aside after it runs (one small
// device-to-device copy per layer); they are read back and counted the
// first time the MoE API is called after a run, not per run, so capture
// and stats answer as on the CPU. A GraphModel's replays are not
// observed.

// MoELayerStats is one MoE layer's token accounting for one forward.
type MoELayerStats struct {
	// Resident and NonResident count the token-expert pairs (each of a
	// token's k routed slots) whose expert is resident, and not, under
	// the layer's mask (every expert is resident until a mask is set).
	Resident, NonResident int
	// PerExpert counts the pairs routed to each expert.
	PerExpert []int
}

// MoEResidencyStats is the token accounting of the last forward, one
// entry per MoE layer in forward order.
type MoEResidencyStats struct {
	Layers []MoELayerStats
}

// moeLayer is one OpMoE step's observation state.
type moeLayer struct {
	node     *graph.Node
	e        int
	ids      []uint32      // the capture: tokens × k, router order
	n        int           // how many of ids the last forward wrote
	counts   []int         // pairs per expert, last forward
	resident []bool        // the mask (all true until set)
	back     tensor.Tensor // a device program's ids, read back
}

// moeState is a CompiledGraph's MoE observation; a clone has its own.
type moeState struct {
	layers   []*moeLayer
	capture  bool // top-k capture enabled
	captured bool // a forward was captured since enabling or the last take
	counted  bool // a forward was counted since the last stats take

	placer  exec.MoEPlacer // the device program placing experts, or nil (CPU)
	pending bool           // placer ran a forward whose ids are not read yet
}

var errNoMoE = errors.New("kiln: the graph has no MoE layers (graph.MoE, graph.MoEExperts)")

// newMoEState finds the OpMoE steps of a CPU program and wraps them, or
// the layers of a device program that places experts.
func newMoEState(pr *exec.Program, x exec.Executable) *moeState {
	st := &moeState{}
	if pr == nil {
		if p, ok := x.(exec.MoEPlacer); ok {
			for _, n := range p.MoELayers() {
				l := newMoELayer(n)
				l.back, _ = tensor.Make(n.Inputs[1].DType, n.Inputs[1].Shape)
				st.layers = append(st.layers, l)
			}
			if len(st.layers) > 0 {
				st.placer = p
			}
		}
		return st
	}
	for i := range pr.Steps {
		if n := pr.Steps[i].Node; n.Op == graph.OpMoE {
			st.layers = append(st.layers, newMoELayer(n))
		}
	}
	st.wrap(pr)
	return st
}

// newMoELayer is an OpMoE node's observation state, every expert
// resident.
func newMoELayer(n *graph.Node) *moeLayer {
	e := n.Inputs[3].Shape[0]
	l := &moeLayer{node: n, e: e, ids: make([]uint32, n.Inputs[1].Shape.NumElements()), counts: make([]int, e), resident: make([]bool, e)}
	for x := range l.resident {
		l.resident[x] = true
	}
	return l
}

// readBack counts (and captures) the device program's last forward, once.
func (st *moeState) readBack() error {
	if !st.pending {
		return nil
	}
	st.pending = false
	for i, l := range st.layers {
		if err := st.placer.MoEIDs(i, l.back.Data); err != nil {
			return err
		}
		st.record(l, l.back)
	}
	return nil
}

// wrap makes the OpMoE steps of pr (the full program, or one specialised
// to an active extent, whose layers are the same in the same order)
// record their ids after running.
func (st *moeState) wrap(pr *exec.Program) {
	li := 0
	for i := range pr.Steps {
		s := &pr.Steps[i]
		if s.Node.Op != graph.OpMoE || li >= len(st.layers) {
			continue
		}
		l, run := st.layers[li], s.Kernel
		li++
		s.Kernel = func(ins []tensor.Tensor, out tensor.Tensor) error {
			if err := run(ins, out); err != nil {
				return err
			}
			st.record(l, ins[1])
			return nil
		}
	}
}

// record counts a layer's expert ids (checked in range by the kernel
// that just ran) and captures them while capture is on.
func (st *moeState) record(l *moeLayer, ids tensor.Tensor) {
	clear(l.counts)
	n := ids.NumElements()
	capture := st.capture && n <= len(l.ids)
	at := func(j int) int {
		if ids.DType == tensor.I64 {
			return int(ids.I64()[j])
		}
		return int(tensor.Elems[int32](ids.Data)[j])
	}
	for j := range n {
		e := at(j)
		if e >= 0 && e < l.e {
			l.counts[e]++
		}
		if capture {
			l.ids[j] = uint32(e)
		}
	}
	if capture {
		l.n = n
		st.captured = true
	}
	st.counted = true
}

// moeLayers acquires cg for a call of the MoE API (the caller releases
// it) and returns the layers; on an error (in use, closed, no MoE
// layers) cg is not held.
func (cg *CompiledGraph) moeLayers() ([]*moeLayer, error) {
	if err := cg.acquire(useGraph); err != nil {
		return nil, err
	}
	if cg.closed || len(cg.moe.layers) == 0 {
		cg.release(useGraph)
		if cg.closed {
			return nil, errClosed
		}
		return nil, errNoMoE
	}
	if err := cg.moe.readBack(); err != nil {
		cg.release(useGraph)
		return nil, err
	}
	return cg.moe.layers, nil
}

// EnableMoETopKCapture turns on the capture of every MoE layer's
// router top-k expert ids; each later forward overwrites the capture,
// which TakeMoETopKCapture returns. numExperts must be every layer's
// expert count. The capture buffers are allocated at compile time, so
// runs allocate nothing with capture on.
func (cg *CompiledGraph) EnableMoETopKCapture(numExperts int) error {
	layers, err := cg.moeLayers()
	if err != nil {
		return err
	}
	defer cg.release(useGraph)
	for i, l := range layers {
		if l.e != numExperts {
			return fmt.Errorf("kiln: EnableMoETopKCapture(%d): MoE layer %d (%s) has %d experts", numExperts, i, l.node.Name, l.e)
		}
	}
	cg.moe.capture, cg.moe.captured = true, false
	return nil
}

// TakeMoETopKCapture returns the expert ids each MoE layer's router chose
// on the last forward, one slice per layer in forward order, each tokens
// × k in router order (a token's k ids best first, as TopK gives them:
// ties to the lower id). It fails when capture is off or no forward ran
// since it was enabled or last taken. Capture stays on.
func (cg *CompiledGraph) TakeMoETopKCapture() ([][]uint32, error) {
	layers, err := cg.moeLayers()
	if err != nil {
		return nil, err
	}
	defer cg.release(useGraph)
	if !cg.moe.capture {
		return nil, errors.New("kiln: TakeMoETopKCapture: capture is off (EnableMoETopKCapture turns it on)")
	}
	if !cg.moe.captured {
		return nil, errors.New("kiln: TakeMoETopKCapture: no forward ran since capture was enabled or last taken")
	}
	out := make([][]uint32, len(layers))
	for i, l := range layers {
		out[i] = append([]uint32(nil), l.ids[:l.n]...)
	}
	cg.moe.captured = false
	return out, nil
}

// SetMoEResidentExperts marks which experts are resident (mask[e]: expert
// e is resident), the same for every MoE layer, so mask must have as
// many entries as every layer has experts; nil makes every expert
// resident again. On the CPU this changes only the accounting of
// TakeMoEResidencyStats. On CUDA a non-resident expert's weights leave
// device memory and its token rows run on the host (re-planned at the
// next run, not per run; see driver/cuda); a layer that cannot split
// there (not F32, or an expert weight that is not a param of its own)
// makes a mask with a non-resident expert an error, and nothing changes.
func (cg *CompiledGraph) SetMoEResidentExperts(mask []bool) error {
	layers, err := cg.moeLayers()
	if err != nil {
		return err
	}
	defer cg.release(useGraph)
	for i, l := range layers {
		if mask != nil && len(mask) != l.e {
			return fmt.Errorf("kiln: SetMoEResidentExperts: mask of %d entries, MoE layer %d (%s) has %d experts", len(mask), i, l.node.Name, l.e)
		}
	}
	if err := cg.moe.place(slices.Repeat([][]bool{mask}, len(layers))); err != nil {
		return fmt.Errorf("kiln: SetMoEResidentExperts: %w", err)
	}
	for _, l := range layers {
		setMask(l.resident, mask)
	}
	return nil
}

// place hands the masks to a device program that places experts (the
// CPU has nothing to place).
func (st *moeState) place(masks [][]bool) error {
	if st.placer == nil {
		return nil
	}
	return st.placer.SetMoEResident(masks)
}

// setMask copies mask into dst, or makes every entry true for nil.
func setMask(dst, mask []bool) {
	if mask == nil {
		for i := range dst {
			dst[i] = true
		}
		return
	}
	copy(dst, mask)
}

// SetMoEResidentExpertsPerLayer sets each MoE layer's resident experts:
// masks[i] for layer i in forward order (nil: all resident), with one
// entry per expert of that layer. On CUDA it places the experts as
// SetMoEResidentExperts does.
func (cg *CompiledGraph) SetMoEResidentExpertsPerLayer(masks [][]bool) error {
	layers, err := cg.moeLayers()
	if err != nil {
		return err
	}
	defer cg.release(useGraph)
	if len(masks) != len(layers) {
		return fmt.Errorf("kiln: SetMoEResidentExpertsPerLayer: %d masks for %d MoE layers", len(masks), len(layers))
	}
	for i, l := range layers {
		if masks[i] != nil && len(masks[i]) != l.e {
			return fmt.Errorf("kiln: SetMoEResidentExpertsPerLayer: mask %d has %d entries, MoE layer %d (%s) has %d experts", i, len(masks[i]), i, l.node.Name, l.e)
		}
	}
	if err := cg.moe.place(masks); err != nil {
		return fmt.Errorf("kiln: SetMoEResidentExpertsPerLayer: %w", err)
	}
	for i, l := range layers {
		setMask(l.resident, masks[i])
	}
	return nil
}

// TakeMoEResidencyStats returns the token accounting of the last forward
// under the current masks: per MoE layer, the token-expert pairs on
// resident and on non-resident experts and per expert. It fails when no
// forward ran since it was last taken.
func (cg *CompiledGraph) TakeMoEResidencyStats() (MoEResidencyStats, error) {
	layers, err := cg.moeLayers()
	if err != nil {
		return MoEResidencyStats{}, err
	}
	defer cg.release(useGraph)
	if !cg.moe.counted {
		return MoEResidencyStats{}, errors.New("kiln: TakeMoEResidencyStats: no forward ran since the stats were last taken")
	}
	st := MoEResidencyStats{Layers: make([]MoELayerStats, len(layers))}
	for i, l := range layers {
		ls := MoELayerStats{PerExpert: append([]int(nil), l.counts...)}
		for e, c := range l.counts {
			if l.resident[e] {
				ls.Resident += c
			} else {
				ls.NonResident += c
			}
		}
		st.Layers[i] = ls
	}
	cg.moe.counted = false
	return st, nil
}

// cloneMoE gives a clone the masks and capture setting of cg, with its
// own buffers.
func (cg *CompiledGraph) cloneMoE(c *CompiledGraph) {
	c.moe.capture = cg.moe.capture
	for i, l := range c.moe.layers {
		if i < len(cg.moe.layers) {
			copy(l.resident, cg.moe.layers[i].resident)
		}
	}
}
