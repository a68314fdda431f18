package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestExternalData(t *testing.T) {
	dir := filepath.Join("testdata", "special", "external")
	runCase(t, loadCase(t, dir))

	b, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(b); err == nil || !strings.Contains(err.Error(), "external") {
		t.Errorf("Parse without a directory: %v", err)
	}
	m, err := Parse(b, WithBaseDir(dir))
	if err != nil {
		t.Fatalf("Parse with WithBaseDir: %v", err)
	}
	w, ok := m.Weight("w")
	if !ok || w.NumElements() != 12 {
		t.Errorf("weight w: %v %v", ok, w)
	}
	m.Close()
	if _, ok := m.Weight("w"); ok {
		t.Error("weights must be gone after Close")
	}

	missing := copyDir(t, dir)
	os.Remove(filepath.Join(missing, "weights.bin"))
	_, err = Load(filepath.Join(missing, "model.onnx"))
	if err == nil || !strings.Contains(err.Error(), "weights.bin") {
		t.Errorf("missing external file: %v", err)
	}

	short := copyDir(t, dir)
	if err := os.Truncate(filepath.Join(short, "weights.bin"), 50); err != nil {
		t.Fatal(err)
	}
	_, err = Load(filepath.Join(short, "model.onnx"))
	if err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("truncated external file: %v", err)
	}
}

// externalModel is y = x + w with w stored at the given location.
func externalModel(loc string, kv ...StringPair) []byte {
	w := &TensorProto{Name: "w", Dims: []int64{2}, DataType: typeFloat, IsExternal: true,
		External: append([]StringPair{{"location", loc}}, kv...)}
	return encModel(model(13, &GraphProto{
		Nodes:        []*NodeProto{{Name: "add", OpType: "Add", Inputs: []string{"x", "w"}, Outputs: []string{"y"}}},
		Initializers: []*TensorProto{w},
		Inputs:       []*ValueInfo{tensorInfo("x", typeFloat, 2)},
		Outputs:      []*ValueInfo{tensorInfo("y", typeFloat, 2)},
	}))
}

func TestExternalPathsConfined(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "model")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(root, "secret.bin")
	if err := os.WriteFile(secret, make([]byte, 8), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.bin"), make([]byte, 16), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink(secret, filepath.Join(dir, "link.bin"))
	for loc, want := range map[string]string{
		"../secret.bin": "outside the model's directory",
		secret:          "outside the model's directory",
		"link.bin":      "link.bin",
		"nothere.bin":   "nothere.bin",
	} {
		p := filepath.Join(dir, "m.onnx")
		if err := os.WriteFile(p, externalModel(loc), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("location %q: %v, want an error mentioning %q", loc, err, want)
		}
	}
	p := filepath.Join(dir, "m.onnx")
	for _, c := range []struct {
		kv   []StringPair
		want string
	}{
		{nil, ""},
		{[]StringPair{{"offset", "8"}}, ""},
		{[]StringPair{{"offset", "9"}}, "outside"},
		{[]StringPair{{"length", "12"}}, "length 12"},
		{[]StringPair{{"offset", "-1"}}, "bad external offset"},
		{[]StringPair{{"offset", "9223372036854775807"}}, "at offset 9223372036854775807 lie outside"}, // printed a negative end
		{[]StringPair{{"offset", "99999999999999999999"}}, "bad external offset"},
	} {
		os.WriteFile(p, externalModel("ok.bin", c.kv...), 0o644)
		m, err := Load(p)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.kv, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want %q", c.kv, err, c.want)
		}
		if m != nil {
			m.Close()
		}
	}
}

func TestSymbolicDims(t *testing.T) {
	dir := filepath.Join("testdata", "special", "symbolic")
	path := filepath.Join(dir, "model.onnx")
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), "batch") || !strings.Contains(err.Error(), "seq") ||
		!strings.Contains(err.Error(), "WithShape") {
		t.Errorf("unbound dims: %v", err)
	}
	c := loadCase(t, dir)
	t.Run("WithShape binds the shared dims", func(t *testing.T) { runCase(t, c, WithShape("x", 2, 3, 4)) })
	t.Run("WithDim", func(t *testing.T) { runCase(t, c, WithDim("batch", 2), WithDim("seq", 3)) })
	t.Run("both inputs", func(t *testing.T) { runCase(t, c, WithShape("x", 2, 3, 4), WithShape("m", 2, 3)) })
	for name, opts := range map[string][]Option{
		"fixed dim differs":  {WithShape("x", 2, 3, 5)},
		"rank differs":       {WithShape("x", 2, 3)},
		"no such input":      {WithShape("input_ids", 1, 128)},
		"conflicting shapes": {WithShape("x", 2, 3, 4), WithShape("m", 3, 3)},
		"negative":           {WithShape("x", -2, 3, 4)},
		"negative dim":       {WithDim("batch", -1), WithDim("seq", 3)},
		"unknown dim":        {WithShape("x", 2, 3, 4), WithDim("batchh", 2)}, // was ignored
	} {
		if _, err := Load(path, opts...); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	m, err := Load(path, WithShape("x", 5, 7, 4))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if s := m.Graph.Inputs()[1].Shape; s.String() != "[5 7]" {
		t.Errorf("mask shape %v, want [5 7] through the shared dims", s)
	}
}

func TestUnsupportedListsEveryOp(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "special", "unsupported.onnx"))
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("want *UnsupportedError, got %v", err)
	}
	want := []UnsupportedOp{
		{Node: "col2im_1", OpType: "Col2Im", Opset: 13},
		{Node: "strings_1", OpType: "StringNormalizer", Opset: 13},
		{Node: "ms_fused", OpType: "FusedMatMul", Domain: "com.microsoft", Opset: 1, Reason: "custom domain"},
		{Node: "ln_too_new", OpType: "LayerNormalization", Opset: 13, Reason: "the op exists from opset 17"},
	}
	if len(ue.Ops) != len(want) {
		t.Fatalf("got %d entries, want %d:\n%v", len(ue.Ops), len(want), err)
	}
	for i, w := range want {
		if ue.Ops[i] != w {
			t.Errorf("entry %d: got %+v, want %+v", i, ue.Ops[i], w)
		}
		if !strings.Contains(err.Error(), w.Node) {
			t.Errorf("message lacks %q:\n%v", w.Node, err)
		}
	}
	for _, s := range []string{"ai.onnx opset 13", "com.microsoft opset 1", "4 unsupported"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message lacks %q:\n%v", s, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join("testdata", "special", "unsupported.onnx"))
	mp, _ := Decode(b)
	if got := Unsupported(mp); len(got) != 4 {
		t.Errorf("Unsupported: %v", got)
	}
}

func TestUnsupportedFeaturesListed(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "special", "features.onnx"))
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("want *UnsupportedError, got %v", err)
	}
	// pool_indices (MaxPool's Indices output) imports since issue 23.
	want := map[string]string{"pad_wrap": `mode="wrap"`, "cast_string": "STRING"}
	if len(ue.Ops) != len(want) {
		t.Fatalf("got %v", err)
	}
	for _, u := range ue.Ops {
		if w, ok := want[u.Node]; !ok || !strings.Contains(u.Reason, w) {
			t.Errorf("%+v: want reason mentioning %q", u, w)
		}
	}
}
