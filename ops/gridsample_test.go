package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// gridCase builds a GridSample node and operands: x in [-2, 2), grid in
// [-span, span) with a NaN point and two far outside the input.
func gridCase(dt tensor.DType, xs, gs []int, spec graph.GridSampleSpec, span float64, seed uint64) (*graph.Node, []tensor.Tensor) {
	g := graph.New()
	n := g.GridSample(g.Input("x", dt, xs...), g.Input("g", dt, gs...), spec)
	r := rand.New(rand.NewPCG(seed, 7))
	fill := func(s []int, lo, hi float64) tensor.Tensor {
		v := make([]float64, tensor.Shape(s).NumElements())
		for i := range v {
			v[i] = lo + (hi-lo)*r.Float64()
		}
		t, _ := tensor.FromFloat64s(dt, tensor.Shape(s), v)
		return t
	}
	x, grid := fill(xs, -2, 2), fill(gs, -span, span)
	if len(grid.Float64s()) >= 6 {
		v := grid.Float64s()
		v[0], v[3], v[4] = math.NaN(), 1e30, -3e9
		grid, _ = tensor.FromFloat64s(dt, grid.Shape, v)
	}
	return n, []tensor.Tensor{x, grid}
}

// TestGridSampleFast checks the fast kernel (taps once per point, rows
// split over workers) against the reference, element for element: the
// sums are the same, in the same order, so they must be equal.
func TestGridSampleFast(t *testing.T) {
	for mode := graph.SampleBilinear; mode <= graph.SampleBicubic; mode++ {
		for pad := graph.PadZeros; pad <= graph.PadReflection; pad++ {
			for _, align := range []bool{false, true} {
				for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
					spec := graph.GridSampleSpec{Mode: mode, Padding: pad, AlignCorners: align}
					name := fmt.Sprintf("m%d_p%d_a%v_%v", mode, pad, align, dt)
					n, ins := gridCase(dt, []int{2, 5, 6, 7}, []int{2, 5, 9, 2}, spec, 1.6, uint64(mode)*9+uint64(pad)*2)
					ref, err := PrepareReference(n)
					if err != nil {
						t.Fatal(err)
					}
					want := tensor.New(dt, n.Shape...)
					if err := ref(ins, want); err != nil {
						t.Fatal(err)
					}
					for _, env := range []Env{Serial, parEnv(3)} {
						k, variant, err := PrepareFast(n, env)
						if err != nil || variant != "rows" {
							t.Fatalf("%s: variant %q, %v", name, variant, err)
						}
						got := tensor.New(dt, n.Shape...)
						if err := k(ins, got); err != nil {
							t.Fatal(err)
						}
						approx.Slices(t, name, got.Float64s(), want.Float64s(), 0, 0)
					}
				}
			}
		}
	}
}

// BenchmarkGridSample times bilinear and bicubic sampling of a
// 64-channel 64×64 feature map at 64×64 points (a spatial transformer's
// size) on 1 and 2 workers. It reports process CPU time per run (the
// machine is shared, so wall time is noisy) and the ratio of the
// reference kernel's CPU time (taps per element, one worker) to the fast
// kernel's.
func BenchmarkGridSample(b *testing.B) {
	for _, mode := range []graph.SampleMode{graph.SampleBilinear, graph.SampleBicubic} {
		spec := graph.GridSampleSpec{Mode: mode}
		n, ins := gridCase(tensor.F32, []int{1, 64, 64, 64}, []int{1, 64, 64, 2}, spec, 1, 1)
		out := tensor.New(tensor.F32, n.Shape...)
		ref, err := PrepareReference(n)
		if err != nil {
			b.Fatal(err)
		}
		c0 := cpuTime()
		for range 3 {
			_ = ref(ins, out)
		}
		refCPU := float64(cpuTime()-c0) / 3
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("mode=%d/64x64x64/threads=%d", mode, threads), func(b *testing.B) {
				env := Serial
				if threads > 1 {
					env = parEnv(threads)
				}
				k, _, err := PrepareFast(n, env)
				if err != nil {
					b.Fatal(err)
				}
				c0 := cpuTime()
				for b.Loop() {
					if err := k(ins, out); err != nil {
						b.Fatal(err)
					}
				}
				cpu := float64(cpuTime()-c0) / float64(b.N)
				b.ReportMetric(cpu, "cpu-ns/op")
				b.ReportMetric(refCPU/cpu, "×reference-cpu")
			})
		}
	}
}
