package metal_test

import (
	"slices"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/tensor"
)

// TestMetalGPUHandleDecode decodes maxLen tokens with the KV cache in GPU
// handles fed from the updated-cache outputs, on the CPU (the reference)
// and on Metal, checking every step, that a step moves exactly its small
// inputs in and its one unfed output out, the caches at the end, a
// clone's own handles, and RunFeedGPUHandle's one-run refresh.
func TestMetalGPUHandleDecode(t *testing.T) {
	needMetal(t)
	const maxLen, d = 32, 16
	g := testmodels.DecodeStep(maxLen, d)
	cpu, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	gpu, err := kiln.NewSession(kiln.Metal()).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	fill(t, g, nil, cpu, gpu)
	for _, cg := range []*kiln.CompiledGraph{cpu, gpu} {
		for i, name := range []string{"k_cache", "v_cache"} {
			if err := cg.BindGPUHandle(name, make([]float32, maxLen*d)); err != nil {
				t.Fatal(err)
			}
			if err := cg.SetGPUHandleFeed(name, i+1); err != nil {
				t.Fatal(err)
			}
		}
	}
	stepIn, stepOut := int64(4*(d+2*maxLen)), int64(4*d)
	for step := range maxLen {
		x, pos, mask := testmodels.DecodeInputs(step, maxLen, d)
		if _, err := cpu.RunSlots(x, pos, mask, nil, nil); err != nil {
			t.Fatal(err)
		}
		before := gpu.Transfers()
		if _, err := gpu.RunSlots(x, pos, mask, nil, nil); err != nil {
			t.Fatal(err)
		}
		after := gpu.Transfers()
		if up, down := after.ToDevice-before.ToDevice, after.ToHost-before.ToHost; up != stepIn || down != stepOut {
			t.Errorf("step %d: %d bytes in, %d out; want %d and %d", step, up, down, stepIn, stepOut)
		}
		closeTo(t, "step output", gpu.Output(0), cpu.Output(0), 1e-4)
		if t.Failed() {
			t.Fatalf("stopped at step %d", step)
		}
	}
	for _, name := range []string{"k_cache", "v_cache"} {
		want, _ := cpu.ReadGPUHandle(name)
		got, err := gpu.ReadGPUHandle(name)
		if err != nil {
			t.Fatal(err)
		}
		closeTo(t, name, got, want, 1e-5)
	}
	c, err := gpu.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	orig, _ := gpu.ReadGPUHandle("v_cache")
	x, pos, mask := testmodels.DecodeInputs(1, maxLen, d)
	if _, err := c.RunSlots(x, pos, mask, nil, nil); err != nil {
		t.Fatal(err)
	}
	if now, _ := gpu.ReadGPUHandle("v_cache"); !slices.Equal(now, orig) {
		t.Error("a clone's run changed the original's handle")
	}
	// One run refreshing k_cache from v_cache_out, over its standing feed.
	in := []kiln.Input{kiln.In("x", x), kiln.In("pos", pos), kiln.In("mask", mask)}
	want, err := cpu.RunFeedGPUHandle(in, "k_cache", 2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := gpu.RunFeedGPUHandle(in, "k_cache", 2)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "RunFeedGPUHandle output", got, want, 1e-4)
	kc, err := gpu.ReadGPUHandleTyped("k_cache")
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "refreshed k_cache", tensor.Elems[float32](kc.Data), want, 1e-4)
}
