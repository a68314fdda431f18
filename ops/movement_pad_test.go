package ops

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func mvPad(t *testing.T, x tensor.Tensor, pads []int, mode graph.PadMode, v float32) tensor.Tensor {
	t.Helper()
	g := graph.New()
	in := g.Input("x", x.DType, x.Shape...)
	return mvEval(t, g, g.Pad(in, pads, mode, v), map[string]tensor.Tensor{"x": x})
}

func TestMovementPadReflect2D(t *testing.T) {
	x := mvI32(t, tensor.Shape{2, 3}, 1, 2, 3, 4, 5, 6)
	got := mvPad(t, x, []int{1, 2, 1, 1}, graph.PadReflect, 0)
	mvWantI32(t, got, tensor.Shape{4, 6},
		6, 5, 4, 5, 6, 5,
		3, 2, 1, 2, 3, 2,
		6, 5, 4, 5, 6, 5,
		3, 2, 1, 2, 3, 2)
}

func TestMovementPadEdge2D(t *testing.T) {
	x := mvI32(t, tensor.Shape{2, 3}, 1, 2, 3, 4, 5, 6)
	got := mvPad(t, x, []int{1, 2, 1, 1}, graph.PadEdge, 0)
	mvWantI32(t, got, tensor.Shape{4, 6},
		1, 1, 1, 2, 3, 3,
		1, 1, 1, 2, 3, 3,
		4, 4, 4, 5, 6, 6,
		4, 4, 4, 5, 6, 6)
}

func TestMovementPadConstant(t *testing.T) {
	// I32: the value truncates toward zero.
	got := mvPad(t, mvI32(t, tensor.Shape{2, 2}, 1, 2, 3, 4), []int{0, 1, 1, 0}, graph.PadConstant, -2.7)
	mvWantI32(t, got, tensor.Shape{3, 3}, -2, 1, 2, -2, 3, 4, -2, -2, -2)

	// F16: 0.5, 1 and 2 are 0x3800, 0x3c00 and 0x4000.
	x := tensor.New(tensor.F16, 2)
	copy(x.F16(), []uint16{0x3c00, 0x4000})
	got = mvPad(t, x, []int{1, 2}, graph.PadConstant, 0.5)
	mvWantShape(t, got, tensor.F16, 5)
	if want := []uint16{0x3800, 0x3c00, 0x4000, 0x3800, 0x3800}; !slices.Equal(got.F16(), want) {
		t.Errorf("f16 pad = %#x, want %#x", got.F16(), want)
	}

	// Bool: a non-zero value is true, zero is false.
	b, _ := tensor.FromBool(tensor.Shape{2}, []bool{true, false})
	got = mvPad(t, b, []int{1, 1}, graph.PadConstant, 0.25)
	if want := []bool{true, true, false, true}; !slices.Equal(got.Bool(), want) {
		t.Errorf("bool pad 0.25 = %v, want %v", got.Bool(), want)
	}
	got = mvPad(t, b, []int{1, 1}, graph.PadConstant, 0)
	if want := []bool{false, true, false, false}; !slices.Equal(got.Bool(), want) {
		t.Errorf("bool pad 0 = %v, want %v", got.Bool(), want)
	}

	// An empty input pads to all value; a zero-pad is a copy.
	got = mvPad(t, tensor.New(tensor.I32, 0, 2), []int{1, 0, 1, 1}, graph.PadConstant, 9)
	mvWantI32(t, got, tensor.Shape{2, 3}, 9, 9, 9, 9, 9, 9)
	got = mvPad(t, mvI32(t, tensor.Shape{2}, 4, 5), []int{0, 0}, graph.PadReflect, 0)
	mvWantI32(t, got, tensor.Shape{2}, 4, 5)
}

// TestMovementPadRandom checks 3-D pads of every mode against a per-element
// index map: reflect mirrors without repeating the edge, edge clamps.
func TestMovementPadRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	for _, mode := range []graph.PadMode{graph.PadConstant, graph.PadReflect, graph.PadEdge} {
		for range 60 {
			s := tensor.Shape{1 + rng.IntN(4), 1 + rng.IntN(4), 1 + rng.IntN(5)}
			pads := make([]int, 6)
			for i := range 3 {
				lim := 4
				if mode == graph.PadReflect {
					lim = s[i] // reflect needs pads smaller than the dim
				}
				pads[i], pads[3+i] = rng.IntN(lim), rng.IntN(lim)
			}
			x := mvPattern(tensor.U8, s)
			got := mvPad(t, x, pads, mode, 200)
			for d := range 3 {
				if got.Shape[d] != s[d]+pads[d]+pads[3+d] {
					t.Fatalf("%v pads %v: shape %v", s, pads, got.Shape)
				}
			}
			for i, v := range got.U8() {
				o := mvUnravel(i, got.Shape)
				src, inside := make([]int, 3), true
				for d := range 3 {
					j := o[d] - pads[d]
					for mode == graph.PadReflect && (j < 0 || j >= s[d]) {
						if j < 0 {
							j = -j
						} else {
							j = 2*s[d] - 2 - j
						}
					}
					if mode == graph.PadEdge {
						j = max(0, min(j, s[d]-1))
					}
					inside = inside && j >= 0 && j < s[d]
					src[d] = j
				}
				want := byte(200)
				if inside {
					want = x.U8()[mvRavel(src, s)]
				}
				if v != want {
					t.Fatalf("%v %v pads %v: out %v = %d, want %d", mode, s, pads, o, v, want)
				}
			}
		}
	}
}

// TestMovementPadLeavesInput checks the input is not written.
func TestMovementPadLeavesInput(t *testing.T) {
	x := mvPattern(tensor.I64, tensor.Shape{3, 4})
	before := bytes.Clone(x.Data)
	mvPad(t, x, []int{2, 1, 2, 3}, graph.PadReflect, 0)
	if !bytes.Equal(x.Data, before) {
		t.Fatal("pad wrote its input")
	}
}
