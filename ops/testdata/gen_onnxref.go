//go:build ignore

// gen_onnxref writes ref_onnx_resize.json, ref_onnx_pool.json and
// ref_onnx_quant.json: reference cases for Resize and ConvTranspose, for
// the N-D pools and MaxUnpool, and for the quantization ops, whose expected outputs are those of ONNX's own node test
// suite (computed by ONNX's numpy reference, independent of kiln), for
// the ops numpy and torch cannot give gen_reference.py as plainly
// (ONNX's coordinate transformations, output_shape). Each case's graph
// attributes are what kiln's importer makes of the ONNX node, with the
// suite's scales, sizes, roi and output_shape inputs bound at import. A
// pool case is kept only where the importer chose an N-D op and that
// node gives the model's output (MaxPool's Indices: output 1). A
// quantization case feeds every input (scales and zero points are
// tensors), and skips the _expanded forms (a function body, not one op).
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
	flag.Parse()
	write("ops/testdata/ref_onnx_resize.json", collect(*suite, "test_resize_*", "test_convtranspose*"))
	write("ops/testdata/ref_onnx_pool.json", collect(*suite, "test_maxpool_*", "test_averagepool_*", "test_maxunpool_*"))
	write("ops/testdata/ref_onnx_quant.json", collect(*suite, "test_quantizelinear*", "test_dequantizelinear*",
		"test_dynamicquantizelinear*", "test_matmulinteger*", "test_convinteger*"))
}

// collect converts every case matching the patterns, in name order.
func collect(suite string, patterns ...string) []map[string]any {
	var cases []map[string]any
	for _, pat := range patterns {
		dirs, _ := filepath.Glob(filepath.Join(suite, pat))
		slices.Sort(dirs)
		for _, dir := range dirs {
			for out := 0; ; out++ {
				if _, err := os.Stat(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("output_%d.pb", out))); err != nil {
					break
				}
				c, err := convert(dir, out)
				if err != nil {
					log.Fatalf("%s: %v", dir, err)
				}
				if c != nil {
					cases = append(cases, c)
				}
			}
		}
	}
	return cases
}

func write(path string, cases []map[string]any) {
	f, err := os.Create(path)
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
	log.Printf("%d cases in %s", len(cases), path)
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
// the first two or three; MaxUnpool: the first two) bound, and reads back
// the one op node; for a pool, the N-D node giving output out, or nil.
func convert(dir string, out int) (map[string]any, error) {
	model, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return nil, err
	}
	mp, err := onnx.Decode(model)
	if err != nil {
		return nil, err
	}
	conv := strings.HasPrefix(filepath.Base(dir), "test_convtranspose")
	unpool := strings.HasPrefix(filepath.Base(dir), "test_maxunpool")
	quant := strings.Contains(filepath.Base(dir), "quantize") || strings.Contains(filepath.Base(dir), "integer")
	if strings.HasSuffix(dir, "_expanded") {
		return nil, nil
	}
	var opts []onnx.Option
	var ins []testmodels.JSONTensor
	for i, vi := range mp.Graph.Inputs {
		t, err := readPB(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", i)))
		if err != nil {
			return nil, err
		}
		if i == 0 || conv || quant || (unpool && i == 1) {
			ins = append(ins, testmodels.EncodeTensor(t))
		} else {
			opts = append(opts, onnx.WithInputValue(vi.Name, t))
		}
	}
	want, err := readPB(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("output_%d.pb", out)))
	if err != nil {
		return nil, err
	}
	if quant && mp.Opsets[len(mp.Opsets)-1].Version == 10 {
		// The integer products are unchanged from opset 10 to 11, kiln's
		// first: a second ai.onnx import of version 11 (field 8 {field 2:
		// 11}) lifts the model, as onnx/conformance_test.go's liftOpset.
		model = append(model, 0x42, 0x02, 0x10, 11)
	}
	m, err := onnx.Parse(model, opts...)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	var n *graph.Node
	for _, nd := range m.Graph.Nodes {
		switch nd.Op {
		case graph.OpResize, graph.OpConvTranspose, graph.OpQuantizeLinear, graph.OpDequantizeLinear,
			graph.OpMatMulInteger, graph.OpConvInteger:
			n = nd
		case graph.OpDynamicQuantizeLinear:
			if nd.Attrs.Index == out {
				n = nd
			}
		case graph.OpMaxPoolND, graph.OpAvgPoolND, graph.OpMaxUnpool:
			if nd.Attrs.Index == out && slices.Contains(m.Graph.Outputs(), nd) {
				n = nd
			}
		}
	}
	pool := strings.Contains(filepath.Base(dir), "pool")
	switch {
	case n == nil && pool:
		return nil, nil // a 2-D pool op, or an N-D node that is not the output
	case pool && n.Inputs[0].Shape.NumElements() > 1<<12:
		// The 3-D cases' 32³ inputs would add 2 MB here: without padding,
		// the first outputs of each axis read only the input's first
		// cells, so the case keeps those (4 per axis) and the outputs
		// whose windows lie inside them.
		if n.Op == graph.OpMaxUnpool || slices.Max(n.Attrs.Pads) != 0 {
			return nil, nil
		}
		x, err := readPB(filepath.Join(dir, "test_data_set_0", "input_0.pb"))
		if err != nil {
			return nil, err
		}
		xs, ws := slices.Clone(x.Shape), slices.Clone(want.Shape)
		for i, k := range n.Attrs.Kernel {
			xs[2+i] = min(xs[2+i], 4)
			span := (k-1)*n.Attrs.Dilations[i] + 1
			if xs[2+i] < span {
				return nil, nil
			}
			ws[2+i] = (xs[2+i]-span)/n.Attrs.Strides[i] + 1
		}
		ins[0], want = testmodels.EncodeTensor(cropFront(x, xs)), cropFront(want, ws)
	case n == nil:
		return nil, fmt.Errorf("no Resize, ConvTranspose or quantization node")
	}
	a := n.Attrs
	var attrs map[string]any
	switch {
	case a.Resize != nil:
		s := a.Resize
		attrs = map[string]any{"mode": s.Mode.String(), "coord": s.Coord.String(), "nearest": s.Nearest.String(),
			"cubic_a": s.CubicA, "exclude_outside": s.ExcludeOutside, "extrapolation": s.Extrapolation,
			"sizes": s.Sizes, "scales": s.Scales, "roi": s.ROI}
	case n.Op == graph.OpMaxUnpool:
		attrs = map[string]any{"shape": a.Shape}
	case n.Op == graph.OpQuantizeLinear || n.Op == graph.OpDequantizeLinear:
		attrs = map[string]any{"axis": a.Axis}
	case n.Op == graph.OpDynamicQuantizeLinear:
		attrs = map[string]any{"output": a.Index}
	case n.Op == graph.OpMatMulInteger:
		attrs = map[string]any{}
	case pool:
		attrs = map[string]any{"kernel": a.Kernel, "strides": a.Strides, "dilations": a.Dilations, "pads": a.Pads,
			"count_pad": a.CountPad, "col_major": a.ColMajor, "output": a.Index}
	default:
		attrs = map[string]any{"strides": a.Strides, "dilations": a.Dilations, "pads": a.Pads, "groups": a.Groups}
	}
	name := "onnx_" + strings.TrimPrefix(filepath.Base(dir), "test_")
	if out > 0 {
		name += fmt.Sprintf("_output_%d", out)
	}
	return map[string]any{"name": name, "op": n.Op.String(),
		"attrs": attrs, "inputs": ins, "outputs": []testmodels.JSONTensor{testmodels.EncodeTensor(want)},
		"rtol": 1e-5, "atol": 1e-6}, nil
}

// cropFront is the block of t at the start of every axis, of dims.
func cropFront(t tensor.Tensor, dims []int) tensor.Tensor {
	out := tensor.New(t.DType, dims...)
	es := t.DType.Size()
	idx := make([]int, len(dims))
	for o := range out.Shape.NumElements() {
		src := 0
		for a, v := range idx {
			src = src*t.Shape[a] + v
		}
		copy(out.Data[o*es:(o+1)*es], t.Data[src*es:(src+1)*es])
		for a := len(idx) - 1; a >= 0; a-- { // row-major odometer
			if idx[a]++; idx[a] < dims[a] {
				break
			}
			idx[a] = 0
		}
	}
	return out
}
