//go:build linux && (amd64 || arm64)

package cuda

import (
	"testing"
	"unsafe"

	"github.com/kilnml/kiln/ptx"
)

// TestEnqueueAllocs runs a program's per-run loop (kernel launches and
// device copies) against a stand-in driver: libc's abs, which takes the
// first argument and, given 0, returns CUDA_SUCCESS. No GPU is needed
// to see that a run makes no allocation per step; plain call would
// make one per driver call.
func TestEnqueueAllocs(t *testing.T) {
	h, err := dlopen("libc.so.6")
	if err != nil {
		t.Skipf("no libc to stand in for the driver: %v", err)
	}
	abs := dlsym(h, "abs")
	if abs == 0 {
		t.Skip("libc has no abs")
	}
	l := &lib{path: "libc-stand-in", cuLaunchKernel: abs, cuMemcpyDtoDAsync: abs, cuCtxSetCurrent: abs}
	pr := &program{sh: &shared{d: &Device{l: l}}, stream: &Stream{}}
	grid := ptx.Launch{Grid: [3]int{4, 1, 1}, Block: [3]int{128, 1, 1}}
	for i := range 8 {
		if i%3 == 2 {
			pr.steps = append(pr.steps, step{isCopy: true, dst: 0, src: Ptr(4096 * i), bytes: 256})
			continue
		}
		pr.steps = append(pr.steps, step{fn: 0, launch: grid, args: newLaunchArgs(make([]byte, 8*(i+1)))})
	}
	if err := pr.enqueue(); err != nil {
		t.Fatalf("enqueue against the stand-in: %v", err)
	}
	if n := testing.AllocsPerRun(50, func() { _ = pr.enqueue() }); n != 0 {
		t.Errorf("a run of %d steps allocates %v times, want 0", len(pr.steps), n)
	}
	// Run adds making the context current (Device.do), which must not
	// allocate either: GraphModel.RunInPlace goes through it.
	if err := pr.Run(); err != nil {
		t.Fatalf("Run against the stand-in: %v", err)
	}
	if n := testing.AllocsPerRun(50, func() { _ = pr.Run() }); n != 0 {
		t.Errorf("Run allocates %v times, want 0", n)
	}
	// The arguments reached the stand-in through the owners' buffers:
	// cuLaunchKernel's 11, the last being the extra array's address.
	a := pr.steps[0].args
	if a.argv[1] != 4 || a.argv[4] != 128 || a.argv[10] == 0 || a.argv[10] != uintptr(unsafe.Pointer(&a.extra[0])) {
		t.Errorf("launch arguments %v", a.argv)
	}
	if pr.argv[1] != uintptr(4096*5) || pr.argv[2] != 256 {
		t.Errorf("copy arguments %v", pr.argv)
	}
	// A failing driver call still reports its name: abs(-5) is 5.
	pr.steps[0].fn = ^uintptr(4)
	if err := pr.enqueue(); err == nil {
		t.Error("a non-zero driver result gave no error")
	}
}
