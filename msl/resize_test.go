package msl

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// resizeOf describes a Resize of a dt input of shape in to out (scales
// out/in), as kdesc.Describe would.
func resizeOf(t testing.TB, name string, dt tensor.DType, spec graph.ResizeSpec, in, out []int) *Resize {
	t.Helper()
	spec.Sizes = out
	for i := range in {
		spec.Scales = append(spec.Scales, float64(out[i])/float64(in[i]))
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
	return d
}

// TestResizeSource: the tables are program-scope constants named after
// the kernel (two Resize kernels share a library), only resized axes
// get one, and extrapolated outputs are marked by index -1.
func TestResizeSource(t *testing.T) {
	k, err := EmitResize(resizeOf(t, "rz", tensor.F16, graph.ResizeSpec{Mode: graph.ResizeLinear, Coord: graph.CoordTFCropAndResize,
		Extrapolation: 5, ROI: []float64{0, 0, -0.5, 1, 1, 1}}, []int{2, 3, 4}, []int{2, 3, 3}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"constant int rz_i2[6] = {-1, 0, ", "constant float rz_w2[6]", "if (rz_i2[o2 * 2] < 0) { out[gid] = half((5e+00f)); return; }"} {
		if !strings.Contains(k.Source, want) {
			t.Errorf("source lacks %q:\n%s", want, k.Source)
		}
	}
	if strings.Contains(k.Source, "rz_i0") || strings.Contains(k.Source, "rz_i1") {
		t.Errorf("tables for axes that copy through:\n%s", k.Source)
	}
}

// TestResizeRejects: F64 (Metal has no double) and tables past
// maxResizeTaps are errors naming the problem.
func TestResizeRejects(t *testing.T) {
	for want, r := range map[string]*Resize{
		"resize of f64": resizeOf(t, "a", tensor.F64, graph.ResizeSpec{}, []int{2, 3}, []int{4, 6}),
		"resize taps exceed": resizeOf(t, "b", tensor.F32, graph.ResizeSpec{Mode: graph.ResizeCubic, CubicA: -0.75},
			[]int{1, 1, 1000, 1000}, []int{1, 1, 1200, 1200}),
	} {
		if _, err := EmitResize(r); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %q", r.Name, err, want)
		}
	}
}
