package asm

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/kilnml/kiln/ops/cpuid"
)

// Edge cases of the elementwise kernels that the sampled sweeps of
// ew_kernels_test.go and math_accuracy_test.go reach only by chance, for
// every variant.

// TestEwMinMaxSignedZero: max and min of every variant order -0 below +0
// and return NaN for a NaN in either operand, in every form and operand
// order, in the vector body (32 elements: two AVX-512 blocks) and a tail.
func TestEwMinMaxSignedZero(t *testing.T) {
	neg, pos, nan := float32(math.Copysign(0, -1)), float32(0), float32(math.NaN())
	inf := float32(math.Inf(1))
	vals := []float32{pos, neg, nan, 1, -1, inf, -inf}
	for _, v := range EwVariants() {
		for _, op := range []EwBinary{EwMax, EwMin} {
			for _, a := range vals {
				for _, b := range vals {
					want := max(a, b)
					if op == EwMin {
						want = min(a, b)
					}
					const n = 37
					x, y, dst := make([]float32, n), make([]float32, n), make([]float32, n)
					for i := range x {
						x[i], y[i] = a, b
					}
					for form := range ewForm(3) {
						if err := ewRunBinary(v, op, form, dst, x, y, map[ewForm]float32{ewFormVS: b, ewFormSV: a}[form]); err != nil {
							t.Fatal(err)
						}
						for i, got := range dst {
							if !sameBits(got, want) {
								t.Fatalf("%s %v/%v(%v, %v) element %d = %v (sign %v), want %v", v.Name, op, form, a, b, i,
									got, math.Signbit(float64(got)), want)
							}
						}
					}
				}
			}
		}
	}
}

// TestEwVariantsExhaustive compares every assembly variant's unary
// functions with the next variant's (avx512 with avx2, avx2 with the Go
// twins) over all 2^32 bit patterns, when KILN_EW_EXHAUSTIVE is set:
// TestEwTwinBits samples the patterns, this takes them all (15-90 s a
// function for avx512 against avx2 on a shared 2-core Zen 5; the Go
// twins, with KILN_EW_EXHAUSTIVE=go, take far longer).
func TestEwVariantsExhaustive(t *testing.T) {
	if os.Getenv("KILN_EW_EXHAUSTIVE") == "" {
		t.Skip("set KILN_EW_EXHAUSTIVE=1 to compare the variants over every float32")
	}
	vs := EwVariants()
	for i := 0; i+1 < len(vs) && vs[i].Feature != cpuid.Generic; i++ {
		a, b := vs[i], vs[i+1]
		if b == ewGo && os.Getenv("KILN_EW_EXHAUSTIVE") != "go" {
			continue // KILN_EW_EXHAUSTIVE=go: against the twins too
		}
		for op := range EwUnary(ewNumUnary) {
			t.Run(a.Name+"-"+b.Name+"/"+op.String(), func(t *testing.T) {
				const chunk = 1 << 20
				xs, ga, gb := make([]float32, chunk), make([]float32, chunk), make([]float32, chunk)
				for base := uint64(0); base < 1<<32; base += chunk {
					for i := range xs {
						xs[i] = math.Float32frombits(uint32(base) + uint32(i))
					}
					if err := a.Unary(op, ga, xs); err != nil {
						t.Fatal(err)
					}
					if err := b.Unary(op, gb, xs); err != nil {
						t.Fatal(err)
					}
					if i := firstDiff(ga, gb); i >= 0 {
						t.Fatalf("%v(%v [%#08x]): %s %v, %s %v", op, xs[i], math.Float32bits(xs[i]), a.Name, ga[i], b.Name, gb[i])
					}
				}
			})
		}
	}
}

// TestEwUnaryBinadeEdges compares every variant with the Go twins at the
// edges of every binade, where range reductions switch: mantissas 0, 1,
// half way, all ones, and either side of log's m = 2·float32(√½) (whose
// comparison the sampled sweeps would only hit by chance), in normals
// and, by the shifts of that boundary, in subnormals; both signs.
func TestEwUnaryBinadeEdges(t *testing.T) {
	var bits []uint32
	for e := uint32(0); e < 256; e++ {
		for _, m := range []uint32{0, 1, 0x3504F2, 0x3504F3, 0x3504F4, 0x400000, 0x7FFFFE, 0x7FFFFF} {
			bits = append(bits, e<<23|m)
		}
	}
	for s := 1; s <= 23; s++ { // subnormals: the √½ boundary shifted into the low bits
		b := uint32(0xB504F3) >> s
		bits = append(bits, b-1, b, b+1)
	}
	var xs []float32
	for _, b := range bits {
		xs = append(xs, math.Float32frombits(b), math.Float32frombits(b|1<<31))
	}
	got, want := make([]float32, len(xs)), make([]float32, len(xs))
	for _, v := range EwVariants() {
		for op := range EwUnary(ewNumUnary) {
			if err := v.Unary(op, got, xs); err != nil {
				t.Fatal(err)
			}
			if err := ewGo.Unary(op, want, xs); err != nil {
				t.Fatal(err)
			}
			if i := firstDiff(got, want); i >= 0 {
				t.Errorf("%s %v(%v [%#08x]) = %v, twin %v", v.Name, op, xs[i], math.Float32bits(xs[i]), got[i], want[i])
			}
		}
	}
}

// TestEwClamp checks every variant's Clamp against Go's min(max(x, lo),
// hi), bit for bit (any NaN for a NaN): signed zeros, infinities and NaNs
// in x and in the bounds, lengths across the vector blocks and tails, in
// place and not, misaligned starts, and an output large enough for
// non-temporal stores.
func TestEwClamp(t *testing.T) {
	neg, nan, inf := float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1))
	special := []float32{0, neg, nan, 1, -1, inf, -inf, 5.9999995, 6, 6.0000005, 1e-40}
	bounds := [][2]float32{{0, 6}, {neg, 0}, {0, neg}, {-1, 1}, {-inf, 6}, {0, inf}, {3, 3}, {nan, 6}, {0, nan}, {-inf, inf}}
	r := rand.New(rand.NewPCG(3, 9))
	for _, v := range EwVariants() {
		for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 63, 64, 65, 200, 1031, ewStreamBytes/4 + 37} { // the last: non-temporal stores
			x := make([]float32, n+1)
			for i := range x {
				if r.IntN(4) == 0 {
					x[i] = special[r.IntN(len(special))]
				} else {
					x[i] = float32(r.NormFloat64() * 5)
				}
			}
			for _, b := range bounds {
				for _, off := range []int{0, 1} {
					src := x[off : off+n]
					for _, inPlace := range []bool{false, true} {
						dst := make([]float32, n)
						if inPlace {
							copy(dst, src)
							src = dst
						}
						orig := append([]float32(nil), src...)
						if err := v.Clamp(dst, src, b[0], b[1]); err != nil {
							t.Fatal(err)
						}
						for i, got := range dst {
							if want := min(max(orig[i], b[0]), b[1]); !sameBits(got, want) {
								t.Fatalf("%s Clamp(%v, %v, %v) n=%d off=%d in place %v: element %d = %v, want %v",
									v.Name, orig[i], b[0], b[1], n, off, inPlace, i, got, want)
							}
						}
						src = x[off : off+n]
					}
				}
			}
		}
		if err := v.Clamp(make([]float32, 3), make([]float32, 4), 0, 6); err == nil {
			t.Errorf("%s Clamp of lengths 3 and 4: no error", v.Name)
		}
		buf := make([]float32, 40)
		if err := v.Clamp(buf[1:33], buf[:32], 0, 6); err != ErrEwAlias {
			t.Errorf("%s Clamp with a partly overlapping output: %v, want ErrEwAlias", v.Name, err)
		}
	}
}
