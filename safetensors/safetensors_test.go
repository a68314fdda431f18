package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// formula recomputes gen.py's values for a dtype and shape.
func formula(dt tensor.DType, s tensor.Shape) tensor.Tensor {
	out := tensor.New(dt, s...)
	for i := range s.NumElements() {
		f := float64(i)*0.5 - 1.25
		n := int64(i)*37 - 100
		switch dt {
		case tensor.F32:
			out.F32()[i] = float32(f)
		case tensor.F64:
			out.F64()[i] = f
		case tensor.F16:
			out.F16()[i] = tensor.F32ToF16(float32(f))
		case tensor.BF16:
			out.BF16()[i] = uint16(math.Float32bits(float32(f)) >> 16)
		case tensor.I8:
			out.I8()[i] = int8(n)
		case tensor.U8:
			out.U8()[i] = uint8(n)
		case tensor.I32:
			out.I32()[i] = int32(n)
		case tensor.I64:
			out.I64()[i] = n
		case tensor.Bool:
			out.Bool()[i] = i%3 == 0
		}
	}
	return out
}

func TestReadFile(t *testing.T) {
	f, err := Open(filepath.Join("testdata", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Metadata["format"] != "pt" {
		t.Errorf("metadata %v", f.Metadata)
	}
	want := map[string]struct {
		dt tensor.DType
		s  tensor.Shape
	}{
		"layer.bias": {tensor.F16, tensor.Shape{4}}, "layer.weight": {tensor.F32, tensor.Shape{2, 3}},
		"emb": {tensor.BF16, tensor.Shape{3, 2}}, "ids": {tensor.I64, tensor.Shape{2}},
		"scale": {tensor.F64, tensor.Shape{}}, "mask": {tensor.Bool, tensor.Shape{5}},
		"small": {tensor.I8, tensor.Shape{3}}, "bytes": {tensor.U8, tensor.Shape{3}},
		"count": {tensor.I32, tensor.Shape{2, 1}}, "empty": {tensor.F32, tensor.Shape{0, 4}},
	}
	for name, w := range want {
		got, err := f.Tensor(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		exp := formula(w.dt, w.s)
		if got.DType != w.dt || !got.Shape.Equal(w.s) || !bytes.Equal(got.Data, exp.Data) {
			t.Errorf("%s: got %v %x, want %v %x", name, got, got.Data, exp, exp.Data)
		}
	}
	e, ok := f.Entry("halfwords")
	if !ok || e.DType.Valid() || e.FileDType != "U16" {
		t.Errorf("U16 entry: %+v", e)
	}
	if _, err := f.Tensor("halfwords"); err == nil || !strings.Contains(err.Error(), "U16") {
		t.Errorf("reading a U16 tensor: %v", err)
	}
	if len(f.Names()) != 11 || f.Names()[0] != "bytes" {
		t.Errorf("names %v", f.Names())
	}
	if !strings.Contains(f.String(), "11 tensors") {
		t.Errorf("String: %s", f)
	}
}

func TestWriteRoundTrip(t *testing.T) {
	var ts []Named
	for _, dt := range tensor.DTypes() {
		ts = append(ts, Named{Name: "t_" + dt.String(), T: formula(dt, tensor.Shape{3, 1, 2})})
	}
	ts = append(ts, Named{Name: "scalar", T: formula(tensor.F32, nil)})
	p := filepath.Join(t.TempDir(), "x.safetensors")
	if err := WriteFile(p, ts, map[string]string{"a": "b"}); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, nt := range ts {
		got, err := f.Tensor(nt.Name)
		if err != nil || got.DType != nt.T.DType || !got.Shape.Equal(nt.T.Shape) || !bytes.Equal(got.Data, nt.T.Data) {
			t.Errorf("%s: %v %v", nt.Name, err, got)
		}
	}
	if f.Metadata["a"] != "b" {
		t.Errorf("metadata %v", f.Metadata)
	}
	for _, bad := range [][]Named{
		{{Name: "a", T: tensor.Tensor{DType: tensor.F32, Shape: tensor.Shape{2}, Data: make([]byte, 4)}}},
		{{Name: "a", T: formula(tensor.F32, tensor.Shape{1})}, {Name: "a", T: formula(tensor.F32, tensor.Shape{1})}},
		{{Name: "__metadata__", T: formula(tensor.F32, tensor.Shape{1})}},
		{{Name: "x", T: tensor.Tensor{}}},
	} {
		if err := Write(&bytes.Buffer{}, bad, nil); err == nil {
			t.Errorf("Write accepted %v", bad)
		}
	}
}

// header builds a file from raw header JSON and a data section.
func header(js string, data []byte) []byte {
	b := make([]byte, 8, 8+len(js)+len(data))
	binary.LittleEndian.PutUint64(b, uint64(len(js)))
	return append(append(b, js...), data...)
}

func TestBadFiles(t *testing.T) {
	good, _ := os.ReadFile(filepath.Join("testdata", "model.safetensors"))
	huge := make([]byte, 8)
	binary.LittleEndian.PutUint64(huge, 1<<62)
	cases := map[string]struct {
		data []byte
		want string
	}{
		"empty":           {nil, "too short"},
		"truncated":       {good[:len(good)-3], "data section"},
		"header too long": {append(huge, '{', '}'), "exceeds"},
		"not json":        {header("hello", nil), "not a JSON object"},
		"onnx file":       {[]byte{0x08, 0x08, 0x12, 0x07, 'p', 'y', 't', 'o', 'r', 'c', 'h'}, "exceeds"},
		"bad json":        {header(`{"a": {"dtype": "F32",`, nil), "header"},
		"trailing text":   {header(`{} x`, nil), "after the JSON"},
		"unknown field":   {header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}}`, make([]byte, 4)), "unknown field"},
		"unknown dtype":   {header(`{"a":{"dtype":"Q7","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), "unknown dtype"},
		"size mismatch":   {header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 4)), "needs 8 bytes"},
		"absurd dims":     {header(`{"a":{"dtype":"F32","shape":[1099511627776,1099511627776],"data_offsets":[0,4]}}`, make([]byte, 4)), "more than"},
		"negative dim":    {header(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, make([]byte, 4)), "bad dim"},
		"float dim":       {header(`{"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}`, make([]byte, 4)), "bad dim"},
		"huge offset":     {header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[18446744073709551615,4]}}`, make([]byte, 4)), "bad offset"},
		"past the end":    {header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 4)), "hole"},
		"short data":      {header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 4)), "data section has 4"},
		"overlap": {header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`,
			make([]byte, 8)), "overlaps"},
		"hole": {header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`,
			make([]byte, 12)), "hole"},
		"duplicate": {header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`,
			make([]byte, 8)), "twice"},
		"bad metadata":  {header(`{"__metadata__":{"a":1}}`, nil), "__metadata__"},
		"offsets shape": {header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}}`, make([]byte, 4)), "data_offsets"},
	}
	for name, c := range cases {
		_, err := Parse(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error mentioning %q", name, err, c.want)
		}
	}
	for n := 0; n < len(good); n++ { // every prefix fails cleanly
		if _, err := Parse(good[:n]); err == nil {
			t.Errorf("a %d-byte prefix parsed", n)
		}
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.safetensors")); err == nil {
		t.Error("Open of a missing file succeeded")
	}
}

// mlpGraph is x [2,3] → x·w1 + b1 → relu → ·w2, with F32 params.
func mlpGraph(extra bool) *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	h := g.Relu(g.Add(g.MatMul(x, g.Param("w1", tensor.F32, 3, 4)), g.Param("b1", tensor.F32, 4)))
	y := g.MatMul(h, g.Param("w2", tensor.F32, 4, 2))
	if extra {
		y = g.Add(y, g.Param("head.bias", tensor.F32, 2))
	}
	g.Output(y)
	return g
}

func TestSetParams(t *testing.T) {
	f, err := Open(filepath.Join("testdata", "mlp.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cg, err := kiln.NewSession(kiln.CPU).Compile(mlpGraph(true))
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	rep, err := f.SetParams(cg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.Missing, ",") != "head.bias" || strings.Join(rep.Unexpected, ",") != "unused.extra" || len(rep.Set) != 3 || rep.Complete() {
		t.Fatalf("report %+v", rep)
	}
	if err := cg.SetParam("head.bias", []float32{10, 20}); err != nil {
		t.Fatal(err)
	}
	x := []float32{1, -1, 0.5, 0.25, 2, -0.5}
	out, err := cg.Run(kiln.In("x", x))
	if err != nil {
		t.Fatal(err)
	}
	// Independent float64 forward pass over gen.py's formula values (all
	// exactly representable in bf16 and f16).
	val := func(i int) float64 { return float64(i)*0.5 - 1.25 }
	for r := range 2 {
		var h [4]float64
		for j := range 4 {
			s := val(j) // b1
			for k := range 3 {
				s += float64(x[3*r+k]) * val(4*k+j) // w1[k][j]
			}
			h[j] = math.Max(s, 0)
		}
		for j := range 2 {
			s := []float64{10, 20}[j]
			for k := range 4 {
				s += h[k] * val(2*k+j) // w2[k][j]
			}
			if got := float64(out[0][2*r+j]); approx.Far(got, s, 1e-5*(1+math.Abs(s))) {
				t.Errorf("y[%d][%d] = %v, want %v", r, j, got, s)
			}
		}
	}
}

func TestSetParamsShapeMismatch(t *testing.T) {
	var b bytes.Buffer
	Write(&b, []Named{{"w1", formula(tensor.F32, tensor.Shape{4, 3})}, {"w2", formula(tensor.F32, tensor.Shape{8})}}, nil)
	f, err := Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	cg, err := kiln.NewSession(kiln.CPU).Compile(mlpGraph(false))
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	_, err = f.SetParams(cg)
	if err == nil || !strings.Contains(err.Error(), "w1") || !strings.Contains(err.Error(), "w2") {
		t.Errorf("want both mismatches listed, got %v", err)
	}
}

// TestOpenIn opens a file by its name inside a folder, with the same
// contents Open gives, and refuses a name that leaves the folder.
func TestOpenIn(t *testing.T) {
	root, err := os.OpenRoot("testdata")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	f, err := OpenIn(root, "model.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := Open(filepath.Join("testdata", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if a, b := f.String(), g.String(); a != b || len(f.Names()) == 0 {
		t.Errorf("OpenIn: %s; Open: %s", a, b)
	}
	for _, e := range f.Entries() {
		if !e.DType.Valid() {
			continue // listed, not readable (U16)
		}
		x, err := f.Tensor(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		y, _ := g.Tensor(e.Name)
		if !bytes.Equal(x.Data, y.Data) || !x.Shape.Equal(y.Shape) {
			t.Errorf("%s differs between OpenIn and Open", e.Name)
		}
	}
	if _, err := OpenIn(root, "../safetensors_test.go"); err == nil {
		t.Error("a name outside the folder: no error")
	}
	if _, err := OpenIn(root, "nope.safetensors"); err == nil || !strings.Contains(err.Error(), "nope.safetensors") {
		t.Errorf("a missing file: %v", err)
	}
}
