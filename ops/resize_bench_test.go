package ops

import (
	"fmt"
	"testing"
	"time"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// BenchmarkResize runs the fast Resize on the two cases upsampling
// decoders spend their time in, 2× nearest and 2× bilinear over NCHW, on
// 1 and 2 workers, and reports GB/s of bytes read and written and the
// ratio to a plain copy moving as many bytes (read + written) on as many
// workers, timed right after it over as many runs.
func BenchmarkResize(b *testing.B) {
	in, out := []int{1, 64, 128, 128}, []int{1, 64, 256, 256}
	for _, c := range []struct {
		name  string
		mode  graph.ResizeMode
		coord graph.ResizeCoord
	}{
		{"nearest2x", graph.ResizeNearest, graph.CoordAsymmetric},
		{"bilinear2x", graph.ResizeLinear, graph.CoordHalfPixel},
	} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/%dx%dx%d/threads=%d", c.name, in[1], in[2], in[3], threads), func(b *testing.B) {
				g := graph.New()
				n := g.Resize(g.Input("x", tensor.F32, in...), rsSpec(c.mode, c.coord, in, out))
				env := Serial
				if threads > 1 {
					env = parEnv(threads)
				}
				k, variant, err := PrepareFast(n, env)
				if err != nil || variant == "reference" {
					b.Fatalf("no fast kernel (%v)", err)
				}
				x, y := tensor.New(tensor.F32, in...), tensor.New(tensor.F32, out...)
				for i := range x.F32() {
					x.F32()[i] = float32(i%251) * 0.01
				}
				moved := len(x.Data) + len(y.Data)
				b.SetBytes(int64(moved))
				start := time.Now()
				for b.Loop() {
					if err := k([]tensor.Tensor{x}, y); err != nil {
						b.Fatal(err)
					}
				}
				rate := float64(moved) * float64(b.N) / time.Since(start).Seconds()
				b.ReportMetric(rate/1e9, "GB/s")
				b.ReportMetric(rate/copyBytesPerSec(env, moved, b.N), "×copy")
			})
		}
	}
}

// copyBytesPerSec times copy() of moved/2 bytes (moved read + written),
// split over env's workers, as the mean of runs runs.
func copyBytesPerSec(env Env, moved, runs int) float64 {
	src, dst := make([]byte, moved/2), make([]byte, moved/2)
	for i := range src {
		src[i] = byte(i)
	}
	parts := max(env.Threads, 1)
	body := func(lo, hi int) {
		for p := lo; p < hi; p++ {
			a, z := len(src)*p/parts, len(src)*(p+1)/parts
			copy(dst[a:z], src[a:z])
		}
	}
	env.For(parts, 1, body) // first touch
	t := time.Now()
	for range runs {
		env.For(parts, 1, body)
	}
	return float64(moved) * float64(runs) / time.Since(t).Seconds()
}
