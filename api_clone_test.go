package kiln_test

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/tensor"
)

// TestClone checks that a clone computes the same results over the same
// weights but in its own arena, and that weights stay shared.
func TestClone(t *testing.T) {
	g, feeds := smallMLP(t)
	cg := compileSet(t, kiln.NewSession(kiln.CPU), g, feeds)
	c, err := cg.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	x := feeds["x"].F32()
	if _, err := cg.RunSlots(x); err != nil {
		t.Fatal(err)
	}
	if unsafe.SliceData(cg.Arena()) == unsafe.SliceData(c.Arena()) {
		t.Fatal("clone shares the original's arena")
	}
	// Running the clone on other data leaves the original's view alone.
	if _, err := c.RunSlots(make([]float32, 6)); err != nil {
		t.Fatal(err)
	}
	if !equal(cg.Output(0), smallMLPWant) {
		t.Errorf("original's output after the clone ran: %v, want %v", cg.Output(0), smallMLPWant)
	}
	if want := []float32{0.5, -0.5, 0.5, -0.5}; !equal(c.Output(0), want) {
		t.Errorf("clone with x = 0: %v, want %v", c.Output(0), want)
	}
	if _, err := c.RunSlots(x); err != nil {
		t.Fatal(err)
	}
	if !equal(c.Output(0), smallMLPWant) {
		t.Errorf("clone: %v, want %v", c.Output(0), smallMLPWant)
	}
	// A param set on either after cloning is seen by both.
	if err := cg.SetParam("b2", []float32{1, 2}); err != nil {
		t.Fatal(err)
	}
	want := []float32{11, 1, 5, 0} // relu(x·w1+b1)·w2 is [10 -1 4 -2] (see smallMLPWant), plus the new b2
	for name, x2 := range map[string]*kiln.CompiledGraph{"original": cg, "clone": c} {
		if _, err := x2.RunSlots(x); err != nil {
			t.Fatal(err)
		}
		if !equal(x2.Output(0), want) {
			t.Errorf("%s after SetParam on the original: %v, want %v", name, x2.Output(0), want)
		}
	}
	if err := c.SetParam("b2", []float32{0.5, -0.5}); err != nil {
		t.Fatal(err)
	}
	if _, err := cg.RunSlots(x); err != nil {
		t.Fatal(err)
	}
	if !equal(cg.Output(0), smallMLPWant) {
		t.Errorf("original after SetParam on the clone: %v, want %v", cg.Output(0), smallMLPWant)
	}
	// Closing the clone does not close the original.
	c.Close()
	if _, err := cg.RunSlots(x); err != nil {
		t.Errorf("original after closing its clone: %v", err)
	}
}

// TestCloneBeforeParams clones before any param is set: setting them on
// the original is enough for the clone to run.
func TestCloneBeforeParams(t *testing.T) {
	g, feeds := smallMLP(t)
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	c, err := cg.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.RunSlots(feeds["x"].F32()); err == nil {
		t.Fatal("clone ran with no params set")
	}
	for _, p := range g.Params() {
		if err := cg.SetParam(p.Name, feeds[p.Name].F32()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.RunSlots(feeds["x"].F32()); err != nil {
		t.Fatal(err)
	}
	if !equal(c.Output(0), smallMLPWant) {
		t.Errorf("clone: %v, want %v", c.Output(0), smallMLPWant)
	}
}

// TestCloneConcurrent runs four clones of the tiny demo encoder at once,
// each on its own inputs, and checks every result against the
// interpreter. CI runs it under -race.
func TestCloneConcurrent(t *testing.T) {
	cfg := demo.Tiny
	g := demo.Encoder(cfg)
	weights := demo.Weights(g, 1)
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	feeds := map[string]tensor.Tensor{}
	for _, p := range g.Params() {
		if err := cg.SetParam(p.Name, weights[p.Name]); err != nil {
			t.Fatal(err)
		}
		feeds[p.Name], _ = tensor.FromF32(p.Shape, weights[p.Name])
	}
	const workers, runs = 4, 5
	type job struct {
		in   []kiln.TypedInput
		want []tensor.Tensor
	}
	jobs := make([][]job, workers)
	for w := range workers {
		for r := range 2 { // two input sets per worker, alternated
			ids, mask := demo.Inputs(cfg, uint64(10*w+r))
			for i := range mask { // vary the masks too
				if (i+w+r)%5 == 0 {
					mask[i] = -10000
				}
			}
			f := map[string]tensor.Tensor{}
			for k, v := range feeds {
				f[k] = v
			}
			f["input_ids"], _ = tensor.FromI64(g.Inputs()[0].Shape, ids)
			f["attention_mask"], _ = tensor.FromF32(g.Inputs()[1].Shape, mask)
			jobs[w] = append(jobs[w], job{in: typedInputs(g, f), want: interpret(t, g, f)})
		}
	}
	clones := make([]*kiln.CompiledGraph, workers)
	for w := range clones {
		if clones[w], err = cg.Clone(); err != nil {
			t.Fatal(err)
		}
		defer clones[w].Close()
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			for r := range runs {
				j := jobs[w][r%2]
				got, err := clones[w].RunTyped(j.in...)
				if err != nil {
					errs[w] = err
					return
				}
				v, _ := tensor.View(got[0].DType, got[0].Shape, got[0].Data)
				if err := closeTo(v.F32(), j.want[0].F32(), refTol); err != nil {
					errs[w] = fmt.Errorf("run %d: %w", r, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("clone %d: %v", w, err)
		}
	}
}
