package ops_test

// Loader for the reference cases in testdata/ref_*.json, written by
// testdata/gen_reference.py (numpy and torch) and, for Resize,
// ConvTranspose, the N-D pools and MaxUnpool, testdata/gen_onnxref.go
// (ONNX's node suite). Schema of
// one case:
//
//	{"name": str,               unique; the subtest name
//	 "op": str,                 graph.Op.String(), e.g. "Add", "Conv2D"
//	 "attrs": {...},            builder arguments, keys per op (see buildCase)
//	 "inputs": [T, ...],        fed to graph inputs in0, in1, ... in order
//	 "outputs": [T, ...],       expected results
//	 "rtol": float, "atol": float}
//
// with T = {"dtype": "f32"|"f64"|"f16"|"bf16"|"i8"|"u8"|"i32"|"i64"|"bool",
// "shape": [...], "b64": base64 of little-endian row-major bytes}. A float
// element passes when |got-want| <= atol + rtol*|want|, NaN only against
// NaN and an infinity only against the same infinity; integer and bool
// outputs must be exact.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/testmodels"
)

type refCase struct {
	Name    string                     `json:"name"`
	Op      string                     `json:"op"`
	Attrs   map[string]json.RawMessage `json:"attrs"`
	Inputs  []testmodels.JSONTensor    `json:"inputs"`
	Outputs []testmodels.JSONTensor    `json:"outputs"`
	RTol    float64                    `json:"rtol"`
	ATol    float64                    `json:"atol"`
	file    string
}

// loadRefCases reads every testdata/ref_*.json, in file-name order.
func loadRefCases() ([]refCase, error) {
	files, err := filepath.Glob(filepath.Join("testdata", "ref_*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no testdata/ref_*.json (run gen_reference.py)")
	}
	var all []refCase
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Cases []refCase `json:"cases"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for i := range doc.Cases {
			doc.Cases[i].file = filepath.Base(f)
		}
		all = append(all, doc.Cases...)
	}
	return all, nil
}

// attrReader reads typed attributes, remembering the first problem so the
// builder switch stays flat.
type attrReader struct {
	m   map[string]json.RawMessage
	err error
}

func (a *attrReader) get(key string, v any) bool {
	raw, ok := a.m[key]
	if !ok {
		if a.err == nil {
			a.err = fmt.Errorf("attribute %q missing", key)
		}
		return false
	}
	if string(raw) == "null" {
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil && a.err == nil {
		a.err = fmt.Errorf("attribute %q: %w", key, err)
	}
	return true
}

func (a *attrReader) int(key string) int {
	var v int
	a.get(key, &v)
	return v
}

// ints is nil for a JSON null, non-nil (maybe empty) otherwise.
func (a *attrReader) ints(key string) []int {
	v := []int{}
	if !a.get(key, &v) {
		return nil
	}
	return v
}

func (a *attrReader) f32(key string) float32 {
	var v float64
	a.get(key, &v)
	return float32(v)
}

// bound reads a Clip bound: null is the open side, def (±Inf).
func (a *attrReader) bound(key string, def float64) float32 {
	v := def
	a.get(key, &v)
	return float32(v)
}

// f64s is nil for a JSON null.
func (a *attrReader) f64s(key string) []float64 {
	var v []float64
	a.get(key, &v)
	return v
}

// enum finds the value of E in [0, last] whose String is the attribute.
func enum[E interface {
	~uint8
	String() string
}](a *attrReader, key string, last E) E {
	s := a.str(key)
	for e := E(0); e <= last; e++ {
		if e.String() == s {
			return e
		}
	}
	if a.err == nil {
		a.err = fmt.Errorf("attribute %q: unknown value %q", key, s)
	}
	return 0
}

// resizeSpecOf reads a Resize case's spec.
func resizeSpecOf(a *attrReader) graph.ResizeSpec {
	return graph.ResizeSpec{Mode: enum(a, "mode", graph.ResizeCubic), Coord: enum(a, "coord", graph.CoordTFHalfPixelForNN),
		Nearest: enum(a, "nearest", graph.NearestCeil), CubicA: float64(a.f32("cubic_a")), ExcludeOutside: a.bool("exclude_outside"),
		Extrapolation: float64(a.f32("extrapolation")), Sizes: a.ints("sizes"), Scales: a.f64s("scales"), ROI: a.f64s("roi")}
}

func (a *attrReader) bool(key string) bool {
	var v bool
	a.get(key, &v)
	return v
}

func (a *attrReader) str(key string) string {
	var v string
	a.get(key, &v)
	return v
}

var inf = math.Inf(1)
