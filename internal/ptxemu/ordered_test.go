package ptxemu

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// indexTensor is an I64 tensor of the given shape with values in [0, hi):
// many duplicates when hi is small.
func indexTensor(r *rand.Rand, hi int, shape ...int) tensor.Tensor {
	t := tensor.New(tensor.I64, shape...)
	for i := range t.I64() {
		t.I64()[i] = int64(r.IntN(hi))
	}
	return t
}

// TestOrderedWrites: the kernels that apply duplicate indices in order
// (MaxUnpool's one block, each scatter output element walking its
// updates) give the CPU reference's bytes with a block's threads
// scheduled first to last and last to first, so the order comes from
// the kernel, not from the emulator's schedule (which the matrix's runs
// share); and a MaxUnpool whose later-duplicate check is cut out is
// caught by the reversed schedule.
func TestOrderedWrites(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(24, 6))
	type testCase struct {
		node  *graph.Node
		feeds map[string]tensor.Tensor
	}
	cases := map[string]func(g *graph.Graph) testCase{
		"maxunpool": func(g *graph.Graph) testCase {
			n := g.MaxUnpool(g.Input("x", tensor.F32, 1, 2, 30, 40), g.Input("i", tensor.I64, 1, 2, 30, 40), []int{1, 2, 60, 80})
			return testCase{n, map[string]tensor.Tensor{"x": randTensor(r, tensor.F32, false, 1, 2, 30, 40), "i": indexTensor(r, 100, 1, 2, 30, 40)}}
		},
		"scatternd": func(g *graph.Graph) testCase {
			n := g.ScatterND(g.Input("d", tensor.F32, 6, 4), g.Input("i", tensor.I64, 40, 1), g.Input("u", tensor.F32, 40, 4), graph.ScatterNone)
			return testCase{n, map[string]tensor.Tensor{"d": randTensor(r, tensor.F32, false, 6, 4), "i": indexTensor(r, 6, 40, 1), "u": randTensor(r, tensor.F32, false, 40, 4)}}
		},
		"scatterelements": func(g *graph.Graph) testCase {
			n := g.ScatterElements(g.Input("d", tensor.F32, 5, 9), g.Input("i", tensor.I64, 5, 30), g.Input("u", tensor.F32, 5, 30), 1, graph.ScatterNone)
			return testCase{n, map[string]tensor.Tensor{"d": randTensor(r, tensor.F32, false, 5, 9), "i": indexTensor(r, 9, 5, 30), "u": randTensor(r, tensor.F32, false, 5, 30)}}
		},
	}
	for name, build := range cases {
		g := graph.New()
		c := build(g)
		g.Output(c.node)
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		want, err := ops.Interpret(g, c.feeds)
		if err != nil {
			t.Fatal(err)
		}
		k, ins, err := ptx.EmitNode(name, c.node)
		if err != nil {
			t.Fatal(err)
		}
		var args []tensor.Tensor
		for _, in := range ins {
			args = append(args, c.feeds[in.Name].Clone())
		}
		run := func(src string, rev bool) []byte {
			out := tensor.New(c.node.DType, c.node.Shape...)
			for i := range out.Data {
				out.Data[i] = 0xAB
			}
			if err := runSrc(t, src, k.Name, k.Launch, Options{ReverseThreads: rev}, out, args...); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return out.Data
		}
		for _, rev := range []bool{false, true} {
			if got := run(ptx.Module(k), rev); !bytes.Equal(got, want[0].Data) {
				t.Errorf("%s (threads reversed: %v): the result differs from the reference", name, rev)
			}
		}
		if name != "maxunpool" {
			continue
		}
		lines := strings.Split(ptx.Module(k), "\n")
		for i, l := range lines {
			if strings.Contains(l, "setp.eq.s64") && strings.Contains(lines[i+1], "bra") {
				lines = append(lines[:i+1], lines[i+2:]...)
				break
			}
		}
		if got := run(strings.Join(lines, "\n"), true); bytes.Equal(got, want[0].Data) {
			t.Errorf("%s without its later-duplicate check still matches the reference with threads reversed: the test cannot see the order", name)
		}
	}
}
