package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// Tests of the row and reduction primitives: every variant this machine
// runs, against float64 loops written here, for every length up to past
// two unrolled blocks plus a few large ones, at misaligned starts, with
// guard words around every output.

// rowLengths covers 0..80 (past 2×32, the widest unrolled block) and
// some larger sizes with every tail.
func rowLengths() []int {
	var ns []int
	for n := 0; n <= 80; n++ {
		ns = append(ns, n)
	}
	return append(ns, 127, 128, 129, 1000, 4099)
}

const guardBits = 0x7fa5a5a5 // a NaN payload no kernel produces

// guarded is a float32 slice of n elements starting off elements into a
// buffer with guard words on both sides.
type guarded struct {
	buf  []float32
	lo   int
	Data []float32
}

func newGuarded(n, off int) *guarded {
	const g = 16
	buf := make([]float32, n+off+2*g)
	for i := range buf {
		buf[i] = math.Float32frombits(guardBits)
	}
	return &guarded{buf: buf, lo: g + off, Data: buf[g+off : g+off+n : g+off+n]}
}

// check fails the test if anything outside Data changed.
func (g *guarded) check(t *testing.T, what string) {
	t.Helper()
	for i, v := range g.buf {
		if (i < g.lo || i >= g.lo+len(g.Data)) && math.Float32bits(v) != guardBits {
			t.Fatalf("%s: guard word %d overwritten with %v", what, i-g.lo, v)
		}
	}
}

func randRow(r *rand.Rand, x []float32, scale float32) {
	for i := range x {
		x[i] = (r.Float32()*2 - 1) * scale
	}
}

// forRows runs f for every variant, length and misalignment.
func forRows(t *testing.T, f func(t *testing.T, k *RowKernels, n, off int, r *rand.Rand)) {
	for _, k := range RowVariants() {
		for _, n := range rowLengths() {
			for off := range 3 {
				r := rand.New(rand.NewPCG(uint64(n), uint64(off)))
				t.Run(fmt.Sprintf("%s/n=%d/off=%d", k.Name, n, off), func(t *testing.T) { f(t, k, n, off, r) })
			}
		}
	}
}

func TestRowVariants(t *testing.T) {
	vs := RowVariants()
	if vs[len(vs)-1] != rowsGo {
		t.Fatalf("variants %v must end with go", vs)
	}
	if !slices.Contains(vs, BestRows()) {
		t.Fatalf("best %s not among the variants", BestRows().Name)
	}
	for _, v := range vs {
		t.Logf("row kernels: %s", v.Name)
	}
}

func TestSumAndSqDev(t *testing.T) {
	forRows(t, func(t *testing.T, k *RowKernels, n, off int, r *rand.Rand) {
		x := newGuarded(n, off).Data
		randRow(r, x, 100)
		x0 := slices.Clone(x)
		c := float64(r.Float32() * 10)
		var want, wantSq, mag, magSq float64
		for _, v := range x {
			want += float64(v)
			mag += math.Abs(float64(v))
			d := float64(v) - c
			wantSq += d * d
			magSq += d * d
		}
		if got := k.Sum(x); approx.Far(got, want, 1e-13*mag) {
			t.Fatalf("Sum = %v, want %v", got, want)
		}
		if got := k.SumSqDev(x, c); approx.Far(got, wantSq, 1e-13*magSq) {
			t.Fatalf("SumSqDev = %v, want %v", got, wantSq)
		}
		if !slices.Equal(x, x0) {
			t.Fatal("input changed")
		}
	})
}

// extreme is the float64 reference of Max (isMax) or Min: NaN wins.
func extreme(x []float32, isMax bool) float32 {
	m := math.Inf(1)
	if isMax {
		m = math.Inf(-1)
	}
	for _, v := range x {
		if isMax {
			m = math.Max(m, float64(v))
		} else {
			m = math.Min(m, float64(v))
		}
	}
	return float32(m)
}

func sameFloat(a, b float32) bool { return a == b || (a != a && b != b) }

func TestMaxMin(t *testing.T) {
	forRows(t, func(t *testing.T, k *RowKernels, n, off int, r *rand.Rand) {
		x := newGuarded(n, off).Data
		// Plain, then with the extreme in each possible lane of the tail,
		// then ±Inf and NaN at a random position.
		for trial := range 6 {
			randRow(r, x, 1000)
			if n > 0 {
				i := r.IntN(n)
				switch trial {
				case 1:
					x[n-1] = 5000
				case 2:
					x[i] = float32(math.Inf(1))
				case 3:
					x[i] = float32(math.Inf(-1))
				case 4:
					x[i] = float32(math.NaN())
				case 5:
					x[n-1] = float32(math.NaN())
				}
			}
			if got, want := k.Max(x), extreme(x, true); !sameFloat(got, want) {
				t.Fatalf("trial %d: Max = %v, want %v", trial, got, want)
			}
			if got, want := k.Min(x), extreme(x, false); !sameFloat(got, want) {
				t.Fatalf("trial %d: Min = %v, want %v", trial, got, want)
			}
			checkMaxNum(t, k, x)
		}
	})
}

// checkMaxNum checks MaxNum against the largest non-NaN element: equal
// (a zero of either sign for a zero maximum), or NaN where x holds one.
func checkMaxNum(t *testing.T, k *RowKernels, x []float32) {
	t.Helper()
	want, nan := float32(math.Inf(-1)), false
	for _, v := range x {
		if v != v {
			nan = true
			continue
		}
		want = max(want, v)
	}
	got := k.MaxNum(x)
	if !(got == want || nan && got != got) {
		t.Fatalf("%s: MaxNum(%v) = %v, want %v", k.Name, x, got, want)
	}
}

func TestAccumulators(t *testing.T) {
	forRows(t, func(t *testing.T, k *RowKernels, n, off int, r *rand.Rand) {
		x := newGuarded(n, off).Data
		randRow(r, x, 10)
		if n > 2 {
			x[r.IntN(n)] = float32(math.NaN())
		}
		// AccAdd into a guarded float64 row.
		accBuf := make([]float64, n+off+32)
		for i := range accBuf {
			accBuf[i] = -7.5
		}
		acc := accBuf[16+off : 16+off+n]
		for i := range acc {
			acc[i] = float64(i) / 3
		}
		k.AccAdd(acc, x)
		for i, v := range accBuf {
			want := -7.5
			if j := i - 16 - off; j >= 0 && j < n {
				want = float64(j)/3 + float64(x[j])
			}
			if v != want && !(v != v && want != want) {
				t.Fatalf("AccAdd: element %d = %v, want %v", i-16-off, v, want)
			}
		}
		for _, isMax := range []bool{true, false} {
			g := newGuarded(n, off)
			a := g.Data
			randRow(r, a, 10)
			if n > 3 {
				a[r.IntN(n)] = float32(math.NaN())
			}
			a0 := slices.Clone(a)
			if isMax {
				k.AccMax(a, x)
			} else {
				k.AccMin(a, x)
			}
			g.check(t, "AccMax/Min")
			for i := range a {
				if want := extreme([]float32{a0[i], x[i]}, isMax); !sameFloat(a[i], want) {
					t.Fatalf("max=%v: element %d = %v, want %v of %v, %v", isMax, i, a[i], want, a0[i], x[i])
				}
			}
		}
	})
}

// softmaxRef is softmax (or log-softmax) in float64, as ops' reference.
func softmaxRef(x []float32, log bool) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, float64(v))
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(float64(v) - m)
	}
	out := make([]float64, len(x))
	for i, v := range x {
		if log {
			out[i] = float64(v) - m - math.Log(s)
		} else {
			out[i] = math.Exp(float64(v)-m) / s
		}
	}
	return out
}

// closeTo reports whether got is within tol·|want| + atol of want, NaN
// matching NaN and an infinity the same infinity.
func closeTo(got float32, want, tol, atol float64) bool {
	return approx.Close(float64(got), want, tol*math.Abs(want)+atol)
}

func TestSoftmaxRows(t *testing.T) {
	forRows(t, func(t *testing.T, k *RowKernels, n, off int, r *rand.Rand) {
		for _, log := range []bool{false, true} {
			for _, spread := range []float32{1, 30, 200} {
				x := newGuarded(n, off).Data
				randRow(r, x, spread)
				g := newGuarded(n, off+1)
				if log {
					k.LogSoftmax(g.Data, x)
				} else {
					k.Softmax(g.Data, x)
				}
				g.check(t, "softmax")
				want := softmaxRef(x, log)
				for i, v := range g.Data {
					// Softmax: 5e-7 relative; subnormal results may flush
					// to zero. LogSoftmax: an absolute part from log(s).
					tol, atol := 5e-7, 0x1p-126
					if log {
						tol, atol = 3e-7, 3e-7
					}
					if !closeTo(v, want[i], tol, atol) {
						t.Fatalf("log=%v spread=%v: element %d = %v, want %v", log, spread, i, v, want[i])
					}
				}
			}
		}
	})
}

func TestSoftmaxSpecials(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, k := range RowVariants() {
		for _, n := range []int{1, 3, 8, 13, 40} {
			for _, c := range []struct {
				name string
				set  func(x []float32)
			}{
				{"nan", func(x []float32) { x[n/2] = nan }},
				{"+inf", func(x []float32) { x[n-1] = inf }},
				{"all -inf", func(x []float32) {
					for i := range x {
						x[i] = -inf
					}
				}},
				{"some -inf", func(x []float32) { x[0] = -inf }},
				{"huge", func(x []float32) { x[n/3] = math.MaxFloat32; x[0] = -math.MaxFloat32 }},
			} {
				x := make([]float32, n)
				randRow(rand.New(rand.NewPCG(1, uint64(n))), x, 5)
				c.set(x)
				for _, log := range []bool{false, true} {
					got := make([]float32, n)
					if log {
						k.LogSoftmax(got, x)
					} else {
						k.Softmax(got, x)
					}
					want := softmaxRef(x, log)
					for i := range got {
						// The float32 result of the float64 reference.
						if !closeTo(got[i], float64(float32(want[i])), 2e-6, 0x1p-126) {
							t.Fatalf("%s n=%d %s log=%v: element %d = %v, want %v (x %v)", k.Name, n, c.name, log, i, got[i], want[i], x)
						}
					}
				}
			}
		}
	}
}

// TestExpAccuracy sweeps exp over its whole domain (t <= 0) against
// math.Exp.
func TestExpAccuracy(t *testing.T) {
	for _, k := range RowVariants() {
		var x []float32
		for v := float32(0); v > -104; v -= 0.0137 {
			x = append(x, v)
		}
		x = append(x, -0.0, float32(math.Inf(-1)), -87.3365, -87.34, float32(math.NaN()))
		y := make([]float32, len(x))
		s := k.expShift(&y[0], &x[0], len(x), 0)
		var want float64
		for i, v := range x {
			e := math.Exp(float64(v))
			if !math.IsNaN(e) {
				want += float64(y[i])
			}
			if !closeTo(y[i], e, 3e-7, 0x1p-126) {
				t.Fatalf("%s: exp(%v) = %v, want %v", k.Name, v, y[i], e)
			}
		}
		if !math.IsNaN(s) {
			t.Fatalf("%s: sum with a NaN = %v", k.Name, s)
		}
	}
}

func TestNormRows(t *testing.T) {
	forRows(t, func(t *testing.T, k *RowKernels, n, off int, r *rand.Rand) {
		x := newGuarded(n, off).Data
		scale, bias := make([]float32, n), make([]float32, n)
		randRow(r, scale, 2)
		randRow(r, bias, 1)
		for _, shift := range []float32{0, 1000} {
			randRow(r, x, 3)
			for i := range x {
				x[i] += shift // a large mean must not cost precision
			}
			for _, c := range []struct {
				rms         bool
				scale, bias []float32
			}{{false, nil, nil}, {false, scale, nil}, {false, scale, bias}, {false, nil, bias}, {true, nil, nil}, {true, scale, nil}} {
				g := newGuarded(n, off+2)
				const eps = 1e-5
				if c.rms {
					k.RMSNorm(g.Data, x, c.scale, eps)
				} else {
					k.LayerNorm(g.Data, x, c.scale, c.bias, eps)
				}
				g.check(t, "norm")
				var mean, v float64
				for _, e := range x {
					mean += float64(e)
				}
				mean /= float64(n)
				if c.rms {
					mean = 0
				}
				for _, e := range x {
					v += (float64(e) - mean) * (float64(e) - mean)
				}
				std := math.Sqrt(v/float64(n) + float64(float32(eps)))
				for i, got := range g.Data {
					z := (float64(x[i]) - mean) / std
					if c.scale != nil {
						z *= float64(c.scale[i])
					}
					mag := math.Abs(z)
					if c.bias != nil {
						z += float64(c.bias[i])
						mag += math.Abs(float64(c.bias[i]))
					}
					if approx.Far(float64(got), z, 1e-6*mag+1e-30) {
						t.Fatalf("rms=%v scale=%v bias=%v shift=%v: element %d = %v, want %v", c.rms, c.scale != nil, c.bias != nil, shift, i, got, z)
					}
				}
			}
		}
	})
}

func TestScaleAxpy(t *testing.T) {
	forRows(t, func(t *testing.T, k *RowKernels, n, off int, r *rand.Rand) {
		g := newGuarded(n, off)
		randRow(r, g.Data, 10)
		y0 := slices.Clone(g.Data)
		x := make([]float32, n)
		randRow(r, x, 10)
		k.Scale(g.Data, 0.75)
		g.check(t, "Scale")
		for i, v := range g.Data {
			if v != y0[i]*0.75 {
				t.Fatalf("Scale: element %d = %v, want %v", i, v, y0[i]*0.75)
			}
		}
		copy(g.Data, y0)
		a := float32(-1.3)
		k.Axpy(g.Data, x, a)
		g.check(t, "Axpy")
		for i, v := range g.Data {
			want := float64(y0[i]) + float64(a)*float64(x[i])
			if approx.Far(float64(v), want, 1.2e-7*(math.Abs(float64(y0[i]))+math.Abs(float64(a*x[i])))) {
				t.Fatalf("Axpy: element %d = %v, want %v", i, v, want)
			}
		}
	})
}

func TestRowLengthChecks(t *testing.T) {
	k := rowsGo
	for name, f := range map[string]func(){
		"softmax":  func() { k.Softmax(make([]float32, 3), make([]float32, 4)) },
		"overlap":  func() { x := make([]float32, 8); k.Softmax(x[1:5], x[:4]) },
		"accmax":   func() { k.AccMax(make([]float32, 3), make([]float32, 4)) },
		"normbias": func() { k.LayerNorm(make([]float32, 4), make([]float32, 4), nil, make([]float32, 3), 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: bad lengths accepted", name)
				}
			}()
			f()
		}()
	}
}
