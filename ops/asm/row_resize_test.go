package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The upsampling row kernels against references written from their
// definitions: Repeat's output element i·s+j is input i, and Lerp2's
// outputs are a·u + b·v with each product and the sum rounded to float32,
// computed here in float64 (a product of two float32 is exact in float64,
// and the float64 sum of two float32 rounds to the same float32 as a
// float32 sum). Every variant, lengths 0..80 plus long rows (every
// vector tail of the 8- and 16-wide bodies), misaligned starts, NaN,
// ±Inf, ±0 and subnormals mixed in, guard words around every output,
// inputs checked unchanged.

func TestRepeatRows(t *testing.T) {
	for _, k := range RowVariants() {
		for _, n := range rowLengths() {
			for _, s := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 49, 64} {
				for off := range 3 {
					r := rand.New(rand.NewPCG(uint64(n), uint64(s*3+off)))
					x := make([]float32, n)
					specialRow(r, x, 3, off == 1)
					x0 := append([]float32(nil), x...)
					y := newGuarded(n*s, off)
					k.Repeat(y.Data, x, s)
					y.check(t, "Repeat")
					for o, v := range y.Data {
						if math.Float32bits(v) != math.Float32bits(x0[o/s]) {
							t.Fatalf("%s n=%d s=%d off=%d: y[%d] = %v, want x[%d] = %v", k.Name, n, s, off, o, v, o/s, x0[o/s])
						}
					}
					for i := range x {
						if math.Float32bits(x[i]) != math.Float32bits(x0[i]) {
							t.Fatalf("%s n=%d s=%d: input %d changed", k.Name, n, s, i)
						}
					}
				}
			}
		}
	}
}

// lerpRef is a·u + b·v with both products and the sum rounded to
// float32, from float64 arithmetic.
func lerpRef(a, u, b, v float32) float32 {
	p := float32(float64(a) * float64(u))
	q := float32(float64(b) * float64(v))
	return float32(float64(p) + float64(q))
}

func TestLerp2Rows(t *testing.T) {
	weights := [][2]float32{{0.75, 0.25}, {0.25, 0.75}, {0.5, 0.5}, {0.3, 0.7}, {1, 0}}
	for _, k := range RowVariants() {
		for _, n := range rowLengths() {
			for off := range 3 {
				r := rand.New(rand.NewPCG(uint64(n), uint64(off+7)))
				w := weights[(n+off)%len(weights)]
				x := make([]float32, n+1)
				specialRow(r, x, 3, off == 1)
				x0 := append([]float32(nil), x...)
				y := newGuarded(2*n, off)
				k.Lerp2(y.Data, x, w[0], w[1])
				y.check(t, "Lerp2")
				for i := range n {
					u, v := x0[i], x0[i+1]
					for j, want := range []float32{lerpRef(w[0], u, w[1], v), lerpRef(w[1], u, w[0], v)} {
						if got := y.Data[2*i+j]; !bitsEq(got, want) {
							t.Fatalf("%s n=%d off=%d w=%v: y[%d] = %v, want %v (inputs %v, %v)", k.Name, n, off, w, 2*i+j, got, want, u, v)
						}
					}
				}
				for i := range x {
					if !bitsEq(x[i], x0[i]) {
						t.Fatalf("%s n=%d: input %d changed", k.Name, n, i)
					}
				}
			}
		}
	}
}

// TestResizeRowChecks: wrong lengths and overlaps panic before any
// kernel runs (the ops layer never passes them).
func TestResizeRowChecks(t *testing.T) {
	k := rowsGo
	buf := make([]float32, 16)
	for name, f := range map[string]func(){
		"Repeat length":  func() { k.Repeat(buf[:5], buf[8:10], 2) },
		"Repeat factor":  func() { k.Repeat(buf[:0], buf[8:10], 0) },
		"Repeat overlap": func() { k.Repeat(buf[:4], buf[3:5], 2) },
		"Lerp2 length":   func() { k.Lerp2(buf[:5], buf[8:11], 1, 0) },
		"Lerp2 overlap":  func() { k.Lerp2(buf[:4], buf[2:5], 1, 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestBlendRows checks Blend against lerpRef for every variant, length
// and misalignment, with dst separate and dst aliasing each input.
func TestBlendRows(t *testing.T) {
	for _, k := range RowVariants() {
		for _, n := range rowLengths() {
			for off := range 3 {
				r := rand.New(rand.NewPCG(uint64(n), uint64(off+11)))
				a, b := float32(0.75), float32(0.25)
				if off == 2 {
					a, b = 0.3, -1.7
				}
				u, v := make([]float32, n), make([]float32, n)
				specialRow(r, u, 3, off == 1)
				specialRow(r, v, 3, off == 1)
				want := make([]float32, n)
				for i := range want {
					want[i] = lerpRef(a, u[i], b, v[i])
				}
				for alias := range 3 {
					y := newGuarded(n, off)
					x0, x1 := append([]float32(nil), u...), append([]float32(nil), v...)
					switch alias {
					case 1:
						copy(y.Data, u)
						x0 = y.Data
					case 2:
						copy(y.Data, v)
						x1 = y.Data
					}
					k.Blend(y.Data, x0, x1, a, b)
					y.check(t, "Blend")
					for i := range want {
						if !bitsEq(y.Data[i], want[i]) {
							t.Fatalf("%s n=%d off=%d alias=%d: y[%d] = %v, want %v (inputs %v, %v)", k.Name, n, off, alias, i, y.Data[i], want[i], u[i], v[i])
						}
					}
					if alias != 1 && !slicesBitsEq(x0, u) || alias != 2 && !slicesBitsEq(x1, v) {
						t.Fatalf("%s n=%d alias=%d: an input changed", k.Name, n, alias)
					}
				}
			}
		}
	}
}

// slicesBitsEq reports whether a and b hold the same values bit for bit
// (NaNs equal).
func slicesBitsEq(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bitsEq(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestResizeRowPrimitivesPresent: every variant brings its own repeat,
// lerp2, blend and blendRows (a nil one would fall back to the twin unnoticed: the
// value tests above would still pass, at scalar speed).
func TestResizeRowPrimitivesPresent(t *testing.T) {
	for _, k := range RowVariants() {
		if k.repeat == nil || k.lerp2 == nil || k.blend == nil || k.blendRows == nil {
			t.Errorf("%s: repeat %v, lerp2 %v, blend %v, blendRows %v present", k.Name, k.repeat != nil, k.lerp2 != nil, k.blend != nil, k.blendRows != nil)
		}
	}
}
