package ptxemu

import (
	"math"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/cuda"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// TestDemoEncoderEndToEnd compiles the demo encoder for the CPU, lowers
// the same fused, planned graph for CUDA (cuda.Lower, no driver needed),
// runs every launch and copy in order on an emulated device holding the
// weight region and the arena, and compares the output with the CPU run.
func TestDemoEncoderEndToEnd(t *testing.T) {
	t.Parallel()
	cfg := demo.Tiny
	cfg.Seq = 8
	for _, fuseOff := range []bool{false, true} {
		g := demo.Encoder(cfg)
		cg, err := kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Fuse: &fuse.Options{Off: fuseOff}}).Compile(g)
		if err != nil {
			t.Fatal(err)
		}
		weights := demo.Weights(g, 1)
		for name, w := range weights {
			if err := cg.SetParam(name, w); err != nil {
				t.Fatal(err)
			}
		}
		ids, mask := demo.Inputs(cfg, 2)
		idBytes, maskBytes := tensor.Bytes(ids), tensor.Bytes(mask)
		outs, err := cg.RunTyped(kiln.TypedInput{Name: "input_ids", Data: idBytes, DType: tensor.I64},
			kiln.TypedInput{Name: "attention_mask", Data: maskBytes, DType: tensor.F32})
		if err != nil {
			t.Fatal(err)
		}
		want := tensor.Elems[float32](outs[0].Data)

		params := map[string][]byte{}
		for name, w := range weights {
			params[name] = tensor.Bytes(w)
		}
		res, launches := runLowered(t, cg.Graph(), cg.Plan(), map[string][]byte{
			"input_ids": idBytes, "attention_mask": maskBytes,
		}, params)
		got := tensor.Elems[float32](res[0])
		cg.Close()
		if launches < 10 {
			t.Fatalf("fuse off %v: only %d launches", fuseOff, launches)
		}
		bad, worst := 0, 0.0
		for i := range want {
			w, g := float64(want[i]), float64(got[i])
			worst = max(worst, math.Abs(w-g)/(1+math.Abs(w)))
			if approx.Far(g, w, 1e-5*(1+math.Abs(w))) {
				if bad++; bad <= 5 {
					t.Errorf("fuse off %v: output[%d] = %v on the emulated GPU, %v on the CPU", fuseOff, i, g, w)
				}
			}
		}
		if bad > 0 {
			t.Errorf("fuse off %v: %d of %d outputs differ", fuseOff, bad, len(want))
		}
		t.Logf("fuse off %v: %d launches, largest difference %.2g (relative to 1+|cpu|)", fuseOff, launches, worst)
	}
}

// runLowered executes a lowered program on the emulator, with inputs and
// params given as raw bytes by name, and returns every output's bytes and
// the number of kernel launches.
func runLowered(t *testing.T, g *graph.Graph, p *plan.Plan, inputs, params map[string][]byte) ([][]byte, int) {
	t.Helper()
	module, steps, err := cuda.Lower(g, p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(module)
	if err != nil {
		t.Fatal(err)
	}
	mem := NewMemory()
	wbuf, arena := make([]byte, p.WeightBytes), make([]byte, p.ArenaBytes)
	base := map[plan.Region]uint64{}
	base[plan.Weights], _ = mem.Map(wbuf)
	base[plan.Arena], _ = mem.Map(arena)
	region := map[plan.Region][]byte{plan.Weights: wbuf, plan.Arena: arena}
	put := func(n *graph.Node, b []byte) {
		s := p.Slots[n.ID]
		if len(b) != s.Bytes {
			t.Fatalf("%s: %d bytes for a %d-byte slot", n, len(b), s.Bytes)
		}
		copy(region[s.Region][s.Offset:], b)
	}
	for _, n := range g.Nodes {
		switch {
		case n.Op == graph.OpConstant && n.Value != nil:
			put(n, n.Value.Data[:p.Slots[n.ID].Bytes])
		case n.Op == graph.OpParam:
			put(n, params[n.Name])
		case n.Op == graph.OpInput:
			put(n, inputs[n.Name])
		}
	}
	launches := 0
	for i, s := range steps {
		if s.Kernel == nil {
			from := region[s.CopyFrom.Region][s.CopyFrom.Offset:][:s.Bytes]
			copy(region[s.CopyTo.Region][s.CopyTo.Offset:], from)
			continue
		}
		args := make([]any, len(s.Args))
		for j, a := range s.Args {
			args[j] = base[a.Region] + uint64(a.Offset)
		}
		if err := m.LaunchWith(Options{}, mem, s.Kernel.Name, s.Kernel.Launch, args...); err != nil {
			t.Fatalf("step %d (%s): %v", i, s.Node, err)
		}
		launches++
	}
	var outs [][]byte
	for _, o := range g.Outputs() {
		s := p.Slots[o.ID]
		outs = append(outs, region[s.Region][s.Offset:s.Offset+s.Bytes])
	}
	return outs, launches
}
