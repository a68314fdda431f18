package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Bit-level tests of the wide row variants (avx512, whose loops step 64
// elements and whose tails run under an opmask) against what each
// primitive promises to match: the Go twin's bits (scale, accAdd,
// accMax/accMin, max/min, scaleAddMax, transpose8), the AVX2 kernel's
// bits (expShift's and expScale's weights, norm, axpy), or a bound (the
// float64 sums). Lengths run from 0 to past two unrolled 64-element
// blocks and every tail, at misaligned starts, with NaN, ±Inf, ±0 and
// subnormals mixed in, guard words on both sides of every output and
// inputs checked unchanged. A variant without a wide sibling to compare
// with (neon, or a machine without AVX-512) is skipped.

// wideLengths: 0..160 (two 64-element blocks, a 16-wide step and every
// tail) and a few longer rows.
func wideLengths() []int {
	var ns []int
	for n := 0; n <= 160; n++ {
		ns = append(ns, n)
	}
	return append(ns, 191, 192, 193, 255, 256, 257, 1023, 1029)
}

// wideVariant returns the avx512 variant and the avx2 one, or skips.
func wideVariant(t *testing.T) (k, avx2 *RowKernels) {
	t.Helper()
	for _, v := range RowVariants() {
		switch v.Name {
		case "avx512":
			k = v
		case "avx2":
			avx2 = v
		}
	}
	if k == nil || avx2 == nil {
		t.Skip("no avx512 row variant on this machine and build")
	}
	return k, avx2
}

// specialRow fills x with values of magnitude up to scale and, unless
// plain, sprinkles ±0, ±Inf, NaN, subnormals and huge values.
func specialRow(r *rand.Rand, x []float32, scale float32, plain bool) {
	randRow(r, x, scale)
	if plain {
		return
	}
	sp := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), 1e-40, -3e-42, 3e38, -3e38}
	for range r.IntN(4) {
		if len(x) > 0 {
			x[r.IntN(len(x))] = sp[r.IntN(len(sp))]
		}
	}
}

func bitsEq(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// forWide runs f for every length, misalignment and a plain and a
// special-valued trial.
func forWide(t *testing.T, f func(t *testing.T, n, off int, plain bool, r *rand.Rand)) {
	for _, n := range wideLengths() {
		for off := range 3 {
			for _, plain := range []bool{true, false} {
				r := rand.New(rand.NewPCG(uint64(n), uint64(off)))
				t.Run(fmt.Sprintf("n=%d/off=%d/plain=%v", n, off, plain), func(t *testing.T) { f(t, n, off, plain, r) })
			}
		}
	}
}

func TestWideReductions(t *testing.T) {
	k, _ := wideVariant(t)
	forWide(t, func(t *testing.T, n, off int, plain bool, r *rand.Rand) {
		xg := newGuarded(n, off)
		x := xg.Data
		specialRow(r, x, 100, plain)
		x0 := slices.Clone(x)
		p := p32(x)
		// max and min: Go's max and min, bit for bit (NaN for NaN).
		if got, want := k.max(p, n), maxGo(p, n); !bitsEq(got, want) {
			t.Fatalf("max = %v (%#x), want %v (%#x)", got, math.Float32bits(got), want, math.Float32bits(want))
		}
		if got, want := k.min(p, n), minGo(p, n); !bitsEq(got, want) {
			t.Fatalf("min = %v (%#x), want %v (%#x)", got, math.Float32bits(got), want, math.Float32bits(want))
		}
		checkMaxNum(t, k, x)
		// The float64 sums: within the bound of summation in another
		// order, relative to Σ|terms| (exact where the twin's is NaN or ±Inf).
		var mag, magSq float64
		for _, v := range x {
			mag += math.Abs(float64(v))
			magSq += (float64(v) + 2) * (float64(v) + 2)
		}
		if got, want := k.sum(p, n), sumGo(p, n); !close64(got, want, mag, 1e-13) {
			t.Fatalf("sum = %v, want %v", got, want)
		}
		if got, want := k.sumSqDev(p, n, -2), sumSqDevGo(p, n, -2); !close64(got, want, magSq, 1e-13) {
			t.Fatalf("sumSqDev = %v, want %v", got, want)
		}
		xg.check(t, "reductions")
		if !slices.EqualFunc(x, x0, sameBits) {
			t.Fatal("input changed")
		}
	})
}

func TestWideAccumulators(t *testing.T) {
	k, _ := wideVariant(t)
	forWide(t, func(t *testing.T, n, off int, plain bool, r *rand.Rand) {
		x := newGuarded(n, off).Data
		specialRow(r, x, 10, plain)
		x0 := slices.Clone(x)
		// accAdd: one float64 rounding each, the twin's bits.
		accBuf := make([]float64, n+off+32)
		for i := range accBuf {
			accBuf[i] = r.Float64()
		}
		want := slices.Clone(accBuf)
		k.accAdd(unsafeF64(accBuf[16+off:]), p32(x), n)
		accAddGo(unsafeF64(want[16+off:]), p32(x), n)
		if !slices.EqualFunc(accBuf, want, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b }) {
			t.Fatalf("accAdd differs from the twin")
		}
		for _, isMax := range []bool{true, false} {
			g := newGuarded(n, (off+1)%3)
			specialRow(r, g.Data, 10, plain)
			if n > 1 && !plain { // equal magnitudes of both signs
				g.Data[n/2] = -x[n/2]
			}
			w := slices.Clone(g.Data)
			if isMax {
				k.accMax(p32(g.Data), p32(x), n)
				accMaxGo(p32(w), p32(x), n)
			} else {
				k.accMin(p32(g.Data), p32(x), n)
				accMinGo(p32(w), p32(x), n)
			}
			g.check(t, "accMax/Min")
			for i := range w {
				if !bitsEq(g.Data[i], w[i]) {
					t.Fatalf("max=%v: element %d = %v, want %v", isMax, i, g.Data[i], w[i])
				}
			}
		}
		if !slices.EqualFunc(x, x0, sameBits) {
			t.Fatal("input changed")
		}
	})
}

func unsafeF64(a []float64) *float64 { return &a[:1][0] }

func TestWideElementwise(t *testing.T) {
	k, avx2 := wideVariant(t)
	forWide(t, func(t *testing.T, n, off int, plain bool, r *rand.Rand) {
		x := newGuarded(n, off).Data
		specialRow(r, x, 50, plain)
		x0 := slices.Clone(x)
		y0 := make([]float32, n)
		specialRow(r, y0, 50, plain)
		px := p32(x)

		// run applies f to a guarded copy of y0 with this variant and ref.
		run := func(what string, ref *RowKernels, f func(k *RowKernels, y *float32) float32) {
			t.Helper()
			g, w := newGuarded(n, (off+2)%5), slices.Clone(y0)
			copy(g.Data, y0)
			got, want := f(k, p32(g.Data)), f(ref, p32(w))
			g.check(t, what)
			if !bitsEq(got, want) {
				t.Fatalf("%s returned %v (%#x), %s %v (%#x)", what, got, math.Float32bits(got), ref.Name, want, math.Float32bits(want))
			}
			for i := range w {
				if !bitsEq(g.Data[i], w[i]) {
					t.Fatalf("%s: element %d = %v, %s %v", what, i, g.Data[i], ref.Name, w[i])
				}
			}
		}
		run("scale", rowsGo, func(k *RowKernels, y *float32) float32 { k.scale(y, n, 0.37); return 0 })
		run("axpy", avx2, func(k *RowKernels, y *float32) float32 { k.axpy(y, px, n, -1.3); return 0 })
		run("scaleAddMax", rowsGo, func(k *RowKernels, y *float32) float32 { return k.scaleAddMax(y, px, n, 0.37) })
		sc, bi := make([]float32, n+16), make([]float32, n+16)
		specialRow(r, sc, 2, true)
		specialRow(r, bi, 1, true)
		// A step of 0 reads element 0 only (AVX2 re-reads the first eight,
		// which its callers, normOnes and normZeros, hold equal), so the
		// step-0 operands are constant rows here.
		sc0, bi0 := slices.Repeat(sc[:1], 16), slices.Repeat(bi[:1], 16)
		for _, st := range [][2]int{{1, 1}, {0, 0}, {1, 0}, {0, 1}} {
			s, b := sc, bi
			if st[0] == 0 {
				s = sc0
			}
			if st[1] == 0 {
				b = bi0
			}
			run("norm", avx2, func(k *RowKernels, y *float32) float32 {
				k.norm(y, px, &s[0], &b[0], n, st[0], st[1], 1.25, -3e-8, 0.7)
				return 0
			})
		}
		// The exponentials: x shifted below m (or m NaN), the AVX2 bits.
		var m float32
		for _, v := range x {
			if v == v {
				m = max(m, v)
			}
		}
		for _, mm := range []float32{m, m + 3, float32(math.NaN())} {
			if math.IsInf(float64(mm), 1) {
				continue
			}
			run("expShift", avx2, func(k *RowKernels, y *float32) float32 { return float32(k.expShift(y, px, n, mm)) })
			if got, want := k.expShift(nil, px, n, mm), avx2.expShift(nil, px, n, mm); !close64(got, want, want, 1e-15) {
				t.Fatalf("expShift(nil) sum %v, avx2 %v", got, want)
			}
			run("expScale", avx2, func(k *RowKernels, y *float32) float32 {
				k.expScale(y, px, n, 0.5, mm*0.5) // the sum is checked below
				return 0
			})
			ga, gb := make([]float32, n), make([]float32, n)
			sa, sb := k.ExpScaleShift(ga, x, 0.5, mm*0.5), avx2.ExpScaleShift(gb, x, 0.5, mm*0.5)
			if !close64(sa, sb, sb, 4e-7) { // both within 1.8e-7 of the exact sum
				t.Fatalf("expScale sum %v, avx2 %v", sa, sb)
			}
		}
		if !slices.EqualFunc(x, x0, sameBits) {
			t.Fatal("input changed")
		}
	})
}

// TestWideTranspose8: every block shape of multiples of 8 up to 72 (the
// 16×16 kernel, the 8-wide strips beside and below it, and both), with
// padded strides, against the twin, guard words around dst.
func TestWideTranspose8(t *testing.T) {
	k, _ := wideVariant(t)
	for rows := 0; rows <= 72; rows += 8 {
		for cols := 0; cols <= 72; cols += 8 {
			for _, pad := range []int{0, 3, 16} {
				lds, ldd := cols+pad, rows+2*pad+1
				src := make([]uint32, max(0, (rows-1)*lds+cols)+pad)
				for i := range src {
					src[i] = uint32(i)*2654435761 + 7
				}
				const g = 17
				size := max(0, (cols-1)*ldd+rows)
				got, want := make([]uint32, size+2*g), make([]uint32, size+2*g)
				for i := range got {
					got[i], want[i] = guardBits, guardBits
				}
				if rows > 0 && cols > 0 {
					k.transpose8(&got[g], ldd, &src[0], lds, rows, cols)
					transpose8Go(&want[g], ldd, &src[0], lds, rows, cols)
				}
				if i := slices.Compare(got, want); i != 0 {
					for j := range got {
						if got[j] != want[j] {
							t.Fatalf("%d×%d lds %d ldd %d: word %d = %#x, want %#x", rows, cols, lds, ldd, j-g, got[j], want[j])
						}
					}
				}
			}
		}
	}
}
