package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// convT4Variants are the Go twins ("go") and every vector ConvT4, by
// feature.
func convT4Variants() map[string]*ConvT4 {
	ks := map[string]*ConvT4{"go": {sums: convT4SumsGo, planes: convT4PlanesGo}}
	for _, k := range convFamily.asm {
		if k.t4sums != nil {
			ks[string(k.feature)] = &ConvT4{sums: k.t4sums, planes: k.t4planes}
		}
	}
	return ks
}

// TestConvT4Sums checks every variant's tap sums against their
// definition summed in float64: depths from one input channel on,
// weights packed (ldw = 48) and as stored among other channels, a NaN
// and an Inf in the input and weights, nothing written past the sums.
func TestConvT4Sums(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for name, k := range convT4Variants() {
		for _, depth := range []int{1, 2, 7, 64} {
			for _, ldw := range []int{48, 48 + 16*5} {
				for _, special := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/depth=%d/ldw=%d/special=%v", name, depth, ldw, special), func(t *testing.T) {
						x, w := randFloats(r, 16*depth), randFloats(r, (depth-1)*ldw+48)
						if special {
							x[r.IntN(len(x))] = float32(math.NaN())
							w[r.IntN(len(w))] = float32(math.Inf(-1))
						}
						c := newGuarded(256*ConvT4Cols, 0)
						if err := k.Sums(c.Data, x, w, ldw, depth); err != nil {
							t.Fatal(err)
						}
						c.check(t, "sums")
						approx.Slices(t, "sums", c.Data, convT4SumsWant(x, w, ldw, depth), 1e-5, 1e-5*float64(depth))
					})
				}
			}
		}
	}
}

// convT4SumsWant is ConvT4.Sums's definition, summed in float64.
func convT4SumsWant(x, w []float32, ldw, depth int) []float32 {
	want := make([]float32, 256*ConvT4Cols)
	for v := range ConvT4Cols {
		for cell := range 16 {
			for tp := range 16 {
				var s float64
				for q := range depth {
					s += float64(x[16*q+cell]) * float64(w[q*ldw+16*v+tp])
				}
				want[256*v+16*cell+tp] = float32(s)
			}
		}
	}
	return want
}

// TestConvT4Planes checks every variant's planes against the definition
// of the transposed convolution (output cell (2iy-1+ky, 2ix-1+kx) takes
// tap (ky, kx) of input cell (iy, ix), the rest fall outside), summed in
// float64, and the vector variants' bits against the Go twin's (the
// same additions in the same order): one to five channels, specials
// among the sums, nothing written past the planes.
func TestConvT4Planes(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	twin := convT4Variants()["go"]
	for name, k := range convT4Variants() {
		for _, n := range []int{1, 2, 5} {
			for _, special := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/n=%d/special=%v", name, n, special), func(t *testing.T) {
					p, bias := randFloats(r, 256*n), randFloats(r, n)
					if special {
						p[r.IntN(len(p))] = float32(math.NaN())
						p[r.IntN(len(p))] = float32(math.Inf(1))
					}
					o := newGuarded(64*n, 0)
					if err := k.Planes(o.Data, p, bias); err != nil {
						t.Fatal(err)
					}
					o.check(t, "planes")
					want := make([]float64, 64*n)
					for ch := range n {
						for i := range 64 {
							want[64*ch+i] = float64(bias[ch])
						}
						for cell := range 16 {
							iy, ix := cell/4, cell%4
							for tp := range 16 {
								oy, ox := 2*iy-1+tp/4, 2*ix-1+tp%4
								if oy >= 0 && oy < 8 && ox >= 0 && ox < 8 {
									want[64*ch+8*oy+ox] += float64(p[256*ch+16*cell+tp])
								}
							}
						}
					}
					want32 := make([]float32, len(want))
					for i, v := range want {
						want32[i] = float32(v)
					}
					approx.Slices(t, "planes", o.Data, want32, 1e-6, 1e-6)
					bits := make([]float32, 64*n)
					if err := twin.Planes(bits, p, bias); err != nil {
						t.Fatal(err)
					}
					for i := range bits {
						if math.Float32bits(bits[i]) != math.Float32bits(o.Data[i]) && !(bits[i] != bits[i] && o.Data[i] != o.Data[i]) {
							t.Fatalf("plane float %d: %v, the Go twin %v", i, o.Data[i], bits[i])
						}
					}
				})
			}
		}
	}
}

// TestConvT4Errors checks that bad operands get errors naming them.
func TestConvT4Errors(t *testing.T) {
	k := convT4Variants()["go"]
	x, w, c := make([]float32, 32), make([]float32, 96), make([]float32, 768)
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"depth 0", k.Sums(c, x, w, 48, 0)},
		{"stride under 48", k.Sums(c, x, w, 40, 2)},
		{"short input", k.Sums(c, x[:31], w, 48, 2)},
		{"short weights", k.Sums(c, x, w[:95], 48, 2)},
		{"short sums", k.Sums(c[:767], x, w, 48, 2)},
		{"no channels", k.Planes(c, c, nil)},
		{"short planes' sums", k.Planes(c, c[:511], []float32{1, 2})},
		{"short output", k.Planes(c[:127], c, []float32{1, 2})},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// FuzzConvT4 runs every variant's sums on a fuzz-chosen depth, weight
// stride and operands (specials among them) against their definition
// summed in float64, and its planes of one to four channels against the
// Go twin's bits; neither may write past its output.
func FuzzConvT4(f *testing.F) {
	f.Add([]byte{3, 1, 2, 7, 0x81, 9, 4})
	f.Add([]byte{39, 3, 0, 0x87, 1, 0x90, 12, 200, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		depth, ldw, n := 1+in.intn(40), 48+in.intn(40), 1+in.intn(4)
		x, w := in.floats(16*depth, 4), in.floats((depth-1)*ldw+48, 4)
		p, bias := in.floats(256*n, 4), in.floats(n, 4)
		want := convT4SumsWant(x, w, ldw, depth)
		twin := make([]float32, 64*n)
		convT4PlanesGo(n, &p[0], &bias[0], &twin[0])
		for name, k := range convT4Variants() {
			c, o := newGuarded(len(want), in.intn(8)), newGuarded(64*n, in.intn(8))
			if err := k.Sums(c.Data, x, w, ldw, depth); err != nil {
				t.Fatal(err)
			}
			if err := k.Planes(o.Data, p, bias); err != nil {
				t.Fatal(err)
			}
			c.check(t, name+" sums")
			o.check(t, name+" planes")
			for i, v := range want {
				if approx.Far(float64(c.Data[i]), float64(v), 1e-5*(float64(depth)+math.Abs(float64(v)))) {
					t.Fatalf("%s: depth %d, ldw %d: sum %d is %v, want %v", name, depth, ldw, i, c.Data[i], v)
				}
			}
			if !slicesBitsEq(o.Data, twin) {
				t.Fatalf("%s: %d planes %v, the Go twin's %v", name, n, o.Data, twin)
			}
		}
	})
}
