package cuda_test

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/cuda"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/tensor"
)

// compileNamed compiles g for dev and sets every param to values seeded
// by its name, so every device gets the same weights whatever order its
// fused graph lists them in.
func compileNamed(t *testing.T, g *graph.Graph, dev kiln.Device, feeds ...string) *kiln.CompiledGraph {
	t.Helper()
	cg, err := kiln.NewSession(dev).WithOptions(kiln.Options{Feeds: feeds}).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Close() })
	for _, p := range cg.Params() {
		h := fnv.New64a()
		h.Write([]byte(p.Name))
		rng := rand.New(rand.NewPCG(h.Sum64(), 3))
		w := make([]float32, p.Shape.NumElements())
		for i := range w {
			w[i] = float32(rng.NormFloat64() * 0.3)
		}
		if err := cg.SetParam(p.Name, w); err != nil {
			t.Fatal(err)
		}
	}
	return cg
}

// bindCaches binds both caches as zeroed GPU handles fed from outputs 1, 2.
func bindCaches(t *testing.T, cg *kiln.CompiledGraph, maxLen, d int) {
	t.Helper()
	for i, name := range []string{"k_cache", "v_cache"} {
		if err := cg.BindGPUHandle(name, make([]float32, maxLen*d)); err != nil {
			t.Fatal(err)
		}
		if err := cg.SetGPUHandleFeed(name, i+1); err != nil {
			t.Fatal(err)
		}
		if !cg.HasGPUHandle(name) {
			t.Fatalf("HasGPUHandle(%q) false after binding", name)
		}
	}
}

// TestGPUHandleDecode decodes maxLen tokens with the KV cache in GPU
// handles fed from the updated-cache outputs, on the CPU (the reference)
// and on cuda:0, checking every step's output and, on CUDA, that each
// step copies exactly its three small inputs to the device and its one
// unfed output back: zero bytes of the cache. Then the caches themselves,
// a clone's own handles, and Run reading a fed output from the device.
// Compiled with Options.Feeds naming the caches, the plan updates them in
// their own bytes and a run queues no device copy for them at all.
func TestGPUHandleDecode(t *testing.T) {
	needGPU(t)
	for _, feeds := range [][]string{nil, {"k_cache", "v_cache"}} {
		t.Run(fmt.Sprintf("feeds=%v", feeds), func(t *testing.T) { gpuDecode(t, feeds) })
	}
}

func gpuDecode(t *testing.T, feeds []string) {
	const maxLen, d = 64, 32
	g := testmodels.DecodeStep(maxLen, d)
	cpu, gpu := compileNamed(t, g, kiln.CPU), compileNamed(t, g, kiln.CUDA(0), feeds...)
	bindCaches(t, cpu, maxLen, d)
	bindCaches(t, gpu, maxLen, d)
	prog, err := gpu.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pre, post := cuda.HandleCopies(prog)
	t.Logf("device copies per run for the two caches: %d before the steps, %d after", pre, post)
	if feeds != nil && pre+post != 0 {
		t.Errorf("with Options.Feeds a run still copies the caches %d times on the device, want 0", pre+post)
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
			t.Errorf("step %d: %d bytes to the device and %d back, want %d and %d (the cache must not cross)", step, up, down, stepIn, stepOut)
		}
		closeTo(t, "step output", gpu.Output(0), cpu.Output(0), 1e-4)
		if t.Failed() {
			t.Fatalf("stopped at step %d", step)
		}
	}
	for _, name := range []string{"k_cache", "v_cache"} {
		want, err := cpu.ReadGPUHandle(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := gpu.ReadGPUHandle(name)
		if err != nil {
			t.Fatal(err)
		}
		closeTo(t, name, got, want, 1e-5)
	}
	// A clone starts from a copy of the handles and decodes on its own.
	c, err := gpu.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	x, pos, mask := testmodels.DecodeInputs(3, maxLen, d)
	orig, _ := gpu.ReadGPUHandle("k_cache")
	if _, err := c.RunSlots(x, pos, mask, nil, nil); err != nil {
		t.Fatal(err)
	}
	if now, _ := gpu.ReadGPUHandle("k_cache"); !slices.Equal(now, orig) {
		t.Error("a clone's run changed the original's handle")
	}
	// Run returns every output, the fed ones read from the device.
	outs, err := gpu.Run(kiln.In("x", x), kiln.In("pos", pos), kiln.In("mask", mask))
	if err != nil {
		t.Fatal(err)
	}
	wantOuts, err := cpu.Run(kiln.In("x", x), kiln.In("pos", pos), kiln.In("mask", mask))
	if err != nil {
		t.Fatal(err)
	}
	for o := range wantOuts {
		closeTo(t, "Run output", outs[o], wantOuts[o], 1e-4)
	}
	ck, _ := c.ReadGPUHandle("k_cache")
	closeTo(t, "clone's cache after one step", ck, wantOuts[1], 1e-4)
}

// TestGPUHandleRunFeed: RunFeedGPUHandle on CUDA refreshes the handle on
// the device for one run and returns that output; exact in F32 and F16.
func TestGPUHandleRunFeed(t *testing.T) {
	needGPU(t)
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16} {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			s, inc := g.Input("state", dt, 4), g.Input("inc", dt, 4)
			g.OutputNamed("next", g.Add(s, inc))
			g.OutputNamed("twice", g.Add(s, s))
			cg := compileNamed(t, g, kiln.CUDA(0))
			if err := cg.BindGPUHandle("state", []float32{1, 2, 3, 4}); err != nil {
				t.Fatal(err)
			}
			in := []kiln.Input{kiln.In("inc", []float32{10, 20, 30, 40})}
			got, err := cg.RunFeedGPUHandle(in, "state", 0)
			if err != nil {
				t.Fatal(err)
			}
			st, err := cg.ReadGPUHandle("state")
			if err != nil {
				t.Fatal(err)
			}
			if want := []float32{11, 22, 33, 44}; !slices.Equal(got, want) || !slices.Equal(st, want) {
				t.Fatalf("returned %v, handle %v; want both %v", got, st, want)
			}
			if _, err := cg.Run(in...); err != nil { // not fed: unchanged
				t.Fatal(err)
			}
			if err := cg.SetGPUHandleFeed("state", 1); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := cg.Run(in...); err != nil {
					t.Fatal(err)
				}
			}
			typed, err := cg.ReadGPUHandleTyped("state")
			if err != nil {
				t.Fatal(err)
			}
			want := tensor.New(dt, 4)
			wide, err := tensor.FromF32(tensor.Shape{4}, []float32{44, 88, 132, 176})
			if err != nil {
				t.Fatal(err)
			}
			if err := tensor.Convert(want, wide); err != nil {
				t.Fatal(err)
			}
			if typed.DType != dt || !slices.Equal(typed.Data, want.Data) {
				t.Errorf("after two runs fed by 2·state: %v % x, want % x", typed.DType, typed.Data, want.Data)
			}
		})
	}
}

// TestGPUHandleGraphModel captures a CompiledGraph with bound, fed KV
// cache handles into a CUDA graph and decodes by replay: the handles'
// inputs and fed outputs have no staging, each replay copies exactly the
// staged bytes, every step matches the CPU, the model's caches match at
// the end, and the CompiledGraph's own handles are untouched.
func TestGPUHandleGraphModel(t *testing.T) {
	needGPU(t)
	const maxLen, d = 64, 32
	g := testmodels.DecodeStep(maxLen, d)
	cpu, gpu := compileNamed(t, g, kiln.CPU), compileNamed(t, g, kiln.CUDA(0), "k_cache", "v_cache")
	bindCaches(t, cpu, maxLen, d)
	bindCaches(t, gpu, maxLen, d)
	m, err := cuda.NewGraphModel(gpu)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for i := 3; i < 5; i++ {
		if n := len(m.InputSlice(i)); n != 0 {
			t.Errorf("input %d is a handle but has %d staged bytes", i, n)
		}
	}
	for o := 1; o < 3; o++ {
		if n := len(m.OutputSlice(o)); n != 0 {
			t.Errorf("output %d feeds a handle but has %d staged bytes", o, n)
		}
	}
	stepIn, stepOut := int64(4*(d+2*maxLen)), int64(4*d)
	for step := range maxLen {
		x, pos, mask := testmodels.DecodeInputs(step, maxLen, d)
		if _, err := cpu.RunSlots(x, pos, mask, nil, nil); err != nil {
			t.Fatal(err)
		}
		copy(tensor.Elems[float32](m.InputSlice(0)), x)
		copy(tensor.Elems[float32](m.InputSlice(1)), pos)
		copy(tensor.Elems[float32](m.InputSlice(2)), mask)
		before := m.Transfers()
		if err := m.RunInPlace(); err != nil {
			t.Fatal(err)
		}
		after := m.Transfers()
		if up, down := after.ToDevice-before.ToDevice, after.ToHost-before.ToHost; up != stepIn || down != stepOut {
			t.Errorf("replay %d: %d bytes in, %d out; want %d and %d", step, up, down, stepIn, stepOut)
		}
		closeTo(t, "replayed step", tensor.Elems[float32](m.OutputSlice(0)), cpu.Output(0), 1e-4)
		if t.Failed() {
			t.Fatalf("stopped at step %d", step)
		}
	}
	for _, name := range []string{"k_cache", "v_cache"} {
		want, _ := cpu.ReadGPUHandle(name)
		got, err := m.ReadGPUHandle(name)
		if err != nil {
			t.Fatal(err)
		}
		closeTo(t, "model's "+name, got, want, 1e-5)
		own, err := gpu.ReadGPUHandle(name)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(own, func(v float32) bool { return v != 0 }) {
			t.Errorf("the model's replays changed the CompiledGraph's %s", name)
		}
	}
	if a := testing.AllocsPerRun(10, func() { _ = m.RunInPlace() }); a != 0 {
		t.Errorf("RunInPlace with handles allocates %v times", a)
	}
	// Run leaves the handles out and reads the fed outputs from the device.
	x, pos, mask := testmodels.DecodeInputs(0, maxLen, d)
	if _, err := m.Run(kiln.In("x", x), kiln.In("pos", pos), kiln.In("mask", mask), kiln.In("k_cache", make([]float32, maxLen*d))); err == nil {
		t.Error("model Run with a handle's input given: no error")
	}
	outs, err := m.Run(kiln.In("x", x), kiln.In("pos", pos), kiln.In("mask", mask))
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 3 || len(outs[1]) != maxLen*d {
		t.Fatalf("model Run: %d outputs", len(outs))
	}
	kc, _ := m.ReadGPUHandle("k_cache")
	closeTo(t, "model Run's fed output", outs[1], kc, 0)
}
