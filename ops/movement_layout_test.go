package ops

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func mvSlice1D(t *testing.T, n int, start, end, step int) tensor.Tensor {
	t.Helper()
	g := graph.New()
	x := g.Input("x", tensor.I32, n)
	return mvEval(t, g, g.Slice(x, graph.SliceSpec{Starts: []int{start}, Ends: []int{end}, Steps: []int{step}}),
		map[string]tensor.Tensor{"x": mvIota(tensor.Shape{n})})
}

func TestMovementSliceCases(t *testing.T) {
	cases := []struct {
		start, end, step int
		want             []int32
	}{
		{2, 7, 2, []int32{2, 4, 6}},
		{8, 2, -2, []int32{8, 6, 4}},
		{-1, -11, -1, []int32{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}}, // end -11 clamps to "through index 0"
		{-1, -100, -3, []int32{9, 6, 3, 0}},
		{100, 5, -2, []int32{9, 7}}, // start clamps to the last element
		{-100, 100, 1, []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{-100, 100, 4, []int32{0, 4, 8}},
		{-3, -1, 1, []int32{7, 8}},
		{3, 3, 1, nil},
		{3, 5, -1, nil},
		{5, 3, 1, nil},
		{-1, -1, -1, nil},
	}
	for _, c := range cases {
		got := mvSlice1D(t, 10, c.start, c.end, c.step)
		mvWantShape(t, got, tensor.I32, len(c.want))
		if !slices.Equal(got.I32(), c.want) {
			t.Errorf("[%d:%d:%d] = %v, want %v", c.start, c.end, c.step, got.I32(), c.want)
		}
	}

	// Two axes, one negative, in reverse order; the middle axis untouched.
	g := graph.New()
	x := g.Input("x", tensor.I32, 3, 2, 4)
	got := mvEval(t, g, g.Slice(x, graph.SliceSpec{Axes: []int{-1, 0}, Starts: []int{-1, 2}, Ends: []int{0, -10}, Steps: []int{-2, -2}}),
		map[string]tensor.Tensor{"x": mvIota(tensor.Shape{3, 2, 4})})
	// axis 0: rows 2, 0; axis 2: columns 3, 1.
	mvWantI32(t, got, tensor.Shape{2, 2, 2}, 19, 17, 23, 21, 3, 1, 7, 5)
}

// mvSliceIndices lists the indices of [0, n) that a slice selects, by
// filtering rather than by the builder's arithmetic: only the start is
// clamped (it fixes the phase of the step), the end is a plain bound.
func mvSliceIndices(n, start, end, step int) []int {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	var out []int
	if step > 0 {
		start = max(start, 0)
		for i := range n {
			if i >= start && i < end && (i-start)%step == 0 {
				out = append(out, i)
			}
		}
		return out
	}
	start = min(start, n-1)
	for i := n - 1; i >= 0; i-- {
		if i <= start && i > end && (start-i)%(-step) == 0 {
			out = append(out, i)
		}
	}
	return out
}

func TestMovementSliceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for range 200 {
		s := tensor.Shape{1 + rng.IntN(5), rng.IntN(5), 1 + rng.IntN(6)}
		if rng.IntN(4) == 0 {
			s[1] = 1 + rng.IntN(4)
		}
		var sp graph.SliceSpec
		sel := [][]int{}
		for ax := range s {
			sel = append(sel, nil)
			for i := range s[ax] {
				sel[ax] = append(sel[ax], i)
			}
		}
		for _, ax := range rng.Perm(3)[:1+rng.IntN(3)] {
			st, en := rng.IntN(2*s[ax]+5)-s[ax]-2, rng.IntN(2*s[ax]+5)-s[ax]-2
			step := 1 + rng.IntN(3)
			if rng.IntN(2) == 0 {
				step = -step
			}
			sp.Axes, sp.Starts, sp.Ends, sp.Steps = append(sp.Axes, ax), append(sp.Starts, st), append(sp.Ends, en), append(sp.Steps, step)
			sel[ax] = mvSliceIndices(s[ax], st, en, step)
		}
		g := graph.New()
		x := mvIota(s)
		got := mvEval(t, g, g.Slice(g.Input("x", tensor.I32, s...), sp), map[string]tensor.Tensor{"x": x})
		for ax := range s {
			if got.Shape[ax] != len(sel[ax]) {
				t.Fatalf("%v %+v: shape %v, want axis %d = %v", s, sp, got.Shape, ax, sel[ax])
			}
		}
		mvCheckMap(t, got, x, func(o []int) []int { return []int{sel[0][o[0]], sel[1][o[1]], sel[2][o[2]]} })
	}
}

func TestMovementExpand(t *testing.T) {
	// [3 1] against [2 1 4]: both sides broadcast.
	g := graph.New()
	got := mvEval(t, g, g.Expand(g.Input("x", tensor.I32, 3, 1), 2, 1, 4), map[string]tensor.Tensor{"x": mvI32(t, tensor.Shape{3, 1}, 7, 8, 9)})
	mvWantI32(t, got, tensor.Shape{2, 3, 4},
		7, 7, 7, 7, 8, 8, 8, 8, 9, 9, 9, 9,
		7, 7, 7, 7, 8, 8, 8, 8, 9, 9, 9, 9)

	// Target smaller than the input: [1 3] against [2 1] gives [2 3].
	g = graph.New()
	got = mvEval(t, g, g.Expand(g.Input("x", tensor.I32, 1, 3), 2, 1), map[string]tensor.Tensor{"x": mvI32(t, tensor.Shape{1, 3}, 1, 2, 3)})
	mvWantI32(t, got, tensor.Shape{2, 3}, 1, 2, 3, 1, 2, 3)

	// Scalar to a shape, and a broadcast middle dim.
	g = graph.New()
	got = mvEval(t, g, g.Expand(g.Input("x", tensor.I32), 2, 2), map[string]tensor.Tensor{"x": mvI32(t, nil, 5)})
	mvWantI32(t, got, tensor.Shape{2, 2}, 5, 5, 5, 5)
	g = graph.New()
	got = mvEval(t, g, g.Expand(g.Input("x", tensor.I32, 2, 1, 2), 2, 3, 2), map[string]tensor.Tensor{"x": mvI32(t, tensor.Shape{2, 1, 2}, 1, 2, 3, 4)})
	mvWantI32(t, got, tensor.Shape{2, 3, 2}, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4)

	// A size-1 dim expanded to 0.
	g = graph.New()
	got = mvEval(t, g, g.Expand(g.Input("x", tensor.I32, 1, 2), 0, 2), map[string]tensor.Tensor{"x": mvI32(t, tensor.Shape{1, 2}, 1, 2)})
	mvWantI32(t, got, tensor.Shape{0, 2})
}

func TestMovementTile(t *testing.T) {
	g := graph.New()
	got := mvEval(t, g, g.Tile(g.Input("x", tensor.I32, 2, 3), 2, 2), map[string]tensor.Tensor{"x": mvIota(tensor.Shape{2, 3})})
	mvWantI32(t, got, tensor.Shape{4, 6},
		0, 1, 2, 0, 1, 2,
		3, 4, 5, 3, 4, 5,
		0, 1, 2, 0, 1, 2,
		3, 4, 5, 3, 4, 5)

	g = graph.New()
	got = mvEval(t, g, g.Tile(g.Input("x", tensor.I32, 2, 1), 1, 3), map[string]tensor.Tensor{"x": mvI32(t, tensor.Shape{2, 1}, 4, 9)})
	mvWantI32(t, got, tensor.Shape{2, 3}, 4, 4, 4, 9, 9, 9)

	g = graph.New()
	got = mvEval(t, g, g.Tile(g.Input("x", tensor.I32, 2), 3), map[string]tensor.Tensor{"x": mvI32(t, tensor.Shape{2}, 1, 2)})
	mvWantI32(t, got, tensor.Shape{6}, 1, 2, 1, 2, 1, 2)

	g = graph.New()
	got = mvEval(t, g, g.Tile(g.Input("x", tensor.I32, 2, 2), 0, 2), map[string]tensor.Tensor{"x": mvIota(tensor.Shape{2, 2})})
	mvWantI32(t, got, tensor.Shape{0, 4})

	// Against an independent index computation: out[i] = x[i mod dim].
	s, reps := tensor.Shape{2, 3, 2}, []int{3, 1, 2}
	x := mvPattern(tensor.BF16, s)
	g = graph.New()
	got = mvEval(t, g, g.Tile(g.Input("x", tensor.BF16, s...), reps...), map[string]tensor.Tensor{"x": x})
	mvWantShape(t, got, tensor.BF16, 6, 3, 4)
	mvCheckMap(t, got, x, func(o []int) []int { return []int{o[0] % 2, o[1] % 3, o[2] % 2} })
}
