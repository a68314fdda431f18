package cuda

import (
	"os"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/ptxemu"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// userModule is PTX as a user would write it for an older target and ISA
// than kiln's: y = s·x² and y = s·(a − b), one thread per element.
// scaled_diff takes n as .u64 and reads its inputs in order, so a swapped
// pointer shows up as a sign change.
const userModule = `
.version 7.0
.target sm_50
.address_size 64

.visible .entry scaled_square(.param .u64 y, .param .u64 x, .param .f32 s, .param .u32 n)
{
	.reg .pred %p;
	.reg .b32 %r<5>;
	.reg .f32 %f<4>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [y];
	ld.param.u64 %rd2, [x];
	ld.param.f32 %f1, [s];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r2, %r2, %r3, %r4;
	setp.ge.u32 %p, %r2, %r1;
	@%p bra DONE;
	mul.wide.u32 %rd3, %r2, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.f32 %f2, [%rd4];
	mul.f32 %f3, %f2, %f2;
	mul.f32 %f3, %f3, %f1;
	add.s64 %rd5, %rd1, %rd3;
	st.global.f32 [%rd5], %f3;
DONE:
	ret;
}

.visible .entry scaled_diff(.param .u64 y, .param .u64 a, .param .u64 b, .param .f32 s, .param .u64 n)
{
	.reg .pred %p;
	.reg .b32 %r<5>;
	.reg .f32 %f<5>;
	.reg .b64 %rd<9>;
	ld.param.u64 %rd1, [y];
	ld.param.u64 %rd2, [a];
	ld.param.u64 %rd3, [b];
	ld.param.f32 %f1, [s];
	ld.param.u64 %rd4, [n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r2, %r2, %r3, %r4;
	cvt.u64.u32 %rd5, %r2;
	setp.ge.u64 %p, %rd5, %rd4;
	@%p bra DONE;
	shl.b64 %rd5, %rd5, 2;
	add.s64 %rd6, %rd2, %rd5;
	ld.global.f32 %f2, [%rd6];
	add.s64 %rd7, %rd3, %rd5;
	ld.global.f32 %f3, [%rd7];
	sub.f32 %f4, %f2, %f3;
	mul.f32 %f4, %f4, %f1;
	add.s64 %rd8, %rd1, %rd5;
	st.global.f32 [%rd8], %f4;
DONE:
	ret;
}
`

// mapF32 is a CPU implementation applying f to the inputs element by
// element (all inputs have the output's shape here).
func mapF32(f func(x ...float32) float32) func(out tensor.Tensor, ins ...tensor.Tensor) error {
	return func(out tensor.Tensor, ins ...tensor.Tensor) error {
		y := tensor.Elems[float32](out.Data)
		xs := make([][]float32, len(ins))
		for j, in := range ins {
			xs[j] = tensor.Elems[float32](in.Data)
		}
		args := make([]float32, len(ins))
		for i := range y {
			for j := range xs {
				args[j] = xs[j][i]
			}
			y[i] = f(args...)
		}
		return nil
	}
}

var (
	squareSpec = &graph.CustomSpec{Name: "ScaledSquare", Infer: graph.SameAsInput(0),
		CPU: mapF32(func(x ...float32) float32 { return 0.5 * x[0] * x[0] }),
		PTX: &graph.CustomPTX{Module: userModule, Entry: "scaled_square", Block: 4,
			Scalars: []any{float32(0.5), graph.CustomElems{}}}}
	diffSpec = &graph.CustomSpec{Name: "ScaledDiff", DType: tensor.F32, Shape: tensor.Shape{3, 5},
		CPU: mapF32(func(x ...float32) float32 { return 2 * (x[0] - x[1]) }),
		PTX: &graph.CustomPTX{Module: userModule, Entry: "scaled_diff",
			Scalars: []any{float32(2), graph.CustomElems{}}}}
)

// customGraph: kiln kernels and both custom kernels interleaved,
// out = relu(diff(square(x + w), x)).
func customGraph() *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 3, 5)
	w := g.Param("w", tensor.F32, 3, 5)
	q := g.Custom(squareSpec, g.Add(x, w))
	g.Output(g.Relu(g.Custom(diffSpec, q, x)), q)
	return g
}

// customInputs are customGraph's x and w, and its two outputs evaluated
// here from the formulas.
func customInputs() (xs, ws []float32, want [2][]float32) {
	xs, ws = make([]float32, 15), make([]float32, 15)
	want = [2][]float32{make([]float32, 15), make([]float32, 15)}
	for i := range xs {
		xs[i], ws[i] = float32(i)/4-1.5, float32(i%4)/3-0.5
		q := 0.5 * (xs[i] + ws[i]) * (xs[i] + ws[i])
		want[0][i], want[1][i] = max(0, 2*(q-xs[i])), q
	}
	return xs, ws, want
}

// runCustom compiles customGraph for dev and runs it on customInputs.
func runCustom(t *testing.T, dev kiln.Device) (*kiln.CompiledGraph, [][]float32) {
	t.Helper()
	xs, ws, _ := customInputs()
	cg, err := kiln.NewSession(dev).Compile(customGraph())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Close() })
	if err := cg.SetParam("w", ws); err != nil {
		t.Fatal(err)
	}
	outs, err := cg.Run(kiln.In("x", xs))
	if err != nil {
		t.Fatal(err)
	}
	return cg, outs
}

// checkCustom compares customGraph's outputs with the formulas.
func checkCustom(t *testing.T, what string, got [][]float32) {
	t.Helper()
	_, _, want := customInputs()
	for o := range want {
		for i, w := range want[o] {
			if approx.Far(float64(got[o][i]), float64(w), 1e-6) {
				t.Errorf("%s: output %d[%d] = %v, want %v", what, o, i, got[o][i], w)
			}
		}
	}
}

// TestCustomEmulated compiles customGraph for the CPU (the user's Go
// functions), lowers the same plan for CUDA and runs every step on the
// emulator (the user's PTX in its own module), and checks both against
// the formulas.
func TestCustomEmulated(t *testing.T) {
	cg, cpu := runCustom(t, kiln.CPU)
	checkCustom(t, "cpu", cpu)
	xs, ws, _ := customInputs()
	gpu := runEmulated(t, cg.Graph(), cg.Plan(), map[string][]byte{"x": tensor.Bytes(xs), "w": tensor.Bytes(ws)})
	checkCustom(t, "emulated", [][]float32{tensor.Elems[float32](gpu[0]), tensor.Elems[float32](gpu[1])})
	assembleModule(t, userModule)
}

// TestCustomGPU runs customGraph on cuda:0: the user's module loaded next
// to kiln's, its kernels launched with their scalars.
func TestCustomGPU(t *testing.T) {
	if n, err := Count(); err != nil || n == 0 {
		if os.Getenv("KILN_TEST_REQUIRE_GPU") == "1" {
			t.Fatalf("KILN_TEST_REQUIRE_GPU=1: no GPU (%v)", err)
		}
		t.Skipf("needs an NVIDIA GPU (%v)", err)
	}
	_, gpu := runCustom(t, kiln.CUDA(0))
	checkCustom(t, "cuda", gpu)
}

// runEmulated runs cuda.Lower's steps on the emulator, each kernel from
// its step's module, with inputs and params given by name.
func runEmulated(t *testing.T, g *graph.Graph, p *plan.Plan, feeds map[string][]byte) [][]byte {
	t.Helper()
	module, steps, err := Lower(g, p)
	if err != nil {
		t.Fatal(err)
	}
	mods := map[string]*ptxemu.Module{}
	mem := ptxemu.NewMemory()
	region := map[plan.Region][]byte{plan.Weights: make([]byte, p.WeightBytes), plan.Arena: make([]byte, p.ArenaBytes)}
	base := map[plan.Region]uint64{}
	for r, b := range region {
		if base[r], err = mem.Map(b); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range g.Nodes {
		s := p.Slots[n.ID]
		if b, ok := feeds[n.Name]; ok {
			copy(region[s.Region][s.Offset:s.Offset+s.Bytes], b)
		} else if n.Op == graph.OpConstant {
			copy(region[s.Region][s.Offset:s.Offset+s.Bytes], n.Value.Data)
		}
	}
	customs := 0
	for i, s := range steps {
		if s.Kernel == nil {
			copy(region[s.CopyTo.Region][s.CopyTo.Offset:], region[s.CopyFrom.Region][s.CopyFrom.Offset:][:s.Bytes])
			continue
		}
		src := module
		if s.Module != "" {
			src = s.Module
			customs++
		}
		m := mods[src]
		if m == nil {
			if m, err = ptxemu.Load(src); err != nil {
				t.Fatal(err)
			}
			mods[src] = m
		}
		var args []any
		for _, a := range s.Args {
			args = append(args, base[a.Region]+uint64(a.Offset))
		}
		if err := m.Launch(mem, s.Kernel.Name, s.Kernel.Launch, append(args, s.Scalars...)...); err != nil {
			t.Fatalf("step %d (%s): %v", i, s.Node, err)
		}
	}
	if customs != 2 || len(mods) != 2 {
		t.Errorf("%d custom steps, %d modules; want 2 of each (kiln's and the user's, loaded once)", customs, len(mods))
	}
	var outs [][]byte
	for _, o := range g.Outputs() {
		s := p.Slots[o.ID]
		outs = append(outs, region[s.Region][s.Offset:s.Offset+s.Bytes])
	}
	return outs
}

// TestCustomLowerErrors: a signature that does not match is reported when
// the graph is lowered for CUDA, naming the entry and parameter.
func TestCustomLowerErrors(t *testing.T) {
	bad := *diffSpec
	bad.PTX = &graph.CustomPTX{Module: userModule, Entry: "scaled_diff", Scalars: []any{float32(2), uint32(15)}}
	g := graph.New()
	x := g.Input("x", tensor.F32, 3, 5)
	g.Output(g.Custom(&bad, x, x))
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	_, _, err = Lower(cg.Graph(), cg.Plan())
	if err == nil || !strings.Contains(err.Error(), "entry scaled_diff parameter 4 (n): want .u32 or .b32") {
		t.Errorf("Lower: %v", err)
	}
}
