package onnx

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/npy"
	"github.com/kilnml/kiln/tensor"
)

// TestExportedModels runs the models testdata/export_models.py exported
// from PyTorch (an MLP, a BERT-style encoder, a ResNet-style CNN) and
// compares kiln's outputs with PyTorch's, saved beside each model as
// out_<name>.npy.
func TestExportedModels(t *testing.T) {
	for _, name := range []string{"mlp", "bert", "cnn"} {
		t.Run(name, func(t *testing.T) {
			checkAgainstTorch(t, filepath.Join("testdata", "models", name), 1e-4)
		})
	}
}

// checkAgainstTorch imports dir/model.onnx, runs it on the CPU with the
// inputs saved beside it (in_<name>.npy) and compares every output with
// PyTorch's (out_<name>.npy) by closeToTorch with rel.
func checkAgainstTorch(t *testing.T, dir string, rel float64) {
	t.Helper()
	cg, outs := runModelDir(t, dir, kiln.Options{})
	for i, info := range cg.Outputs() {
		want, err := npy.ReadFile(filepath.Join(dir, "out_"+info.Name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		got := tensor.Tensor{DType: outs[i].DType, Shape: outs[i].Shape, Data: outs[i].Data}
		if err := closeToTorch(got, want, rel); err != nil {
			t.Errorf("output %q: %v", info.Name, err)
		}
	}
}

// runModelDir imports dir/model.onnx, compiles it for the CPU with opts
// (both closed when the test ends), sets its weights and runs it on the
// inputs saved beside it (in_<name>.npy).
func runModelDir(t *testing.T, dir string, opts kiln.Options) (*kiln.CompiledGraph, []kiln.TypedOutput) {
	t.Helper()
	m, err := Load(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	cg, err := kiln.NewSession(kiln.CPU).WithOptions(opts).Compile(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Close() })
	if err := m.SetParams(cg); err != nil {
		t.Fatal(err)
	}
	var ins []kiln.TypedInput
	for _, in := range cg.Inputs() {
		v, err := npy.ReadFile(filepath.Join(dir, "in_"+in.Name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, kiln.TypedInput{Name: in.Name, Data: v.Data, DType: v.DType})
	}
	outs, err := cg.RunTyped(ins...)
	if err != nil {
		t.Fatal(err)
	}
	return cg, outs
}

// closeToTorch checks |got - want| <= rel·(|want| + rms(want)) for every
// element: relative for large values, and relative to the tensor's scale
// for values near zero, where float32 sums in a different order differ
// by more than rel of the value itself.
func closeToTorch(got, want tensor.Tensor, rel float64) error {
	if got.DType != want.DType || !got.Shape.Equal(want.Shape) {
		return fmt.Errorf("got %v, want %v", got, want)
	}
	g, w := got.Float64s(), want.Float64s()
	var sq float64
	for _, x := range w {
		sq += x * x
	}
	rms := math.Sqrt(sq / math.Max(float64(len(w)), 1))
	var bad []string
	worst := 0.0
	for i := range w {
		d := math.Abs(g[i] - w[i])
		lim := rel * (math.Abs(w[i]) + rms)
		worst = math.Max(worst, d/(math.Abs(w[i])+rms))
		if !(d <= lim) && len(bad) < 5 {
			bad = append(bad, fmt.Sprintf("[%d] got %.7g want %.7g", i, g[i], w[i]))
		}
	}
	if bad != nil {
		return fmt.Errorf("%s (worst relative error %.3g)", strings.Join(bad, ", "), worst)
	}
	return nil
}

// TestExportedModelsPresent guards against the tests above passing on an
// empty directory after a bad regeneration.
func TestExportedModelsPresent(t *testing.T) {
	for _, name := range []string{"mlp", "bert", "cnn", "lstm", "gru"} {
		for _, f := range []string{"model.onnx"} {
			st, err := os.Stat(filepath.Join("testdata", "models", name, f))
			if err != nil || st.Size() == 0 || st.Size() > 1<<20 {
				t.Errorf("%s/%s: %v (size must be in (0, 1 MiB])", name, f, err)
			}
		}
	}
}
