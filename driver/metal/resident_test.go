//go:build !darwin

package metal

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// hostProgram is a Program over g's plan whose arena is plain host
// memory, as shared storage is: what needs no GPU (binding and reading a
// handle in its input's bytes, refusing writes, counting bytes) runs;
// what needs the GPU (copies, private buffers) reports ErrNotSupported.
func hostProgram(t *testing.T, g *graph.Graph) *Program {
	t.Helper()
	p, err := plan.Make(g, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sh := &shared{d: &Device{}, g: g, p: p}
	sh.refs.Store(1)
	return &Program{sh: sh, arena: &Buffer{Bytes: make([]byte, p.ArenaBytes)}}
}

// TestResidentHost: a handle living in its input's bytes is bound and
// read through the arena, its input cannot be written, and bytes are
// counted; feeding it needs the GPU's copy kernel, which off darwin fails
// cleanly, leaving the handle unfed.
func TestResidentHost(t *testing.T) {
	g := graph.New()
	st := g.Input("state", tensor.F32, 4)
	inc := g.Input("inc", tensor.F32, 4)
	next := g.Add(st, inc)
	g.Output(next)
	pr := hostProgram(t, g)
	if r := pr.sh.p.Residence(st, nil); r != plan.InSlot {
		t.Fatalf("test layout changed: state is %v, want in slot", r)
	}
	data := tensor.Bytes([]float32{1, 2, 3, 4})
	if err := pr.BindResident(st, data); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 16)
	if err := pr.ReadResident(st, got); err != nil || !slices.Equal(got, data) {
		t.Fatalf("ReadResident = % x, %v; want % x", got, err, data)
	}
	if err := pr.Write(st, data); err == nil || !strings.Contains(err.Error(), "resident") {
		t.Errorf("Write to a resident input: %v", err)
	}
	if err := pr.Write(inc, data); err != nil {
		t.Fatal(err)
	}
	if tr := pr.Transfers(); tr.ToDevice != 32 || tr.ToHost != 16 {
		t.Errorf("transfers %+v, want 32 in, 16 out", tr)
	}
	if len(pr.pre)+len(pr.post) != 0 {
		t.Errorf("an unfed handle in its slot encodes %d copies per run", len(pr.pre)+len(pr.post))
	}
	err := pr.FeedResident(st, next)
	if !errors.Is(err, ErrNotSupported) {
		t.Errorf("feeding off darwin: %v, want ErrNotSupported", err)
	}
	if r := pr.residentFor(st); r.feed != nil || len(pr.post) != 0 {
		t.Errorf("a failed feed was left in place: feed %v, %d copies after a run", r.feed, len(pr.post))
	}
	if err := pr.FeedResident(inc, next); err == nil {
		t.Error("feeding an input without a handle: no error")
	}
	if err := pr.ReadResident(st, got[:4]); err == nil {
		t.Error("short read: no error")
	}
	pr.releaseResidents()
	if pr.residentFor(st) != nil {
		t.Error("handle left after releaseResidents")
	}
}

// TestResidentCopies: the copies a run encodes follow the residence: a
// private buffer is copied into the input before the dispatches, a fed
// output into the handle's home after them, nothing when in place.
func TestResidentCopies(t *testing.T) {
	g := graph.New()
	cache := g.Input("cache", tensor.F32, 64)
	fed := g.Exp(g.Add(g.Exp(cache), g.Input("row", tensor.F32, 64)))
	g.Output(fed)
	pr := hostProgram(t, g)
	off := pr.sh.p.Slots[cache.ID].Offset
	fo := pr.sh.p.Slots[fed.ID].Offset
	own := &Buffer{}
	cases := []struct {
		r         resident
		pre, post []bufCopy
	}{
		{resident{node: cache, off: off, size: 256, res: plan.InSlot}, nil, nil},
		{resident{node: cache, off: off, size: 256, res: plan.InSlot, feed: fed}, nil,
			[]bufCopy{{dst: pr.arena, doff: off, src: pr.arena, soff: fo, size: 256}}},
		{resident{node: cache, off: off, size: 256, res: plan.OwnBuffer, own: own}, []bufCopy{{dst: pr.arena, doff: off, src: own, size: 256}}, nil},
		{resident{node: cache, off: off, size: 256, res: plan.OwnBuffer, own: own, feed: fed},
			[]bufCopy{{dst: pr.arena, doff: off, src: own, size: 256}}, []bufCopy{{dst: own, src: pr.arena, soff: fo, size: 256}}},
		{resident{node: cache, off: off, size: 256, res: plan.InPlace, feed: fed}, nil, nil},
	}
	for i, c := range cases {
		pre, post := pr.copiesFor(&c.r)
		if !slices.Equal(pre, c.pre) || !slices.Equal(post, c.post) {
			t.Errorf("case %d (%v, fed %v): before %v after %v, want %v and %v", i, c.r.res, c.r.feed != nil, pre, post, c.pre, c.post)
		}
	}
	// Binding where a private buffer is needed fails off darwin and
	// leaves no handle.
	if r := pr.sh.p.Residence(cache, nil); r != plan.OwnBuffer {
		t.Fatalf("test layout changed: cache is %v, want own buffer", r)
	}
	if err := pr.BindResident(cache, make([]byte, 256)); !errors.Is(err, ErrNotSupported) {
		t.Errorf("binding into a private buffer off darwin: %v", err)
	}
	if pr.residentFor(cache) != nil {
		t.Error("a failed bind left a handle")
	}
}
