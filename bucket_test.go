package kiln_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// bktMLPCache is a cache of the row-wise MLP over rows (axis 0) that
// counts its builds.
func bktMLPCache(t *testing.T, b kiln.Buckets, builds *[]int) *kiln.BucketedCache {
	t.Helper()
	bc, err := kiln.NewBucketedCache(kiln.NewSession(kiln.CPU), func(n int) (*graph.Graph, error) {
		*builds = append(*builds, n)
		return extMLP(n), nil
	}, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bc.Close() })
	return bc
}

func TestBucketedCacheMLP(t *testing.T) {
	var builds []int
	bc := bktMLPCache(t, kiln.Buckets{Uppers: []int{4, 8, 16}}, &builds)
	w := extWeights(3)
	for name, v := range w { // before any entry exists
		if err := bc.SetParam(name, v); err != nil {
			t.Fatal(err)
		}
	}
	if len(builds) != 0 {
		t.Fatalf("built %v before any run", builds)
	}
	run := func(actual int) []float32 {
		t.Helper()
		x := extRandom(actual*extIn, uint64(actual))
		out, err := bc.RunPadded(actual, kiln.In("x", x))
		if err != nil {
			t.Fatal(err)
		}
		extCheck(t, "RunPadded", out[0], extMLPWant(x, w, actual), 1e-5)
		direct := extCompile(t, extMLP(actual))
		extSetAll(t, direct, w)
		d, err := direct.Run(kiln.In("x", x))
		if err != nil {
			t.Fatal(err)
		}
		extCheck(t, "vs direct compile", out[0], widen(d[0]), 1e-6)
		return out[0]
	}
	for _, c := range []struct {
		actual int
		built  []int
	}{
		{3, []int{4}}, {4, []int{4}}, {1, []int{4}}, {7, []int{4, 8}}, {5, []int{4, 8}}, {16, []int{4, 8, 16}}, {9, []int{4, 8, 16}},
	} {
		run(c.actual)
		if !slices.Equal(builds, c.built) || !slices.Equal(bc.Compiled(), c.built) {
			t.Fatalf("after RunPadded(%d): built %v, compiled %v, want %v", c.actual, builds, bc.Compiled(), c.built)
		}
	}

	// A param set now reaches every compiled entry.
	w["w2"] = extRandom(extHid*extOut, 42)
	if err := bc.SetParam("w2", w["w2"]); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{2, 6, 12} {
		run(n)
	}
	// Inputs already at the bucket's size pass unpadded.
	x := extRandom(8*extIn, 8)
	out, err := bc.RunPadded(8, kiln.In("x", x))
	if err != nil {
		t.Fatal(err)
	}
	extCheck(t, "full bucket", out[0], extMLPWant(x, w, 8), 1e-5)
}

// TestBucketedCacheParamsForLaterEntries sets a param after one bucket
// is compiled: a bucket compiled later must get the newest value.
func TestBucketedCacheParamsForLaterEntries(t *testing.T) {
	var builds []int
	bc := bktMLPCache(t, kiln.PowerOfTwo(2, 8), &builds)
	w := extWeights(5)
	for name, v := range w {
		if err := bc.SetParam(name, v); err != nil {
			t.Fatal(err)
		}
	}
	x := extRandom(2*extIn, 1)
	if _, err := bc.RunPadded(2, kiln.In("x", x)); err != nil {
		t.Fatal(err)
	}
	w["b1"] = extRandom(extHid, 77)
	if err := bc.SetParam("b1", w["b1"]); err != nil {
		t.Fatal(err)
	}
	x = extRandom(6*extIn, 2)
	out, err := bc.RunPadded(6, kiln.In("x", x))
	if err != nil {
		t.Fatal(err)
	}
	extCheck(t, "later bucket", out[0], extMLPWant(x, w, 6), 1e-5)
	if !slices.Equal(builds, []int{2, 8}) {
		t.Errorf("built %v, want [2 8]", builds)
	}
}

// bktAttention is one attention head over x [1, s, 8] whose keep input
// [1, s] (1 valid, 0 padding) becomes an additive mask, so zero-padded
// keys are hidden. The output is [1, s, 8].
func bktAttention(s int) *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 1, s, 8)
	keep := g.Input("keep", tensor.F32, 1, s)
	mask := g.Mul(g.Sub(g.Reshape(keep, 1, 1, 1, s), g.Scalar(1)), g.Scalar(1e9))
	head := func(name string) *graph.Node {
		return g.Reshape(g.MatMul(x, g.Param(name, tensor.F32, 8, 8)), 1, 1, s, 8)
	}
	a := g.Attention(head("wq"), head("wk"), head("wv"), mask, graph.AttentionOpts{})
	g.Output(g.Reshape(a, 1, s, 8))
	return g
}

func TestBucketedCacheAttention(t *testing.T) {
	bc, err := kiln.NewBucketedCache(kiln.NewSession(kiln.CPU), func(n int) (*graph.Graph, error) {
		return bktAttention(n), nil
	}, kiln.PowerOfTwo(4, 16), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Close()
	w := map[string][]float32{"wq": extRandom(64, 1), "wk": extRandom(64, 2), "wv": extRandom(64, 3)}
	for k, v := range w {
		if err := bc.SetParam(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{3, 5, 11} {
		x := extRandom(n*8, uint64(n))
		keep := make([]float32, n)
		for i := range keep {
			keep[i] = 1
		}
		got, err := bc.RunPadded(n, kiln.In("x", x), kiln.In("keep", keep))
		if err != nil {
			t.Fatal(err)
		}
		direct := extCompile(t, bktAttention(n))
		extSetAll(t, direct, w)
		want, err := direct.Run(kiln.In("x", x), kiln.In("keep", keep))
		if err != nil {
			t.Fatal(err)
		}
		extCheck(t, "attention", got[0], widen(want[0]), 1e-5)

		typed, err := bc.RunPaddedTyped(n, kiln.TypedInput{Name: "x", Data: tensor.Bytes(x), DType: tensor.F32},
			kiln.TypedInput{Name: "keep", Data: tensor.Bytes(keep), DType: tensor.F32})
		if err != nil {
			t.Fatal(err)
		}
		if !typed[0].Shape.Equal(tensor.Shape{1, n, 8}) {
			t.Fatalf("typed output shape %v", typed[0].Shape)
		}
		extCheck(t, "typed", tensor.Elems[float32](typed[0].Data), widen(got[0]), 0)
	}
}

func TestBucketLadders(t *testing.T) {
	for _, c := range []struct {
		b    kiln.Buckets
		want []int
	}{
		{kiln.PowerOfTwo(4, 16), []int{4, 8, 16}},
		{kiln.PowerOfTwo(16, 16), []int{16}},
		{kiln.PowerOfTwo(1, 5), []int{1, 2, 4, 5}},
		{kiln.PowerOfTwo(3, 20), []int{3, 6, 12, 20}},
	} {
		if !slices.Equal(c.b.Uppers, c.want) {
			t.Errorf("ladder %v, want %v", c.b.Uppers, c.want)
		}
	}
	build := func(n int) (*graph.Graph, error) { return extMLP(n), nil }
	s := kiln.NewSession(kiln.CPU)
	for _, b := range []kiln.Buckets{kiln.PowerOfTwo(0, 8), kiln.PowerOfTwo(8, 4), {}, {Uppers: []int{4, 4}}, {Uppers: []int{0, 4}}} {
		if _, err := kiln.NewBucketedCache(s, build, b, 0); err == nil {
			t.Errorf("buckets %+v accepted", b.Uppers)
		}
	}
	if _, err := kiln.NewBucketedCache(s, nil, kiln.PowerOfTwo(1, 2), 0); err == nil {
		t.Error("nil build accepted")
	}
	if _, err := kiln.NewBucketedCache(s, build, kiln.PowerOfTwo(1, 2), -1); err == nil {
		t.Error("negative axis accepted")
	}
}

func TestBucketedCacheErrors(t *testing.T) {
	mustErr := func(err error, words ...string) {
		t.Helper()
		if err == nil {
			t.Fatalf("no error, want one mentioning %q", words)
		}
		for _, w := range words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not mention %q", err, w)
			}
		}
	}
	bc, err := kiln.NewBucketedCache(kiln.NewSession(kiln.CPU), func(n int) (*graph.Graph, error) {
		switch n {
		case 8:
			return nil, errors.New("no model for 8")
		case 16:
			g := extMLP(n)
			g.Reshape(g.Inputs()[0], 7) // records a build error
			return g, nil
		}
		return extMLP(n), nil
	}, kiln.Buckets{Uppers: []int{4, 8, 16}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Close()
	x := func(n int) kiln.Input { return kiln.In("x", make([]float32, n*extIn)) }

	_, err = bc.RunPadded(0, x(0))
	mustErr(err, "extent 0", "[1, 16]")
	_, err = bc.RunPadded(17, x(17))
	mustErr(err, "extent 17")
	_, err = bc.RunPadded(6, x(6))
	mustErr(err, "bucket 8", "no model for 8")
	_, err = bc.RunPadded(12, x(12))
	mustErr(err, "bucket 16", "compile", "Reshape")

	// An unknown param cannot be checked before an entry exists: the
	// entry that first sees it reports it.
	if err := bc.SetParam("nope", []float32{1}); err != nil {
		t.Fatal(err)
	}
	_, err = bc.RunPadded(2, x(2))
	mustErr(err, "bucket 4", "nope")

	// An axis no input reaches (past every rank) pads and cuts nothing:
	// an error at the first entry, not a silent full-size run.
	deep, err := kiln.NewBucketedCache(kiln.NewSession(kiln.CPU), func(n int) (*graph.Graph, error) { return extMLP(n), nil },
		kiln.Buckets{Uppers: []int{4}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer deep.Close()
	_, err = deep.Entry(3)
	mustErr(err, "bucket 4", "no input has extent 4 at axis 5")

	bc2 := bktMLPCache(t, kiln.Buckets{Uppers: []int{4}}, new([]int))
	if _, err := bc2.Entry(3); err != nil {
		t.Fatal(err)
	}
	mustErr(bc2.SetParam("nope", []float32{1}), "bucket 4", "nope")
	mustErr(bc2.SetParam("w1", []float32{1}), "bucket 4", "w1")
	_, err = bc2.RunPadded(3, x(2))
	mustErr(err, "bucket 4", `"x"`)
	_, err = bc2.RunPadded(3, x(3)) // w1, b1, w2 never set
	mustErr(err, "never set", "w1")
}

// TestBucketedCachePaddingIsZero checks that padding is zeros: a sum over
// the bucketed axis includes the padded rows and must not change.
func TestBucketedCachePaddingIsZero(t *testing.T) {
	bc, err := kiln.NewBucketedCache(kiln.NewSession(kiln.CPU), func(n int) (*graph.Graph, error) {
		g := graph.New()
		x := g.Input("x", tensor.F32, n, 2)
		g.Output(g.ReduceSum(g.Mul(x, x), false, 0)) // sums every row, padding included
		return g, nil
	}, kiln.Buckets{Uppers: []int{8}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Close()
	out, err := bc.RunPadded(3, kiln.In("x", []float32{1, 2, 3, 4, 5, 6}))
	if err != nil {
		t.Fatal(err)
	}
	// The output [2] has no bucketed dim, so it is not cut: padding rows
	// contribute 0 to the sums 1+9+25 and 4+16+36.
	extCheck(t, "sum of squares", out[0], []float64{35, 56}, 0)
}
