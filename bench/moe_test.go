package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// moeBench is the layer BenchmarkMoERatio times: Mixtral's routing
// (softmax over E, top k, renormalised) in front of SwiGLU experts.
type moeBench struct{ t, h, f, e, k int }

// routed is the layer as graph.MoE builds it: OpMoE computes the routed
// rows only.
func (c moeBench) routed() *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, c.t, c.h)
	g.Output(g.MoE(x, graph.MoESpec{Router: g.Param("router", tensor.F32, c.h, c.e),
		Gate: g.Param("gate", tensor.F32, c.e, c.h, c.f), Up: g.Param("up", tensor.F32, c.e, c.h, c.f),
		Down: g.Param("down", tensor.F32, c.e, c.f, c.h), K: c.k, Renormalize: true}))
	return g
}

// dense is the same layer computing every expert for every token, as
// three products over the experts side by side (the fastest dense form:
// one packed GEMM each, N = E·F for gate and up, K = E·F for down) with
// the unrouted experts' weights zero: the top-k scores kept by a mask
// (scores ≥ the k-th largest), renormalised, scale each expert's hidden
// rows before the down product.
func (c moeBench) dense() *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, c.t, c.h)
	scores := g.Softmax(g.MatMul(x, g.Param("router", tensor.F32, c.h, c.e)), 1)
	top, _ := g.TopK(scores, c.k, 1, false)
	kept := g.Mul(scores, g.Cast(g.GreaterOrEqual(scores, g.ReduceMin(top, true, 1)), tensor.F32))
	wd := g.Div(kept, g.ReduceSum(kept, true, 1))
	h := g.Mul(g.Silu(g.MatMul(x, g.Param("gatecat", tensor.F32, c.h, c.e*c.f))), g.MatMul(x, g.Param("upcat", tensor.F32, c.h, c.e*c.f)))
	hw := g.Mul(g.Reshape(h, c.t, c.e, c.f), g.Unsqueeze(wd, 2))
	g.Output(g.MatMul(g.Reshape(hw, c.t, c.e*c.f), g.Param("downcat", tensor.F32, c.e*c.f, c.h)))
	return g
}

// sideBySide lays stacked [E, H, F] weights out as [H, E·F].
func sideBySide(w []float32, e, h, f int) []float32 {
	out := make([]float32, len(w))
	for ei := range e {
		for r := range h {
			copy(out[r*e*f+ei*f:r*e*f+(ei+1)*f], w[ei*h*f+r*f:ei*h*f+(r+1)*f])
		}
	}
	return out
}

func compileMoE(b *testing.B, g *graph.Graph, params map[string][]float32) *kiln.CompiledGraph {
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		b.Fatal(err)
	}
	for name, v := range params {
		if err := cg.SetParam(name, v); err != nil {
			b.Fatal(err)
		}
	}
	return cg
}

// BenchmarkMoERatio times an E=8, k=2 SwiGLU mixture-of-experts layer
// (128 tokens, hidden 512, expert FFN 1024) computing only the routed
// rows against the same layer computing all experts densely, in
// interleaved runs (routed, dense, routed, ...) so that load on a shared
// machine falls on both alike, and reports the medians' ratio
// (routed/dense, the cost's k/E scaling: ideal 0.25) in wall time and in
// process CPU time. It first checks that both compute the same output.
func BenchmarkMoERatio(b *testing.B) {
	c := moeBench{t: 128, h: 512, f: 1024, e: 8, k: 2}
	r := rand.New(rand.NewPCG(8, 2))
	fill := func(n int, s float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = (2*r.Float32() - 1) * s
		}
		return v
	}
	x, router := fill(c.t*c.h, 1), fill(c.h*c.e, 0.5)
	gate, up, down := fill(c.e*c.h*c.f, 0.05), fill(c.e*c.h*c.f, 0.05), fill(c.e*c.f*c.h, 0.05)
	rt := compileMoE(b, c.routed(), map[string][]float32{"router": router, "gate": gate, "up": up, "down": down})
	defer rt.Close()
	dn := compileMoE(b, c.dense(), map[string][]float32{"router": router,
		"gatecat": sideBySide(gate, c.e, c.h, c.f), "upcat": sideBySide(up, c.e, c.h, c.f), "downcat": down})
	defer dn.Close()
	run := func(cg *kiln.CompiledGraph) (wall, cpu time.Duration) {
		t0, c0 := time.Now(), cpuTime()
		if _, err := cg.RunSlots(x); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0), time.Duration(cpuTime() - c0)
	}
	run(rt)
	run(dn)
	big := 0.0
	for _, v := range dn.Output(0) {
		big = max(big, math.Abs(float64(v)))
	}
	if !approx.Slices(b, "routed against dense", rt.Output(0), dn.Output(0), 1e-3, 1e-4*big) {
		b.FailNow()
	}
	var rw, rc, dw, dc []time.Duration
	for b.Loop() {
		w, cp := run(rt)
		rw, rc = append(rw, w), append(rc, cp)
		w, cp = run(dn)
		dw, dc = append(dw, w), append(dc, cp)
	}
	med := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2])
	}
	b.ReportMetric(med(rw)/1e6, "routed-ms")
	b.ReportMetric(med(dw)/1e6, "dense-ms")
	b.ReportMetric(med(rw)/med(dw), "wall-ratio")
	if med(dc) > 0 {
		b.ReportMetric(med(rc)/med(dc), "cpu-ratio")
	}
}
