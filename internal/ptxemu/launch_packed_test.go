package ptxemu

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// TestLaunchPacked: a launch from a parameter buffer packed by
// ptx.Entry.Pack (what a driver receives) computes what LaunchWith does,
// here an F32 add checked against hand sums; a buffer shorter than the
// entry's parameters is an error naming the kernel.
func TestLaunchPacked(t *testing.T) {
	g := graph.New()
	k, _, err := ptx.EmitNode("add", g.Add(g.Input("a", tensor.F32, 5), g.Input("b", tensor.F32, 5)))
	if err != nil {
		t.Fatal(err)
	}
	src := ptx.Module(k)
	m, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	info, err := ptx.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	e, err := info.Entry("add")
	if err != nil {
		t.Fatal(err)
	}
	a, b, out := []float32{1, 2, 3, 4, 5}, []float32{0.5, -2, 10, 0, -7}, make([]float32, 5)
	mem := NewMemory()
	var addr [3]uint64
	for i, s := range [][]float32{out, a, b} {
		if addr[i], err = mem.Map(tensor.Bytes(s)); err != nil {
			t.Fatal(err)
		}
	}
	params, err := e.Pack(addr[0], addr[1], addr[2])
	if err != nil {
		t.Fatal(err)
	}
	if err := m.LaunchPacked(Options{}, mem, "add", k.Launch, params); err != nil {
		t.Fatal(err)
	}
	approx.Slices(t, "packed add", out, []float32{1.5, 0, 13, 4, -2}, 0, 0)
	err = m.LaunchPacked(Options{}, mem, "add", k.Launch, params[:8])
	if err == nil || !strings.Contains(err.Error(), "add: 8 bytes of parameters") {
		t.Errorf("short parameter buffer: %v", err)
	}
}
