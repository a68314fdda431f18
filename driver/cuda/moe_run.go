package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// placeSplit gives m compact device weights of its mask's resident
// experts (rows in expert order), the remap and the split's buffers, and
// prepares its kernels' arguments and the host part.
func (pr *program) placeSplit(m *moeRun) error {
	m.leaveFull()
	if err := pr.freeSplit(m); err != nil {
		return err
	}
	d := pr.sh.d
	e := len(m.mask)
	remap := make([]int32, e)
	m.nres = 0
	for x, r := range m.mask {
		remap[x] = -1
		if r {
			remap[x] = int32(m.nres)
			m.nres++
		}
	}
	s := m.s
	s.mu.Lock()
	for w, p := range m.l.experts {
		if s.host[w] == nil { // never written: zeros, as on the CPU
			s.host[w] = make([]byte, pr.sh.p.Slots[p.ID].Bytes)
		}
	}
	host := s.host
	s.mu.Unlock()
	for w, p := range m.l.experts {
		per := pr.sh.p.Slots[p.ID].Bytes / e
		b, err := d.Alloc(per * m.nres)
		if err != nil {
			return err
		}
		m.compact[w] = b
		for x, r := range remap {
			if r >= 0 {
				if err := pr.stream.Upload(b, int(r)*per, host[w][x*per:(x+1)*per]); err != nil {
					return err
				}
				pr.up.Add(int64(per))
			}
		}
		if m.ins == nil {
			m.ins = make([]tensor.Tensor, 6)
		}
		m.ins[moeFirstExpert+w] = tensor.Tensor{DType: p.DType, Shape: p.Shape, Data: host[w]}
	}
	var err error
	if m.remap, err = d.Alloc(4 * e); err != nil {
		return err
	}
	if err := pr.stream.Upload(m.remap, 0, tensor.Bytes(remap)); err != nil {
		return err
	}
	if err := pr.splitBuffers(m); err != nil {
		return err
	}
	sp := pr.sh.lw.steps[m.l.step]
	args := append(pr.stepArgs(m.l, m.compact[0].Ptr, m.compact[1].Ptr, m.compact[2].Ptr), uintptr(m.remap.Ptr), uintptr(m.zero.Ptr))
	buf, err := m.fnSplit.Entry.Pack(args...)
	if err != nil {
		return err
	}
	m.resid = newLaunchArgs(buf)
	out := uintptr(pr.ptr(sp.ptrs[0]))
	if buf, err = m.fnAdd.Entry.Pack(out, out, uintptr(m.addend.Ptr)); err != nil {
		return err
	}
	m.add, m.split = newLaunchArgs(buf), true
	pr.steps[m.l.step].variant = "split" // host and device (Stats: MoE/split)
	return nil
}

// splitBuffers makes, once, what every split placement of m uses: the
// zero and addend buffers, the host scratch and the host part.
func (pr *program) splitBuffers(m *moeRun) error {
	if m.host != nil {
		return nil
	}
	d, n := pr.sh.d, m.l.node
	var err error
	outBytes := pr.sh.p.Slots[n.ID].Bytes
	if m.zero, err = d.Alloc(outBytes); err != nil {
		return err
	}
	if err := pr.stream.Upload(m.zero, 0, make([]byte, outBytes)); err != nil {
		return err
	}
	if m.addend, err = d.Alloc(outBytes); err != nil {
		return err
	}
	for i, in := range n.Inputs[:moeFirstExpert] {
		if m.ins[i], err = tensor.Make(in.DType, in.Shape); err != nil {
			return err
		}
	}
	if m.sum, err = tensor.Make(tensor.F32, n.Shape); err != nil {
		return err
	}
	pool := exec.DefaultPool()
	env := ops.Env{For: pool.NewRunner().For, Threads: pool.Workers(), WeightsVersion: &m.s.wver}
	host, err := ops.NewMoEHost(n, env)
	if err != nil {
		return err
	}
	m.host = host
	return nil
}

// runMoE queues step s, an OpMoE layer: its kernel over full weights,
// or the split; then the copy of its ids kept for MoEIDs. The caller
// holds the context.
func (pr *program) runMoE(s *step) error {
	m := s.moe
	l := pr.sh.d.l
	var err error
	if m.split {
		err = pr.runSplit(m)
	} else {
		err = s.args.launch(l, s.fn, s.launch, pr.stream.h)
	}
	if err != nil {
		return err
	}
	ids := pr.ptr(pr.sh.lw.steps[m.l.step].ptrs[2])
	return l.check("cuMemcpyDtoDAsync", pr.argv.call(l.cuMemcpyDtoDAsync, uintptr(m.keep.Ptr), uintptr(ids), uintptr(m.idBytes), pr.stream.h))
}

// runSplit is one forward of a split layer: read its inputs back, queue
// the resident experts' kernel, compute the others' sum on the host
// while the GPU runs it, upload the sum and queue its addition.
func (pr *program) runSplit(m *moeRun) error {
	l, st := pr.sh.d.l, pr.stream.h
	sp := pr.sh.lw.steps[m.l.step]
	for i, t := range m.ins[:moeFirstExpert] {
		src := pr.ptr(sp.ptrs[1+i])
		if err := l.check("cuMemcpyDtoHAsync", pr.argv.call(l.cuMemcpyDtoHAsync, uintptr(unsafe.Pointer(unsafe.SliceData(t.Data))), uintptr(src), uintptr(len(t.Data)), st)); err != nil {
			return err
		}
		pr.down.Add(int64(len(t.Data)))
	}
	if err := pr.stream.sync(); err != nil {
		return err
	}
	if err := m.resid.launch(l, m.fnSplit.h, m.l.split.Launch, st); err != nil {
		return err
	}
	if err := m.host.Run(m.ins, m.sum, m.mask); err != nil {
		return fmt.Errorf("the host's experts: %w", err)
	}
	if err := l.check("cuMemcpyHtoDAsync", pr.argv.call(l.cuMemcpyHtoDAsync, uintptr(m.addend.Ptr), uintptr(unsafe.Pointer(unsafe.SliceData(m.sum.Data))), uintptr(len(m.sum.Data)), st)); err != nil {
		return err
	}
	pr.up.Add(int64(len(m.sum.Data)))
	return m.add.launch(l, m.fnAdd.h, m.l.add.Launch, st)
}

// cloneMoE gives clone c pr's masks (placed at c's first run).
func (pr *program) cloneMoE(c *program) {
	for i, m := range pr.moe {
		if m.mask != nil {
			c.moe[i].mask = append([]bool(nil), m.mask...)
		}
	}
}

// freeMoE releases the program's MoE placements.
func (pr *program) freeMoE() error {
	var errs []error
	for _, m := range pr.moe {
		if m.s != nil {
			errs = append(errs, pr.freeSplit(m))
			m.leaveFull()
		}
		errs = append(errs, m.zero.Free(), m.addend.Free(), m.keep.Free())
	}
	return errors.Join(errs...)
}

// moeCapturable refuses graph capture of a program with a split layer:
// the host step cannot be part of a CUDA graph.
func (pr *program) moeCapturable() error {
	for i, m := range pr.moe {
		if m.mask != nil {
			return fmt.Errorf("cuda: NewGraphModel: MoE layer %d (%s) runs split between the GPU and the host (its residency mask keeps experts off the device), and a CUDA graph cannot hold the host's step: clear the mask (SetMoEResidentExperts(nil)) or run without a graph", i, m.l.node)
		}
	}
	return nil
}

// moeDeviceBytes is the device memory pr holds for its MoE layers'
// expert weights: compact copies of split layers and the full copies its
// all-resident layers use (shared with clones).
func (pr *program) moeDeviceBytes() int {
	n := 0
	for _, m := range pr.moe {
		for w := range 3 {
			if m.compact[w] != nil {
				n += m.compact[w].Bytes
			}
		}
		if m.onFull {
			m.s.mu.Lock()
			for _, b := range m.s.full {
				n += b.Bytes
			}
			m.s.mu.Unlock()
		}
	}
	return n
}
