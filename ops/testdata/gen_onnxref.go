//go:build ignore

// gen_onnxref writes ref_onnx_resize.json: reference cases for Resize and
// ConvTranspose whose expected outputs are those of ONNX's own node test
// suite (computed by ONNX's numpy reference, independent of kiln), for
// the ops numpy and torch cannot give gen_reference.py as plainly
// (ONNX's coordinate transformations, output_shape). Each case's graph
// attributes are what kiln's importer makes of the ONNX node, with the
// suite's scales, sizes and roi inputs bound at import.
//
//	go run ops/testdata/gen_onnxref.go [-suite DIR]
//
// DIR defaults to onnx/testdata/node, the committed subset; the full
// suite (see onnx/conformance.sh) gives every case.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/testmodels"
	"github.com/kilnml/kiln/onnx"
	"github.com/kilnml/kiln/tensor"
)

func main() {
	suite := flag.String("suite", "onnx/testdata/node", "ONNX node test suite directory")
	out := flag.String("out", "ops/testdata/ref_onnx_resize.json", "output file")
	flag.Parse()
	var cases []map[string]any
	for _, pat := range []string{"test_resize_*", "test_convtranspose*"} {
		dirs, _ := filepath.Glob(filepath.Join(*suite, pat))
		slices.Sort(dirs)
		for _, dir := range dirs {
			c, err := convert(dir)
			if err != nil {
				log.Fatalf("%s: %v", dir, err)
			}
			cases = append(cases, c)
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintln(f, `{"generator":"ops/testdata/gen_onnxref.go; do not edit by hand","cases":[`)
	for i, c := range cases {
		b, err := json.Marshal(c)
		if err != nil {
			log.Fatal(err)
		}
		sep := ","
		if i == len(cases)-1 {
			sep = ""
		}
		fmt.Fprintf(f, "%s%s\n", b, sep)
	}
	fmt.Fprintln(f, "]}")
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d cases in %s", len(cases), *out)
}

func readPB(path string) (tensor.Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return tensor.Tensor{}, err
	}
	tp, err := onnx.DecodeTensor(b)
	if err != nil {
		return tensor.Tensor{}, err
	}
	return tp.Tensor()
}

// convert imports one case with every input but the first (ConvTranspose:
// the first two or three) bound, and reads back the one op node.
func convert(dir string) (map[string]any, error) {
	model, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return nil, err
	}
	mp, err := onnx.Decode(model)
	if err != nil {
		return nil, err
	}
	conv := strings.HasPrefix(filepath.Base(dir), "test_convtranspose")
	var opts []onnx.Option
	var ins []testmodels.JSONTensor
	for i, vi := range mp.Graph.Inputs {
		t, err := readPB(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", i)))
		if err != nil {
			return nil, err
		}
		if i == 0 || conv {
			ins = append(ins, testmodels.EncodeTensor(t))
		} else {
			opts = append(opts, onnx.WithInputValue(vi.Name, t))
		}
	}
	want, err := readPB(filepath.Join(dir, "test_data_set_0", "output_0.pb"))
	if err != nil {
		return nil, err
	}
	m, err := onnx.Parse(model, opts...)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	var n *graph.Node
	for _, nd := range m.Graph.Nodes {
		if nd.Op == graph.OpResize || nd.Op == graph.OpConvTranspose {
			n = nd
		}
	}
	if n == nil {
		return nil, fmt.Errorf("no Resize or ConvTranspose node")
	}
	a := n.Attrs
	attrs := map[string]any{}
	if s := a.Resize; s != nil {
		attrs = map[string]any{"mode": s.Mode.String(), "coord": s.Coord.String(), "nearest": s.Nearest.String(),
			"cubic_a": s.CubicA, "exclude_outside": s.ExcludeOutside, "extrapolation": s.Extrapolation,
			"sizes": s.Sizes, "scales": s.Scales, "roi": s.ROI}
	} else {
		attrs = map[string]any{"strides": a.Strides, "dilations": a.Dilations, "pads": a.Pads, "groups": a.Groups}
	}
	return map[string]any{"name": "onnx_" + strings.TrimPrefix(filepath.Base(dir), "test_"), "op": n.Op.String(),
		"attrs": attrs, "inputs": ins, "outputs": []testmodels.JSONTensor{testmodels.EncodeTensor(want)},
		"rtol": 1e-5, "atol": 1e-6}, nil
}
