package ptx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// resizeDesc describes a Resize of an input of dtype dt and shape in to
// out (scales out/in), as kdesc.Describe would.
func resizeDesc(t testing.TB, name string, dt tensor.DType, spec graph.ResizeSpec, in, out []int) kdesc.Resize {
	t.Helper()
	spec.Sizes = out
	if spec.Scales == nil {
		for i := range in {
			spec.Scales = append(spec.Scales, float64(out[i])/float64(in[i]))
		}
	}
	g := graph.New()
	n := g.Resize(g.Input("x", dt, in...), spec)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	d, err := kdesc.ResizeOf(name, n)
	if err != nil {
		t.Fatal(err)
	}
	return *d
}

// resizeVariants covers every mode, nearest rounding and coordinate
// transformation, exclude_outside, extrapolation, each float dtype and
// 64-bit indexing.
func resizeVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(r kdesc.Resize) {
		k, err := EmitResize(&Resize{Resize: r})
		ks = append(ks, must(t, k, err))
	}
	in, out := []int{1, 2, 5, 7}, []int{1, 2, 9, 4}
	for _, dt := range floatDTypes {
		for c := range graph.CoordTFHalfPixelForNN + 1 {
			for _, m := range []graph.ResizeMode{graph.ResizeNearest, graph.ResizeLinear, graph.ResizeCubic} {
				s := graph.ResizeSpec{Mode: m, Coord: c, CubicA: -0.75, ExcludeOutside: m == graph.ResizeCubic && c%2 == 0, Extrapolation: 3}
				if c == graph.CoordTFCropAndResize {
					s.ROI = []float64{0, 0, 0.2, -0.1, 1, 1, 0.9, 1.3}
				}
				add(resizeDesc(t, fmt.Sprintf("resize_%v_%v_%v", dt, c, m), dt, s, in, out))
			}
		}
		for nm := range graph.NearestCeil + 1 {
			add(resizeDesc(t, fmt.Sprintf("resize_%v_%v", dt, nm), dt, graph.ResizeSpec{Nearest: nm, Coord: graph.CoordAsymmetric}, in, out))
		}
	}
	// One output per axis (align_corners' and crop's special case), a 3-D
	// cubic, and 64-bit indexing.
	add(resizeDesc(t, "resize_single", tensor.F32, graph.ResizeSpec{Mode: graph.ResizeLinear, Coord: graph.CoordAlignCorners}, []int{3, 4}, []int{1, 1}))
	add(resizeDesc(t, "resize_3d", tensor.F32, graph.ResizeSpec{Mode: graph.ResizeCubic, CubicA: -0.5}, []int{1, 3, 4, 5}, []int{1, 5, 6, 7}))
	add(resizeDesc(t, "resize_wide", tensor.F16, graph.ResizeSpec{}, []int{1, 1, 1 << 15, 1 << 14}, []int{1, 1, 1 << 15, 1 << 15}))
	return ks
}

func TestResizeKernelsAssemble(t *testing.T) {
	t.Parallel()
	assemble(t, resizeVariants(t))
}

// TestResizeEmitErrors: a dtype the kernel lacks and more tap
// combinations than it unrolls are errors naming the problem.
func TestResizeEmitErrors(t *testing.T) {
	for want, r := range map[string]kdesc.Resize{
		"dtype f64": resizeDesc(t, "f64", tensor.F64, graph.ResizeSpec{}, []int{2, 3}, []int{4, 6}),
		"taps per output": resizeDesc(t, "many", tensor.F32, graph.ResizeSpec{Mode: graph.ResizeCubic, CubicA: -0.75},
			[]int{2, 2, 2, 2, 2}, []int{3, 3, 3, 3, 3}),
	} {
		if _, err := EmitResize(&Resize{Resize: r}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %q", r.Name, err, want)
		}
	}
}
