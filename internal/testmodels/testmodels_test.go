package testmodels

import (
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func TestDecodeHandEncoded(t *testing.T) {
	// 1.5 = 0x3FC00000 and -2 = 0xC0000000 as little-endian float32;
	// base64 of 00 00 C0 3F 00 00 00 C0.
	got, err := JSONTensor{DType: "f32", Shape: []int{2}, B64: "AADAPwAAAMA="}.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if v := got.F32(); v[0] != 1.5 || v[1] != -2 {
		t.Fatalf("decoded %v, want [1.5 -2]", v)
	}
	// i64 -1 then 2^40: FF*8, then 00 00 00 00 00 01 00 00.
	got, err = JSONTensor{DType: "i64", Shape: []int{2, 1}, B64: "//////////8AAAAAAAEAAA=="}.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if v := got.I64(); v[0] != -1 || v[1] != 1<<40 {
		t.Fatalf("decoded %v, want [-1 2^40]", v)
	}
	for _, bad := range []JSONTensor{
		{DType: "f32", Shape: []int{3}, B64: "AADAPwAAAMA="}, // too few bytes
		{DType: "f99", Shape: []int{2}, B64: "AADAPwAAAMA="}, // unknown dtype
		{DType: "f32", Shape: []int{2}, B64: "not base64!"},
		{DType: "f32", Shape: []int{-2}, B64: ""},
	} {
		if _, err := bad.Decode(); err == nil {
			t.Errorf("Decode(%+v) succeeded", bad)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	src, _ := tensor.FromF64(tensor.Shape{3}, []float64{math.NaN(), math.Inf(-1), 0.1})
	back, err := EncodeTensor(src).Decode()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Data, src.Data) || !back.Shape.Equal(src.Shape) || back.DType != src.DType {
		t.Fatalf("round trip changed %v into %v", src, back)
	}
}

func TestModelsMatchBuilders(t *testing.T) {
	names := ModelNames()
	if !slices.Equal(names, []string{"cnn", "encoder", "mlp"}) {
		t.Fatalf("embedded models %v", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			m, err := LoadModel(name)
			if err != nil {
				t.Fatal(err)
			}
			g, err := m.Graph()
			if err != nil {
				t.Fatal(err)
			}
			feeds, err := m.Feeds()
			if err != nil {
				t.Fatal(err)
			}
			// Every input and param has a tensor of its exact dtype and
			// shape, and the JSON holds nothing else.
			var want []string
			for _, n := range append(append([]*graph.Node{}, g.Inputs()...), g.Params()...) {
				want = append(want, n.Name)
				f, ok := feeds[n.Name]
				if !ok {
					t.Errorf("no tensor for %v %q", n.Op, n.Name)
					continue
				}
				if f.DType != n.DType || !f.Shape.Equal(n.Shape) {
					t.Errorf("%q: data %v, graph %v%v", n.Name, f, n.DType, n.Shape)
				}
			}
			var have []string
			for k := range feeds {
				have = append(have, k)
			}
			sort.Strings(want)
			sort.Strings(have)
			if !slices.Equal(want, have) {
				t.Errorf("graph names %v, data names %v", want, have)
			}
			outs, err := m.Want()
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != len(g.Outputs()) {
				t.Fatalf("%d expected outputs for %d graph outputs", len(outs), len(g.Outputs()))
			}
			for i, o := range g.Outputs() {
				if !outs[i].Shape.Equal(o.Shape) || outs[i].DType != o.DType {
					t.Errorf("output %d: data %v, graph %v%v", i, outs[i], o.DType, o.Shape)
				}
			}
			if m.Tol <= 0 || m.Tol > 1e-4 {
				t.Errorf("tolerance %v", m.Tol)
			}
		})
	}
}

func TestBuilderShapes(t *testing.T) {
	cases := []struct {
		g    *graph.Graph
		want tensor.Shape
	}{
		{MLP(3, 7, 5, 2), tensor.Shape{3, 2}},
		{CNNBlock(2, 3, 4, 6, 10), tensor.Shape{2, 4, 3, 5}},
		{EncoderLayer(2, 5, 12, 3, 20), tensor.Shape{2, 5, 12}},
	}
	for i, c := range cases {
		if err := graph.Verify(c.g); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got := c.g.Outputs()[0].Shape; !got.Equal(c.want) {
			t.Errorf("case %d: output %v, want %v", i, got, c.want)
		}
	}
	if g := EncoderLayer(1, 4, 10, 3, 8); g.Err() == nil {
		t.Error("hidden 10 with 3 heads built without error")
	}
}

func TestRandomFeeds(t *testing.T) {
	g := CNNBlock(1, 2, 3, 4, 4)
	a, err := RandomFeeds(g, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RandomFeeds(g, 7)
	c, _ := RandomFeeds(g, 8)
	if len(a) != len(g.Inputs())+len(g.Params()) {
		t.Fatalf("%d feeds for %d inputs and params", len(a), len(g.Inputs())+len(g.Params()))
	}
	for name, ta := range a {
		if !slices.Equal(ta.Data, b[name].Data) {
			t.Errorf("%q differs between runs with one seed", name)
		}
		if slices.Equal(ta.Data, c[name].Data) {
			t.Errorf("%q equal for seeds 7 and 8", name)
		}
		n, _ := g.Lookup(name)
		if ta.DType != n.DType || !ta.Shape.Equal(n.Shape) {
			t.Errorf("%q: %v, want %v%v", name, ta, n.DType, n.Shape)
		}
		for _, v := range ta.F32() {
			lo, hi := float32(-1), float32(1)
			if name == "bn_var" {
				lo, hi = 0.5, 1.5
			}
			if v < lo || v >= hi {
				t.Errorf("%q value %v outside [%v, %v)", name, v, lo, hi)
			}
		}
	}

	// Gather indices stay in range of the gathered axis; bools are 0 or 1.
	g = graph.New()
	x := g.Input("x", tensor.F32, 3, 4)
	idx := g.Input("idx", tensor.I64, 50)
	mask := g.Input("m", tensor.Bool, 50)
	g.Output(g.Gather(x, idx, 0), g.Not(mask))
	f, err := RandomFeeds(g, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range f["idx"].I64() {
		if v < 0 || v >= 3 {
			t.Fatalf("index %d out of [0, 3)", v)
		}
	}
	for _, v := range f["m"].Data {
		if v > 1 {
			t.Fatalf("bool byte %d", v)
		}
	}
	bad := graph.New()
	bad.Input("", tensor.F32, 1)
	if _, err := RandomFeeds(bad, 1); err == nil {
		t.Error("RandomFeeds accepted a graph with a build error")
	}
}

func TestCheckClose(t *testing.T) {
	mk := func(v ...float32) tensor.Tensor { x, _ := tensor.FromF32(tensor.Shape{len(v)}, v); return x }
	if err := CheckClose(mk(1, 100), mk(1, 100.0009), 1e-5); err != nil {
		t.Errorf("error 9e-4 on scale 100 rejected: %v", err)
	}
	if err := CheckClose(mk(1, 100), mk(1, 100.002), 1e-5); err == nil {
		t.Error("error 2e-3 on scale 100 accepted")
	}
	if err := CheckClose(mk(0.5e-5), mk(0), 1e-5); err != nil {
		t.Errorf("small values judged against scale 1: %v", err)
	}
	if err := CheckClose(mk(float32(math.NaN())), mk(0), 1); err == nil {
		t.Error("NaN accepted")
	}
	if err := CheckClose(mk(1, 2), mk(1), 1); err == nil {
		t.Error("shape mismatch accepted")
	}
}
