package ops

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// mvEval marks out as the graph's only output and interprets the graph.
func mvEval(t *testing.T, g *graph.Graph, out *graph.Node, feeds map[string]tensor.Tensor) tensor.Tensor {
	t.Helper()
	g.Output(out)
	if err := g.Err(); err != nil {
		t.Fatalf("build: %v", err)
	}
	res, err := Interpret(g, feeds)
	if err != nil {
		t.Fatalf("interpret: %v", err)
	}
	return res[0]
}

// mvI32 makes an I32 tensor or fails the test.
func mvI32(t *testing.T, s tensor.Shape, v ...int32) tensor.Tensor {
	t.Helper()
	x, err := tensor.FromI32(s, v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// mvIota is an I32 tensor holding 0, 1, 2, ... in row-major order.
func mvIota(s tensor.Shape) tensor.Tensor {
	x := tensor.New(tensor.I32, s...)
	for i := range x.I32() {
		x.I32()[i] = int32(i)
	}
	return x
}

// mvPattern fills a tensor of any dtype with bytes that differ between
// elements (for up to 256 elements of 1 byte, 65536 of more).
func mvPattern(dt tensor.DType, s tensor.Shape) tensor.Tensor {
	x := tensor.New(dt, s...)
	es := dt.Size()
	for i := range x.NumElements() {
		for b := range es {
			x.Data[i*es+b] = byte((i >> (8 * (b % 2))) ^ (b * 0x5b))
		}
	}
	return x
}

// mvWantShape checks dtype and shape of a result.
func mvWantShape(t *testing.T, got tensor.Tensor, dt tensor.DType, s ...int) {
	t.Helper()
	if got.DType != dt || !got.Shape.Equal(tensor.Shape(s)) {
		t.Fatalf("got %v, want %v%v", got, dt, tensor.Shape(s))
	}
}

// mvWantI32 compares an I32 result with hand-computed values.
func mvWantI32(t *testing.T, got tensor.Tensor, s tensor.Shape, want ...int32) {
	t.Helper()
	mvWantShape(t, got, tensor.I32, s...)
	if !slices.Equal(got.I32(), want) {
		t.Fatalf("values\n got %v\nwant %v", got.I32(), want)
	}
}

// mvUnravel splits a row-major linear index into a multi-index of s.
func mvUnravel(lin int, s tensor.Shape) []int {
	idx := make([]int, len(s))
	for i := len(s) - 1; i >= 0; i-- {
		idx[i] = lin % s[i]
		lin /= s[i]
	}
	return idx
}

// mvRavel joins a multi-index of s into a row-major linear index.
func mvRavel(idx []int, s tensor.Shape) int {
	lin := 0
	for i, v := range idx {
		lin = lin*s[i] + v
	}
	return lin
}

// mvCheckMap checks that output element i holds the bytes of input
// element src(multi-index of i).
func mvCheckMap(t *testing.T, got, in tensor.Tensor, src func(out []int) []int) {
	t.Helper()
	es := in.DType.Size()
	for i := range got.NumElements() {
		o := mvUnravel(i, got.Shape)
		j := mvRavel(src(o), in.Shape)
		if !bytes.Equal(got.Data[i*es:(i+1)*es], in.Data[j*es:(j+1)*es]) {
			t.Fatalf("%v: element %v is % x, want input element %d % x", got, o, got.Data[i*es:(i+1)*es], j, in.Data[j*es:(j+1)*es])
		}
	}
}

func TestMovementReshapeFamily(t *testing.T) {
	x := mvIota(tensor.Shape{2, 1, 3})
	want := []int32{0, 1, 2, 3, 4, 5}
	build := []struct {
		name  string
		f     func(g *graph.Graph, n *graph.Node) *graph.Node
		shape []int
	}{
		{"reshape", func(g *graph.Graph, n *graph.Node) *graph.Node { return g.Reshape(n, 3, -1) }, []int{3, 2}},
		{"squeeze", func(g *graph.Graph, n *graph.Node) *graph.Node { return g.Squeeze(n) }, []int{2, 3}},
		{"unsqueeze", func(g *graph.Graph, n *graph.Node) *graph.Node { return g.Unsqueeze(n, 0, -1) }, []int{1, 2, 1, 3, 1}},
		{"flatten", func(g *graph.Graph, n *graph.Node) *graph.Node { return g.Flatten(n, 1) }, []int{2, 3}},
		{"flatten-rank", func(g *graph.Graph, n *graph.Node) *graph.Node { return g.Flatten(n, 3) }, []int{6, 1}},
	}
	for _, c := range build {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			got := mvEval(t, g, c.f(g, g.Input("x", tensor.I32, 2, 1, 3)), map[string]tensor.Tensor{"x": x})
			mvWantI32(t, got, tensor.Shape(c.shape), want...)
		})
	}
	for _, op := range []graph.Op{graph.OpReshape, graph.OpSqueeze, graph.OpUnsqueeze, graph.OpFlatten} {
		if e, err := Lookup(op); err != nil || !e.InPlace || e.Tol != 0 {
			t.Errorf("%v: entry %+v, %v; want in place and exact", op, e, err)
		}
	}
}

func TestMovementTransposeRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for rank := 1; rank <= 5; rank++ {
		for range 20 {
			s := make(tensor.Shape, rank)
			for i := range s {
				s[i] = 1 + rng.IntN(4)
			}
			perm := rng.Perm(rank)
			g := graph.New()
			x := mvIota(s)
			got := mvEval(t, g, g.Transpose(g.Input("x", tensor.I32, s...), perm...), map[string]tensor.Tensor{"x": x})
			for i, p := range perm {
				if got.Shape[i] != s[p] {
					t.Fatalf("%v perm %v: shape %v", s, perm, got.Shape)
				}
			}
			// Output element o is input element i with i[perm[k]] = o[k];
			// with iota input its value is that linear index.
			for lin, v := range got.I32() {
				o := mvUnravel(lin, got.Shape)
				in := make([]int, rank)
				for k, p := range perm {
					in[p] = o[k]
				}
				if want := mvRavel(in, s); int(v) != want {
					t.Fatalf("%v perm %v: out %v = %d, want %d", s, perm, o, v, want)
				}
			}
		}
	}
}

func TestMovementTransposeCases(t *testing.T) {
	g := graph.New()
	got := mvEval(t, g, g.Transpose(g.Input("x", tensor.I32, 2, 3)), map[string]tensor.Tensor{"x": mvIota(tensor.Shape{2, 3})})
	mvWantI32(t, got, tensor.Shape{3, 2}, 0, 3, 1, 4, 2, 5)

	g = graph.New()
	got = mvEval(t, g, g.Transpose(g.Input("x", tensor.I32, 2, 0, 3), 2, 0, 1), map[string]tensor.Tensor{"x": tensor.New(tensor.I32, 2, 0, 3)})
	mvWantShape(t, got, tensor.I32, 3, 2, 0)

	g = graph.New()
	got = mvEval(t, g, g.Transpose(g.Input("x", tensor.I32)), map[string]tensor.Tensor{"x": mvI32(t, nil, 42)})
	mvWantI32(t, got, nil, 42)
}

func TestMovementEveryDType(t *testing.T) {
	for _, dt := range tensor.DTypes() {
		t.Run(dt.String(), func(t *testing.T) {
			x := mvPattern(dt, tensor.Shape{2, 3, 4})
			g := graph.New()
			got := mvEval(t, g, g.Transpose(g.Input("x", dt, 2, 3, 4), 2, 0, 1), map[string]tensor.Tensor{"x": x})
			mvWantShape(t, got, dt, 4, 2, 3)
			mvCheckMap(t, got, x, func(o []int) []int { return []int{o[1], o[2], o[0]} })

			a, b := mvPattern(dt, tensor.Shape{2, 1, 3}), mvPattern(dt, tensor.Shape{2, 2, 3})
			g = graph.New()
			cat := g.Concat(1, g.Input("a", dt, 2, 1, 3), g.Input("b", dt, 2, 2, 3))
			got = mvEval(t, g, cat, map[string]tensor.Tensor{"a": a, "b": b})
			mvWantShape(t, got, dt, 2, 3, 3)
			es := dt.Size()
			for i := range got.NumElements() {
				o := mvUnravel(i, got.Shape)
				src, j := a, mvRavel(o, a.Shape)
				if o[1] >= 1 {
					src, j = b, mvRavel([]int{o[0], o[1] - 1, o[2]}, b.Shape)
				}
				if !bytes.Equal(got.Data[i*es:(i+1)*es], src.Data[j*es:(j+1)*es]) {
					t.Fatalf("concat element %v wrong", o)
				}
			}
			e, err := Lookup(graph.OpTranspose)
			if err != nil || !slices.Contains(e.DTypes, dt) {
				t.Fatalf("transpose not registered natively for %v", dt)
			}
		})
	}
}

func TestMovementConcat(t *testing.T) {
	g := graph.New()
	a := g.Input("a", tensor.I32, 2, 2, 2)
	z := g.Input("z", tensor.I32, 2, 0, 2)
	b := g.Input("b", tensor.I32, 2, 1, 2)
	got := mvEval(t, g, g.Concat(-2, a, z, b), map[string]tensor.Tensor{
		"a": mvIota(tensor.Shape{2, 2, 2}),
		"z": tensor.New(tensor.I32, 2, 0, 2),
		"b": mvI32(t, tensor.Shape{2, 1, 2}, 100, 101, 102, 103),
	})
	mvWantI32(t, got, tensor.Shape{2, 3, 2},
		0, 1, 2, 3, 100, 101,
		4, 5, 6, 7, 102, 103)

	// Last axis, three inputs.
	g = graph.New()
	got = mvEval(t, g, g.Concat(1, g.Input("a", tensor.I32, 2, 1), g.Input("b", tensor.I32, 2, 2), g.Input("c", tensor.I32, 2, 1)),
		map[string]tensor.Tensor{"a": mvI32(t, tensor.Shape{2, 1}, 1, 2), "b": mvI32(t, tensor.Shape{2, 2}, 3, 4, 5, 6), "c": mvI32(t, tensor.Shape{2, 1}, 7, 8)})
	mvWantI32(t, got, tensor.Shape{2, 4}, 1, 3, 4, 7, 2, 5, 6, 8)
}

func TestMovementSplit(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.I32, 2, 5)
	pieces := g.Split(x, 1, 2, 0, 3)
	g.Output(pieces...)
	res, err := Interpret(g, map[string]tensor.Tensor{"x": mvIota(tensor.Shape{2, 5})})
	if err != nil {
		t.Fatal(err)
	}
	mvWantI32(t, res[0], tensor.Shape{2, 2}, 0, 1, 5, 6)
	mvWantI32(t, res[1], tensor.Shape{2, 0})
	mvWantI32(t, res[2], tensor.Shape{2, 3}, 2, 3, 4, 7, 8, 9)

	g = graph.New()
	x = g.Input("x", tensor.I32, 4, 2)
	g.Output(g.SplitEqual(x, 0, 2)...)
	res, err = Interpret(g, map[string]tensor.Tensor{"x": mvIota(tensor.Shape{4, 2})})
	if err != nil {
		t.Fatal(err)
	}
	mvWantI32(t, res[0], tensor.Shape{2, 2}, 0, 1, 2, 3)
	mvWantI32(t, res[1], tensor.Shape{2, 2}, 4, 5, 6, 7)
}

// TestMovementNoAllocs runs prepared kernels of every op and checks that a
// run allocates nothing.
func TestMovementNoAllocs(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 3, 4, 5)
	idx := g.Input("i", tensor.I64, 2)
	nodes := []*graph.Node{
		g.Reshape(x, 12, 5), g.Transpose(x, 2, 0, 1), g.Concat(1, x, x), g.Split(x, 2, 2, 3)[1],
		g.Slice(x, graph.SliceSpec{Axes: []int{2, 0}, Starts: []int{-1, 0}, Ends: []int{-10, 3}, Steps: []int{-2, 2}}),
		g.Gather(x, idx, 1), g.Expand(x, 2, 3, 4, 5), g.Tile(x, 2, 1, 2),
		g.Pad(x, []int{1, 0, 2, 1, 0, 2}, graph.PadReflect, 0), g.Pad(x, []int{1, 0, 2, 1, 0, 2}, graph.PadConstant, 3),
		g.Pad(x, []int{1, 0, 2, 1, 0, 2}, graph.PadEdge, 0),
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	xv := tensor.New(tensor.F32, 3, 4, 5)
	iv, _ := tensor.FromI64(tensor.Shape{2}, []int64{-1, 2})
	for _, n := range nodes {
		k, err := PrepareReference(n)
		if err != nil {
			t.Fatalf("%v: %v", n, err)
		}
		ins := []tensor.Tensor{xv, xv}
		if n.Op == graph.OpGather {
			ins[1] = iv
		}
		ins = ins[:len(n.Inputs)]
		out := tensor.New(n.DType, n.Shape...)
		if a := testing.AllocsPerRun(5, func() {
			if err := k(ins, out); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%v: %v allocations per run", n, a)
		}
	}
}

// TestMovementBadBuffers checks that wrong-sized tensors are errors.
func TestMovementBadBuffers(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	for _, n := range []*graph.Node{g.Transpose(x), g.Reshape(x, 6), g.Tile(x, 1, 2)} {
		k, err := PrepareReference(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := k([]tensor.Tensor{tensor.New(tensor.F32, 5)}, tensor.New(n.DType, n.Shape...)); err == nil {
			t.Errorf("%v: short input accepted", n)
		}
		if err := k([]tensor.Tensor{tensor.New(tensor.F32, 2, 3)}, tensor.New(n.DType, 1)); err == nil {
			t.Errorf("%v: short output accepted", n)
		}
	}
	// A node whose attributes disagree with its shape is refused at prepare.
	bad := *g.Transpose(x)
	bad.Attrs.Perm = []int{0, 0}
	if _, err := PrepareReference(&bad); err == nil {
		t.Error("transpose with perm [0 0] prepared")
	}
}
