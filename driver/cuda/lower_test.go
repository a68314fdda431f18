package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/tensor"
)

// ptxas finds the assembler as the ptx package's tests do: KILN_PTXAS,
// PATH, then where setup-ci.sh extracts it.
func ptxas(t *testing.T) string {
	if p := os.Getenv("KILN_PTXAS"); p != "" {
		return p
	}
	if p, err := exec.LookPath("ptxas"); err == nil {
		return p
	}
	if _, err := os.Stat("/opt/cuda-deb/usr/bin/ptxas"); err == nil {
		return "/opt/cuda-deb/usr/bin/ptxas"
	}
	if os.Getenv("KILN_TEST_REQUIRE_PTXAS") == "1" {
		t.Fatal("KILN_TEST_REQUIRE_PTXAS=1 but no ptxas; run driver/cuda/setup-ci.sh")
	}
	t.Skip("no ptxas: run driver/cuda/setup-ci.sh or set KILN_PTXAS")
	return ""
}

// lowerCPU fuses and plans g the way a session does, then lowers it for
// CUDA without a device.
func lowerCPU(t *testing.T, g *graph.Graph, fuseOff bool) *lowered {
	t.Helper()
	cg, err := kiln.NewSession(kiln.CPU).WithOptions(kiln.Options{Fuse: &fuse.Options{Off: fuseOff}}).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	lw, err := lowerGraph(cg.Graph(), cg.Plan())
	if err != nil {
		t.Fatal(err)
	}
	return lw
}

func assembleModule(t *testing.T, src string) {
	t.Helper()
	p := ptxas(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "m.ptx")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"sm_80", "sm_90"} {
		out, err := exec.Command(p, "-arch="+arch, "-o", filepath.Join(dir, arch), file).CombinedOutput()
		if err != nil {
			t.Errorf("ptxas -arch=%s: %v\n%s", arch, err, out)
		}
	}
}

// TestLowerDemoEncoder: the demo encoder, fused and unfused, lowers to a
// kernel for every step; the small one's modules assemble for sm_80 and
// sm_90 (the full size differs only in the shapes baked in).
func TestLowerDemoEncoder(t *testing.T) {
	for _, cfg := range []demo.Config{demo.Tiny, demo.MiniLM} {
		for _, off := range []bool{false, true} {
			lw := lowerCPU(t, demo.Encoder(cfg), off)
			ops := map[graph.Op]int{}
			for _, s := range lw.steps {
				if s.kernel == nil {
					t.Errorf("step %s is a copy; the planner aliases reshapes", s.node)
					continue
				}
				ops[s.node.Op]++
				if err := s.kernel.Launch.Validate(); err != nil {
					t.Errorf("%s: %v", s.node, err)
				}
			}
			want := []graph.Op{graph.OpGather, graph.OpAttention, graph.OpLayerNorm}
			if off {
				want = append(want, graph.OpMatMul, graph.OpGelu, graph.OpAdd)
			} else {
				want = append(want, graph.OpFusedMatMul)
			}
			for _, op := range want {
				if ops[op] == 0 {
					t.Errorf("%+v fuse off %v: no %v step (steps by op: %v)", cfg, off, op, ops)
				}
			}
			if ops[graph.OpAttention] != cfg.Layers {
				t.Errorf("%d attention steps for %d layers", ops[graph.OpAttention], cfg.Layers)
			}
			if cfg == demo.Tiny {
				assembleModule(t, lw.module)
			}
		}
	}
}

// TestLowerOps covers every op the CUDA backend lowers, each in a graph
// of its own, and assembles the lot.
func TestLowerOps(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3, 8)
	h := g.Input("h", tensor.F16, 2, 3, 8)
	ids := g.Input("ids", tensor.I32, 5)
	w := g.Param("w", tensor.F32, 8, 6)
	v := g.Param("v", tensor.F32, 8)
	c6 := g.Param("c6", tensor.F32, 6)
	outs := []*graph.Node{
		g.Sigmoid(g.Mul(x, v)),
		g.Cast(h, tensor.F32),
		g.Softmax(x, 1),
		g.LogSoftmax(x, 2),
		g.LayerNorm(x, v, v, 2, 1e-5),
		g.RMSNorm(h, nil, 1, 1e-6),
		g.ReduceMean(x, true, 1, 2),
		g.ReduceMax(h, false),
		g.MatMul(x, w),
		g.MatMul(v, w),
		g.MatMul(g.Reshape(x, 6, 8), v),
		g.Gemm(g.Reshape(x, 6, 8), w, c6, 0.5, 1, false, false),
		g.Gelu(g.Add(g.MatMul(g.Abs(x), w), c6)),
		g.LayerNorm(g.Add(x, v), v, v, 2, 1e-5),
		g.RMSNorm(g.Add(x, x), v, 2, 1e-5),
		g.Gemm(w, g.Reshape(x, 6, 8), nil, 1, 0, true, true),
		g.Transpose(x, 2, 0, 1),
		g.Slice(x, graph.SliceSpec{Starts: []int{1}, Ends: []int{3}, Axes: []int{2}}),
		g.Concat(1, x, x, g.Neg(x)),
		g.Gather(w, ids, 0),
		g.Pad(x, []int{0, 1, 0, 0, 1, 2}, graph.PadReflect, 0),
		g.Expand(v, 4, 8),
		g.Tile(v, 2),
	}
	outs = append(outs, g.Split(x, 2, 3, 5)...)
	q := g.Reshape(x, 1, 2, 3, 8)
	outs = append(outs, g.Attention(q, q, q, nil, graph.AttentionOpts{Causal: true}))
	for i, o := range outs {
		g.OutputNamed("out"+string(rune('a'+i)), o)
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for _, off := range []bool{true, false} {
		lw := lowerCPU(t, g, off)
		if len(lw.steps) < len(outs) {
			t.Errorf("%d steps for %d outputs", len(lw.steps), len(outs))
		}
		ops := map[graph.Op]bool{}
		for _, s := range lw.steps {
			ops[s.node.Op] = true
		}
		if !off && !(ops[graph.OpFusedMatMul] && ops[graph.OpAddLayerNorm]) {
			t.Errorf("fusion made no FusedMatMul or AddLayerNorm: %v", ops)
		}
		assembleModule(t, lw.module)
	}
}

func TestLowerUnsupported(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F64, 4)
	g.Output(g.Sin(x))
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	_, err = lowerGraph(cg.Graph(), cg.Plan())
	if err == nil || !strings.Contains(err.Error(), "not supported on the GPU") {
		t.Errorf("Sin of F64: %v", err)
	}
}
