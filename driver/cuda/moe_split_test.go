//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
	"sync"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/tensor"
)

// emuKind is the device kind the tests register for a backend on the
// emulated driver, so kiln's whole API runs a CUDA program on it.
const emuKind = "cuda-emu"

var (
	emuKindOnce sync.Once
	emuCur      *Device
)

// emuSession is a kiln session on the emulated driver (emuDevice's state
// reset); cuBLAS is off, as the emulator runs PTX only.
func emuSession(t *testing.T) (*kiln.Session, *emuDriver) {
	t.Helper()
	t.Setenv("KILN_CUBLAS", "off")
	d, e := emuDevice(t)
	emuCur = d
	emuKindOnce.Do(func() {
		exec.RegisterBackend(emuKind, func(int) (exec.Backend, error) { return &backend{d: emuCur}, nil })
	})
	return kiln.NewSession(kiln.Device{Kind: emuKind}), e
}

// moeSplitModel is two SwiGLU MoE layers (graph.MoE: router, softmax,
// top-k, renormalised) over E experts, the second reading the first's
// output, with random feeds.
func moeSplitModel(t *testing.T, tokens int) (*graph.Graph, map[string]tensor.Tensor) {
	t.Helper()
	const h, f, e, k = 16, 24, 4, 2
	g := graph.New()
	x := g.Input("x", tensor.F32, tokens, h)
	p := func(name string, dims ...int) *graph.Node { return g.Param(name, tensor.F32, dims...) }
	y := x
	for i := range 2 {
		s := fmt.Sprint(i)
		y = g.MoE(y, graph.MoESpec{Router: p("router"+s, h, e), Gate: p("gate"+s, e, h, f), Up: p("up"+s, e, h, f),
			Down: p("down"+s, e, f, h), K: k, Renormalize: true})
	}
	g.OutputNamed("y", y)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	feeds, err := testmodels.RandomFeeds(g, 26)
	if err != nil {
		t.Fatal(err)
	}
	return g, feeds
}

// compileFeeds compiles g on s and sets its params from feeds.
func compileFeeds(t *testing.T, s *kiln.Session, g *graph.Graph, feeds map[string]tensor.Tensor) *kiln.CompiledGraph {
	t.Helper()
	cg, err := s.Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Close() })
	for _, p := range cg.Params() {
		if err := cg.SetParamTyped(p.Name, feeds[p.Name].Data, tensor.F32); err != nil {
			t.Fatal(err)
		}
	}
	return cg
}

// runF32 runs cg on x and returns its one output.
func runF32(t *testing.T, cg *kiln.CompiledGraph, x tensor.Tensor) []float32 {
	t.Helper()
	out, err := cg.RunTyped(kiln.TypedInput{Name: "x", Data: x.Data, DType: tensor.F32})
	if err != nil {
		t.Fatal(err)
	}
	return tensor.Elems[float32](out[0].Data)
}

// TestEmuDriverMoE runs an MoE model as the backend builds it, on the
// emulated driver, against the CPU: the harness the split's tests stand
// on.
func TestEmuDriverMoE(t *testing.T) {
	g, feeds := moeSplitModel(t, 6)
	cpu := compileFeeds(t, kiln.NewSession(kiln.CPU), g, feeds)
	s, e := emuSession(t)
	gpu := compileFeeds(t, s, g, feeds)
	want, got := runF32(t, cpu, feeds["x"]), runF32(t, gpu, feeds["x"])
	approx.Slices(t, "emulated CUDA vs CPU", got, want, 1e-4, 1e-5)
	if e.launchN == 0 || e.err != nil {
		t.Errorf("%d launches, error %v", e.launchN, e.err)
	}
}
