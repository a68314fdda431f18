package ops

import (
	"fmt"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// BenchmarkResize runs the fast Resize on what upsampling decoders and
// the zoo's models spend their time in (2× nearest as the YOLO head's
// neck, 2× bilinear half_pixel and align_corners, and the segmentation
// head's 8× bilinear back to the input size), over NCHW on 1 and 2
// workers. It reports GB/s of bytes read and written and the ratio to a
// plain copy moving as many bytes (read + written) on as many workers,
// the two run alternately and compared by their median times
// (pairedMedians: thread CPU time at one worker, wall time at two; the
// host is shared).
func BenchmarkResize(b *testing.B) {
	for _, c := range []struct {
		name    string
		in, out []int
		mode    graph.ResizeMode
		coord   graph.ResizeCoord
	}{
		{"nearest2x", []int{1, 64, 128, 128}, []int{1, 64, 256, 256}, graph.ResizeNearest, graph.CoordAsymmetric},
		{"bilinear2x", []int{1, 64, 128, 128}, []int{1, 64, 256, 256}, graph.ResizeLinear, graph.CoordHalfPixel},
		{"bilinear2x-align", []int{1, 64, 128, 128}, []int{1, 64, 256, 256}, graph.ResizeLinear, graph.CoordAlignCorners},
		{"bilinear8x", []int{1, 21, 32, 32}, []int{1, 21, 256, 256}, graph.ResizeLinear, graph.CoordPytorchHalfPixel},
	} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/%dx%dx%d/threads=%d", c.name, c.in[1], c.in[2], c.in[3], threads), func(b *testing.B) {
				g := graph.New()
				n := g.Resize(g.Input("x", tensor.F32, c.in...), rsSpec(c.mode, c.coord, c.in, c.out))
				env := Serial
				if threads > 1 {
					env = parEnv(threads)
				}
				k, variant, err := PrepareFast(n, env)
				if err != nil || variant == "reference" {
					b.Fatalf("no fast kernel (%v)", err)
				}
				x, y := tensor.New(tensor.F32, c.in...), tensor.New(tensor.F32, c.out...)
				for i := range x.F32() {
					x.F32()[i] = float32(i%251) * 0.01
				}
				moved := len(x.Data) + len(y.Data)
				cp := copyOf(env, moved)
				op, ref := pairedMedians(b, threads == 1, func() {
					if err := k([]tensor.Tensor{x}, y); err != nil {
						b.Fatal(err)
					}
				}, cp)
				b.ReportMetric(float64(moved)/op/1e9, "GB/s")
				b.ReportMetric(float64(moved)/ref/1e9, "copyGB/s")
				b.ReportMetric(ref/op, "×copy")
			})
		}
	}
}

// copyOf returns a run of copy() of moved/2 bytes (moved read + written)
// split over env's workers.
func copyOf(env Env, moved int) func() {
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
	return func() { env.For(parts, 1, body) }
}
