//go:build linux && (amd64 || arm64)

package cuda

import (
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// standIn is a driver whose calls all succeed without a GPU: libc's
// sched_yield ignores its arguments and returns 0 (CUDA_SUCCESS), and
// pipe stands in for cuMemAlloc, writing a non-zero "device address" (two
// file descriptors) into the pointer it is given and returning 0.
func standIn(t *testing.T) *Device {
	t.Helper()
	h, err := dlopen("libc.so.6")
	if err != nil {
		t.Skipf("no libc to stand in for the driver: %v", err)
	}
	ok, alloc := dlsym(h, "sched_yield"), dlsym(h, "pipe")
	if ok == 0 || alloc == 0 {
		t.Skip("libc lacks sched_yield or pipe")
	}
	l := &lib{path: "libc-stand-in", cuCtxSetCurrent: ok, cuMemcpyDtoDAsync: ok, cuMemcpyHtoDAsync: ok,
		cuMemcpyDtoHAsync: ok, cuStreamSynchronize: ok, cuStreamCreate: ok, cuStreamDestroy: ok,
		cuMemFree: ok, cuLaunchKernel: ok, cuMemAlloc: alloc}
	return &Device{l: l}
}

// closeFake closes the descriptors pipe wrote as a fake device address.
func closeFake(p Ptr) {
	if p != 0 {
		syscall.Close(int(uint32(p)))
		syscall.Close(int(uint64(p) >> 32))
	}
}

// residentProgram is a program over g's plan (no kernels: the copies
// around them are what is tested) on the stand-in driver, with its arena
// at a fixed fake address.
func residentProgram(t *testing.T, g *graph.Graph) *program {
	t.Helper()
	p, err := plan.Make(g, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := standIn(t)
	sh := &shared{d: d, g: g, p: p, lw: &lowered{}}
	sh.refs.Store(1)
	return &program{sh: sh, arena: &Buffer{d: d, Ptr: 1 << 40, Bytes: p.ArenaBytes}, stream: &Stream{d: d}}
}

// wantCopies checks pr's queued copies for its one handle r against what
// r's residence promises.
func wantCopies(t *testing.T, pr *program, r *resident, when string) {
	t.Helper()
	size := pr.sh.p.Slots[r.node.ID].Bytes
	slot := pr.arena.Ptr + Ptr(r.off)
	var pre, post []devCopy
	if r.res == plan.OwnBuffer {
		if r.own == nil || r.own.Ptr == 0 {
			t.Fatalf("%s: own buffer residence without a buffer", when)
		}
		pre = append(pre, devCopy{dst: slot, src: r.own.Ptr, bytes: size})
	} else if r.own != nil {
		t.Errorf("%s: %v residence keeps a buffer of its own", when, r.res)
	}
	if r.feed != nil && r.res != plan.InPlace {
		post = append(post, devCopy{dst: pr.homePtr(r), src: pr.outPtr(r.feed), bytes: size})
	}
	if !slices.Equal(pr.pre, pre) || !slices.Equal(pr.post, post) {
		t.Errorf("%s (%v): copies before %v after %v, want %v and %v", when, r.res, pr.pre, pr.post, pre, post)
	}
}

// TestResidentStandIn drives a device-resident handle through its life
// on the stand-in driver: bound (memory of its own, since later values
// reuse the input's bytes), fed (moved into its input's bytes, one copy
// after each run), read, refreshed, unfed (back to its own memory),
// cloned and closed; checking the copies every run queues, that a run
// queues them without allocating, that the input cannot be written, and
// the host-device byte counts.
func TestResidentStandIn(t *testing.T) {
	g := graph.New()
	cache := g.Input("cache", tensor.F32, 64)
	row := g.Input("row", tensor.F32, 64)
	b := g.Add(g.Exp(cache), row) // reuses the cache's bytes
	fed := g.Exp(b)
	g.Output(fed)
	pr := residentProgram(t, g)
	if r := pr.sh.p.Residence(cache, nil); r != plan.OwnBuffer {
		t.Fatalf("test layout changed: not fed, the cache is %v, want own buffer", r)
	}
	if r := pr.sh.p.Residence(cache, fed); r != plan.InSlot {
		t.Fatalf("test layout changed: fed, the cache is %v, want in slot", r)
	}
	data := tensor.Bytes(make([]float32, 64))
	if err := pr.BindResident(cache, data); err != nil {
		t.Fatal(err)
	}
	r := pr.residentFor(cache)
	wantCopies(t, pr, r, "bound")
	closeFake(r.own.Ptr)
	if err := pr.FeedResident(cache, fed); err != nil {
		t.Fatal(err)
	}
	wantCopies(t, pr, r, "fed")
	if err := pr.enqueue(); err != nil {
		t.Fatal(err)
	}
	// The last driver call of a run is the feed: output into the handle.
	if pr.argv[0] != uintptr(pr.arena.Ptr)+uintptr(r.off) || pr.argv[1] != uintptr(pr.outPtr(fed)) || pr.argv[2] != 256 {
		t.Errorf("feed copy arguments %v", pr.argv[:4])
	}
	if n := testing.AllocsPerRun(50, func() { _ = pr.Run() }); n != 0 {
		t.Errorf("a run with a fed handle allocates %v times, want 0", n)
	}
	if err := pr.Write(cache, data); err == nil || !strings.Contains(err.Error(), "resident") {
		t.Errorf("Write to a resident input: %v", err)
	}
	if err := pr.Write(row, data); err != nil {
		t.Fatal(err)
	}
	if err := pr.ReadResident(cache, make([]byte, 256)); err != nil {
		t.Fatal(err)
	}
	if err := pr.RefreshResident(cache, fed); err != nil {
		t.Fatal(err)
	}
	if tr := pr.Transfers(); tr.ToDevice != 512 || tr.ToHost != 256 {
		t.Errorf("transfers %+v, want 512 bytes in (bind, row) and 256 out (read)", tr)
	}
	// Errors: a short bind, an output of another size, a param, no handle.
	if err := pr.BindResident(cache, data[:8]); err == nil {
		t.Error("short bind: no error")
	}
	if err := pr.FeedResident(row, fed); err == nil {
		t.Error("feeding an input without a handle: no error")
	}
	if err := pr.ReadResident(cache, make([]byte, 8)); err == nil {
		t.Error("short read: no error")
	}
	// Unfed, it needs its own memory again; a clone gets its own copy.
	if err := pr.FeedResident(cache, nil); err != nil {
		t.Fatal(err)
	}
	wantCopies(t, pr, r, "unfed")
	c, err := pr.Clone()
	if err != nil {
		t.Fatal(err)
	}
	cp := c.(*program)
	cr := cp.residentFor(cache)
	if cr == nil || cr == r || cr.own == nil || cr.own.Ptr == r.own.Ptr || cr.res != r.res {
		t.Fatalf("clone's handle %+v, original's %+v", cr, r)
	}
	wantCopies(t, cp, cr, "clone")
	closeFake(cr.own.Ptr)
	closeFake(cp.arena.Ptr)
	closeFake(r.own.Ptr)
	if err := cp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pr.freeResidents(); err != nil || pr.res != nil {
		t.Errorf("freeResidents: %v, %d left", err, len(pr.res))
	}
}

// TestResidentInPlace: when the plan puts the fed output exactly on the
// input's bytes, a run queues no copy at all.
func TestResidentInPlace(t *testing.T) {
	g := graph.New()
	cache := g.Input("cache", tensor.F32, 64)
	fed := g.Neg(g.Exp(cache)) // the cache is dead once Exp ran
	g.Output(fed)
	pr := residentProgram(t, g)
	if r := pr.sh.p.Residence(cache, fed); r != plan.InPlace {
		t.Fatalf("test layout changed: the cache is %v, want in place", r)
	}
	if err := pr.BindResident(cache, make([]byte, 256)); err != nil {
		t.Fatal(err)
	}
	r := pr.residentFor(cache)
	if r.own != nil {
		closeFake(r.own.Ptr)
	}
	if err := pr.FeedResident(cache, fed); err != nil {
		t.Fatal(err)
	}
	wantCopies(t, pr, r, "fed in place")
	if len(pr.pre)+len(pr.post) != 0 {
		t.Errorf("in place: %d copies per run, want 0", len(pr.pre)+len(pr.post))
	}
}
