package ptxemu

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/kilnml/kiln/ptx"
)

// Approx selects how approximate instructions (ex2.approx, lg2.approx,
// rsqrt.approx, sqrt.approx, rcp.approx, div.approx, div.full,
// sin/cos/tanh.approx) compute.
type Approx uint8

const (
	// ApproxExact rounds the exact result correctly: one valid outcome
	// of every approximation.
	ApproxExact Approx = iota
	// ApproxBound moves each result away from the exact one by the
	// largest error the PTX ISA allows (the direction chosen by a hash
	// of the input, so runs are reproducible): what the worst hardware
	// could return.
	ApproxBound
)

// Options tune a launch. The zero value checks everything.
type Options struct {
	// Workers is how many blocks run at once (0: GOMAXPROCS; 1 runs
	// blocks in order, fully deterministic).
	Workers int
	// MaxSteps bounds the instructions one thread may execute (0: 1<<24),
	// so a kernel that never terminates fails instead of hanging.
	MaxSteps int64
	// NoRaceCheck turns off the shared-memory checks: the race detector
	// and the check that every byte read was written first.
	NoRaceCheck bool
	// AllowUninit lets a thread read a register it never wrote (it
	// reads 0) instead of failing.
	AllowUninit bool
	// Approx models the approximate instructions.
	Approx Approx
	// Blocks, when set, runs only these blocks (linear indices, x
	// fastest) of the grid: huge launches can be checked on a sample.
	Blocks []int
	// ReverseThreads schedules the threads of a block last to first,
	// which reorders unsynchronised accesses (a second run with it set
	// shakes out order dependences the race detector cannot see, such as
	// global-memory races between threads).
	ReverseThreads bool
}

// maxShared is the most shared memory an sm_80/sm_90 block can opt in to.
const maxShared = 227 << 10

// launchState is what every block of one launch shares.
type launchState struct {
	k      *kernel
	mem    *Memory
	params []byte
	geo    ptx.Launch
	opts   Options
	shared int // static + dynamic bytes per block
	failed atomic.Bool
}

// Launch runs kernel name over mem with the launch geometry l (Grid,
// Block, and l.Shared bytes of dynamic shared memory) and the arguments
// packed against the kernel's signature (ptx.Entry.Pack's rules: device
// pointers as uint64 or uintptr). It returns the first fault.
func (m *Module) Launch(mem *Memory, name string, l ptx.Launch, args ...any) error {
	return m.LaunchWith(Options{}, mem, name, l, args...)
}

// LaunchWith is Launch with options.
func (m *Module) LaunchWith(o Options, mem *Memory, name string, l ptx.Launch, args ...any) error {
	k, err := m.kernel(name)
	if err != nil {
		return err
	}
	if err := l.Validate(); err != nil {
		return fmt.Errorf("emu: %s: %w", name, err)
	}
	params, err := k.entry.Pack(args...)
	if err != nil {
		return fmt.Errorf("emu: %w", err)
	}
	return m.launch(o, mem, k, l, params)
}

// LaunchPacked is LaunchWith with the arguments already packed against
// the kernel's signature (ptx.Entry.Pack's layout), as a driver receives
// them in cuLaunchKernel's parameter buffer: a stand-in driver runs the
// launches a program queues through it.
func (m *Module) LaunchPacked(o Options, mem *Memory, name string, l ptx.Launch, params []byte) error {
	k, err := m.kernel(name)
	if err != nil {
		return err
	}
	if err := l.Validate(); err != nil {
		return fmt.Errorf("emu: %s: %w", name, err)
	}
	if _, size := k.entry.Layout(); len(params) < size {
		return fmt.Errorf("emu: %s: %d bytes of parameters, the entry's take %d", name, len(params), size)
	}
	return m.launch(o, mem, k, l, params)
}

// launch runs k with packed params.
func (m *Module) launch(o Options, mem *Memory, k *kernel, l ptx.Launch, params []byte) error {
	name := k.name
	if o.MaxSteps <= 0 {
		o.MaxSteps = 1 << 24
	}
	ls := &launchState{k: k, mem: mem, params: params, geo: l, opts: o}
	ls.shared = k.shared
	if k.dynamic != nil {
		ls.shared = int(k.dynamic.off) + l.Shared
	}
	if ls.shared > maxShared {
		return fmt.Errorf("emu: %s: %d bytes of shared memory per block (at most %d)", name, ls.shared, maxShared)
	}
	if k.shared > ptx.MaxStaticShared {
		return fmt.Errorf("emu: %s: %d bytes of static shared memory (at most %d)", name, k.shared, ptx.MaxStaticShared)
	}
	mem.mu.RLock()
	defer mem.mu.RUnlock()
	return ls.run()
}

// run distributes blocks over workers and returns the fault of the
// lowest-numbered failing block.
func (ls *launchState) run() error {
	n := ls.geo.Blocks()
	pick := func(i int) int { return i }
	if bs := ls.opts.Blocks; bs != nil {
		for _, b := range bs {
			if b < 0 || b >= n {
				return fmt.Errorf("emu: %s: Options.Blocks names block %d of %d", ls.k.name, b, n)
			}
		}
		n = len(bs)
		pick = func(i int) int { return bs[i] }
	}
	if n == 0 {
		return nil
	}
	workers := ls.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	var next atomic.Int64
	errs := make([]*Error, workers)
	errAt := make([]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := newBlock(ls)
			for !ls.failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := b.run(pick(i)); err != nil {
					errs[w], errAt[w] = err, i
					ls.failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	var first *Error
	at := n
	for w, e := range errs {
		if e != nil && errAt[w] < at {
			first, at = e, errAt[w]
		}
	}
	if first != nil {
		return first
	}
	return nil
}
