package cuda

import (
	"fmt"
	"unsafe"

	"github.com/kilnml/kiln/graph"
)

// captureThreadLocal is CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: only this
// thread's unsafe calls (allocations, synchronisations) abort the capture,
// so other goroutines' programs keep running meanwhile.
const captureThreadLocal = 1

// capture records every step of pr on its stream into a CUDA graph and
// instantiates it. The steps are queued by the same enqueue Run uses, so
// the graph holds exactly the launches, copies and cuBLAS calls of a run.
func capture(pr *program) (graphH, execH uintptr, err error) {
	d := pr.sh.d
	l := d.l
	s := pr.stream.h
	if err := pr.moeCapturable(); err != nil {
		return 0, 0, err
	}
	err = d.do(func() error {
		// Place the MoE layers' weights first: allocating during the
		// capture would abort it.
		if err := pr.moePrepare(); err != nil {
			return err
		}
		if err := l.check("cuStreamBeginCapture", call(l.cuStreamBeginCapture, s, captureThreadLocal)); err != nil {
			return err
		}
		runErr := pr.enqueue()
		// End the capture even after a failed step, or the stream stays
		// in capture mode.
		endErr := l.check("cuStreamEndCapture", call(l.cuStreamEndCapture, s, uintptr(unsafe.Pointer(&graphH))))
		if runErr != nil {
			return fmt.Errorf("cuda: capturing the forward pass: %w", runErr)
		}
		if endErr != nil {
			return endErr
		}
		return l.check("cuGraphInstantiateWithFlags", call(l.cuGraphInstantiate, uintptr(unsafe.Pointer(&execH)), graphH, 0))
	})
	return graphH, execH, err
}

// destroyGraph releases an instantiated graph and its template (either
// may be 0).
func destroyGraph(d *Device, graphH, execH uintptr) error {
	l := d.l
	return d.do(func() error {
		var err error
		if execH != 0 {
			err = l.check("cuGraphExecDestroy", call(l.cuGraphExecDestroy, execH))
		}
		if graphH != 0 {
			if e := l.check("cuGraphDestroy", call(l.cuGraphDestroy, graphH)); err == nil {
				err = e
			}
		}
		return err
	})
}

// pinned is page-locked host memory: the driver copies it to and from
// the device by DMA, without staging, and asynchronously.
type pinned struct {
	d   *Device
	p   unsafe.Pointer // driver memory, outside Go's heap
	mem []byte
}

// stageAlign keeps every staged tensor on its own 256-byte boundary.
const stageAlign = 256

// newPinned allocates one page-locked block holding a tensor per node,
// each aligned, and returns the block and one view per node.
func newPinned(d *Device, nodes []*graph.Node, sizes []int) (*pinned, [][]byte, error) {
	total, offs := 0, make([]int, len(nodes))
	for i := range nodes {
		offs[i] = total
		total += (sizes[i] + stageAlign - 1) / stageAlign * stageAlign
	}
	pm := &pinned{d: d}
	views := make([][]byte, len(nodes))
	if total > 0 {
		err := d.do(func() error {
			return d.l.check("cuMemAllocHost", call(d.l.cuMemAllocHost, uintptr(unsafe.Pointer(&pm.p)), uintptr(total)))
		})
		if err != nil {
			return nil, nil, fmt.Errorf("%w (pinned staging of %d bytes)", err, total)
		}
		pm.mem = unsafe.Slice((*byte)(pm.p), total)
	}
	for i := range nodes {
		views[i] = pm.mem[offs[i] : offs[i]+sizes[i] : offs[i]+sizes[i]]
	}
	return pm, views, nil
}

// free releases the block; nil-safe and idempotent.
func (pm *pinned) free() error {
	if pm == nil || pm.p == nil {
		return nil
	}
	p := pm.p
	pm.p, pm.mem = nil, nil
	return pm.d.do(func() error { return pm.d.l.check("cuMemFreeHost", call(pm.d.l.cuMemFreeHost, uintptr(p))) })
}
