package asm

import (
	"math"
	"slices"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// Row kernels the fuzzer picks from: each case checks every variant
// against an independent float64 loop (or exact float32 arithmetic where
// the kernel promises bits), with the tolerances of row_test.go.
const (
	fzSum = iota
	fzMaxMin
	fzSoftmax
	fzLogSoftmax
	fzLayerNorm
	fzRMSNorm
	fzScaleAxpy
	fzAcc
	fzExpScale
	fzResize
	fzRowKinds
)

// close64 is closeTo for a float64 result: NaN for NaN, the same
// infinity, else within tol·mag.
func close64(got, want, mag, tol float64) bool {
	return approx.Close(got, want, tol*mag)
}

// fuzzExtreme is the largest (isMax) or smallest element with NaN
// winning over everything, infinities included, as the kernels promise
// (math.Max would let +Inf win over NaN).
func fuzzExtreme(x []float32, isMax bool) float32 {
	m := float32(math.Inf(1))
	if isMax {
		m = float32(math.Inf(-1))
	}
	for _, v := range x {
		if isMax {
			m = max(m, v)
		} else {
			m = min(m, v)
		}
	}
	return m
}

// FuzzRowKernels runs one row kernel, chosen by the first byte, on a
// fuzz-chosen row (length, misalignment, values with NaN, ±Inf and
// subnormals) on every variant.
func FuzzRowKernels(f *testing.F) {
	for kind := range byte(fzRowKinds) {
		f.Add([]byte{kind, 19, 1, 7, 8, 9, 10, 0x85, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21})
	}
	f.Add([]byte{fzSoftmax, 9, 0, 1, 2, 0, 3, 4})
	f.Add([]byte{fzLayerNorm, 40, 2, 0x81, 7, 7, 7, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		kind, n, off := in.intn(fzRowKinds), in.intn(200), in.intn(8)
		var bound float32 // finite values stay away from float32 overflow where the reference is float64
		switch kind {
		case fzSoftmax, fzLogSoftmax, fzExpScale:
			bound = 1e30
		case fzLayerNorm, fzRMSNorm, fzScaleAxpy:
			bound = 1e18
		}
		x := in.floats(n, bound)
		for _, k := range RowVariants() {
			xg := newGuarded(n, off)
			copy(xg.Data, x)
			fail := func(format string, args ...any) {
				t.Helper()
				t.Fatalf("%s kind %d n=%d off=%d x=%v: "+format, append([]any{k.Name, kind, n, off, x}, args...)...)
			}
			switch kind {
			case fzSum:
				c := float64(in.float(1e6))
				var want, mag, wantSq float64
				for _, v := range x {
					want += float64(v)
					mag += math.Abs(float64(v))
					wantSq += (float64(v) - c) * (float64(v) - c)
				}
				if got := k.Sum(xg.Data); !close64(got, want, mag, 1e-13) {
					fail("Sum = %v, want %v", got, want)
				}
				if got := k.SumSqDev(xg.Data, c); !close64(got, wantSq, wantSq, 1e-13) {
					fail("SumSqDev(%v) = %v, want %v", c, got, wantSq)
				}
			case fzMaxMin:
				if got, want := k.Max(xg.Data), fuzzExtreme(x, true); !sameFloat(got, want) {
					fail("Max = %v, want %v", got, want)
				}
				if got, want := k.Min(xg.Data), fuzzExtreme(x, false); !sameFloat(got, want) {
					fail("Min = %v, want %v", got, want)
				}
				checkMaxNum(t, k, xg.Data)
			case fzSoftmax, fzLogSoftmax:
				log := kind == fzLogSoftmax
				g := newGuarded(n, (off+3)%8)
				dst := g.Data
				if in.byte()&1 == 1 {
					dst = xg.Data // in place
				}
				if log {
					k.LogSoftmax(dst, xg.Data)
				} else {
					k.Softmax(dst, xg.Data)
				}
				g.check(t, "softmax")
				tol, atol := 5e-7, 0x1p-126
				if log {
					tol, atol = 3e-7, 3e-7
				}
				for i, want := range softmaxRef(x, log) {
					if !closeTo(dst[i], want, tol, atol) {
						fail("log=%v: element %d = %v, want %v", log, i, dst[i], want)
					}
				}
			case fzLayerNorm, fzRMSNorm:
				checkNormFuzz(t, in, k, kind == fzRMSNorm, x, xg, fail)
			case fzScaleAxpy:
				s, a := in.float(0), in.float(1e18)
				y := in.floats(n, bound)
				yg := newGuarded(n, off)
				copy(yg.Data, y)
				k.Scale(yg.Data, s)
				yg.check(t, "Scale")
				for i, v := range yg.Data {
					if !sameBits(v, y[i]*s) {
						fail("Scale(%v): element %d = %v, want %v", s, i, v, y[i]*s)
					}
				}
				copy(yg.Data, y)
				k.Axpy(yg.Data, xg.Data, a)
				yg.check(t, "Axpy")
				for i, v := range yg.Data {
					want := float64(y[i]) + float64(a)*float64(x[i])
					mag := math.Abs(float64(y[i])) + math.Abs(float64(a*x[i]))
					if !close64(float64(v), want, 1.2e-7*mag+0x1p-126, 1) { // a product may underflow in float32
						fail("Axpy(%v): element %d = %v, want %v", a, i, v, want)
					}
				}
			case fzExpScale:
				checkExpScaleFuzz(t, in, k, x, xg, off, fail)
			case fzResize:
				checkResizeFuzz(t, in, k, x, fail)
				checkZipSumFuzz(t, in, k, x, fail)
			case fzAcc:
				acc := in.floats(n, 0)
				acc64 := make([]float64, n)
				for i, v := range acc {
					acc64[i] = float64(v) * 3
				}
				got64 := slices.Clone(acc64)
				k.AccAdd(got64, xg.Data)
				gmax, gmin := slices.Clone(acc), slices.Clone(acc)
				k.AccMax(gmax, xg.Data)
				k.AccMin(gmin, xg.Data)
				for i, v := range x {
					want := acc64[i] + float64(v)
					if got64[i] != want && !(math.IsNaN(got64[i]) && math.IsNaN(want)) {
						fail("AccAdd: element %d = %v, want %v", i, got64[i], want)
					}
					if w := max(acc[i], v); !sameFloat(gmax[i], w) {
						fail("AccMax: element %d = %v, want %v", i, gmax[i], w)
					}
					if w := min(acc[i], v); !sameFloat(gmin[i], w) {
						fail("AccMin: element %d = %v, want %v", i, gmin[i], w)
					}
				}
			}
			xg.check(t, "input")
			if !slices.EqualFunc(xg.Data, x, sameBits) && kind != fzSoftmax && kind != fzLogSoftmax && kind != fzExpScale && kind != fzLayerNorm && kind != fzRMSNorm {
				fail("input changed")
			}
		}
	})
}

// checkNormFuzz runs LayerNorm or RMSNorm with fuzz-chosen scale and bias
// (either may be absent) against the float64 formula, in place or not.
func checkNormFuzz(t *testing.T, in *fuzzIn, k *RowKernels, rms bool, x []float32, xg *guarded, fail func(string, ...any)) {
	n := len(x)
	var scale, bias []float32
	if in.byte()&1 == 1 {
		scale = in.floats(n, 1e6)
	}
	if !rms && in.byte()&1 == 1 {
		bias = in.floats(n, 1e6)
	}
	// Finite scale and bias only: an infinite scale times a normalised
	// value that underflowed to 0 in float32 is NaN, where float64 gives
	// ±Inf, and that is rounding, not a kernel fault.
	for _, v := range [][]float32{scale, bias} {
		for i, e := range v {
			if math.IsInf(float64(e), 0) || e != e {
				v[i] = 1
			}
		}
	}
	g := newGuarded(n, 5)
	dst := g.Data
	if in.byte()&1 == 1 {
		dst = xg.Data
	}
	const eps = 1e-5
	if rms {
		k.RMSNorm(dst, xg.Data, scale, eps)
	} else {
		k.LayerNorm(dst, xg.Data, scale, bias, eps)
	}
	g.check(t, "norm")
	if n == 0 {
		return
	}
	var mean, v float64
	if !rms {
		for _, e := range x {
			mean += float64(e)
		}
		mean /= float64(n)
	}
	for _, e := range x {
		v += (float64(e) - mean) * (float64(e) - mean)
	}
	std := math.Sqrt(v/float64(n) + float64(float32(eps)))
	// The kernel sums in another order: its float64 mean may be off by
	// about n·2^-53·Σ|x|/n, which cancellation in a row like [-a, a, 48]
	// turns into a large relative error of x - mean; allow for it.
	var sumAbs float64
	for _, e := range x {
		sumAbs += math.Abs(float64(e))
	}
	slack := 0x1p-52 * sumAbs / std
	if rms || math.IsNaN(slack) { // no mean to be off, or Inf/Inf
		slack = 0
	}
	for i, got := range dst {
		z := (float64(x[i]) - mean) / std
		mag, sl := 0.0, slack
		if scale != nil {
			z *= float64(scale[i])
			sl *= math.Abs(float64(scale[i]))
		}
		mag += math.Abs(z)
		if bias != nil {
			z += float64(bias[i])
			mag += math.Abs(float64(bias[i]))
		}
		if !close64(float64(got), z, 1, 1e-6*mag+4*sl+1e-30) {
			fail("rms=%v scale=%v bias=%v: element %d = %v, want %v", rms, scale, bias, i, got, z)
		}
	}
}

// checkExpScaleFuzz runs ExpScaleShift (in place or not) with a
// fuzz-chosen positive scale and a shift at or above every x·s against
// float64 exp, within its documented bounds: 3e-7 plus |x·s - m|·2^-24
// per weight, 1.8e-7 for the sum. +Inf is replaced (m must bound every
// product); NaN and -Inf stay.
func checkExpScaleFuzz(t *testing.T, in *fuzzIn, k *RowKernels, x []float32, xg *guarded, off int, fail func(string, ...any)) {
	s := float32(in.intn(64)+1) / 16
	m := float32(0)
	for i, v := range x {
		if math.IsInf(float64(v), 1) {
			x[i], xg.Data[i] = 1e30, 1e30
		}
		if p := x[i] * s; p > m || i == 0 && p == p {
			m = p
		}
	}
	if math.IsInf(float64(m), -1) {
		m = 0 // the softmax never shifts by -Inf (it has no visible key then)
	}
	m += float32(in.intn(4)) // at or above every product
	g := newGuarded(len(x), (off+5)%8)
	dst := g.Data
	if in.byte()&1 == 1 {
		dst = xg.Data // in place
	}
	sum := k.ExpScaleShift(dst, xg.Data, s, m)
	g.check(t, "ExpScaleShift")
	var want float64
	nan := false
	for i, v := range x {
		if v != v {
			nan = true
			if dst[i] == dst[i] {
				fail("ExpScaleShift(%v, %v): element %d = %v, want NaN", s, m, i, dst[i])
			}
			continue
		}
		d := float64(v*s) - float64(m)
		if math.IsInf(d, -1) {
			if dst[i] != 0 {
				fail("ExpScaleShift(%v, %v): element %d = %v, want 0", s, m, i, dst[i])
			}
			continue
		}
		if !closeTo(dst[i], math.Exp(d), 3e-7+math.Abs(d)*0x1p-24, 0x1p-126) {
			fail("ExpScaleShift(%v, %v): element %d = %v, want %v", s, m, i, dst[i], math.Exp(d))
		}
		want += float64(dst[i])
	}
	if nan != math.IsNaN(sum) || !nan && !(math.Abs(sum-want) <= 1.8e-7*want) {
		fail("ExpScaleShift(%v, %v): sum %v, want %v", s, m, sum, want)
	}
}
