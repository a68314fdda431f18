package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// BenchmarkInstanceNorm compares InstanceNormalization compiled (its
// planes as LayerNorm rows on the row kernels, the per-channel affine a
// fused elementwise step) with the same graph on the reference kernels
// (ops.Interpret, which allocates its values), at style-transfer and GAN feature-map shapes. Threads
// follow KILN_THREADS.
func BenchmarkInstanceNorm(b *testing.B) {
	for _, s := range [][]int{{1, 64, 128, 128}, {1, 256, 32, 32}} {
		g := graph.New()
		x := g.Input("x", tensor.F32, s...)
		scale, bias := g.Input("scale", tensor.F32, s[1]), g.Input("bias", tensor.F32, s[1])
		g.Output(g.InstanceNorm(x, scale, bias, 1e-5))
		if err := g.Err(); err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewPCG(7, 8))
		feeds := map[string]tensor.Tensor{}
		for _, in := range g.Inputs() {
			t := tensor.New(tensor.F32, in.Shape...)
			for i := range t.F32() {
				t.F32()[i] = r.Float32()*4 - 2
			}
			feeds[in.Name] = t
		}
		cg, err := kiln.NewSession(kiln.CPU).Compile(g)
		if err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("%dx%dx%dx%d", s[0], s[1], s[2], s[3])
		bytes := int64(8 * tensor.Shape(s).NumElements()) // read x, write y
		b.Run(name+"/compiled", func(b *testing.B) {
			xs, sc, bi := feeds["x"].F32(), feeds["scale"].F32(), feeds["bias"].F32()
			b.SetBytes(bytes)
			for b.Loop() { // RunSlots: the result stays in the arena, no copy
				if _, err := cg.RunSlots(xs, sc, bi); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/reference", func(b *testing.B) {
			b.SetBytes(bytes)
			for b.Loop() {
				if _, err := ops.Interpret(g, feeds); err != nil {
					b.Fatal(err)
				}
			}
		})
		cg.Close()
	}
}
