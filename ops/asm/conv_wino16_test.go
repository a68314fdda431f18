package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/kilnml/kiln/ops/cpuid"
)

// wino16Variants are the transforms with sixteen-tile kernels this
// machine runs; under KILN_TEST_REQUIRE=avx512 the AVX-512 ones must be
// among them (the tests below would otherwise pass without running any).
func wino16Variants(t testing.TB) []*winoKernels {
	var ks []*winoKernels
	for _, wk := range winoFamily.variants() {
		if wk.in16 != nil && wk.out16 != nil {
			ks = append(ks, wk)
		}
	}
	if os.Getenv("KILN_TEST_REQUIRE") == string(cpuid.AVX512) {
		if wk := winoKernelsFor(cpuid.AVX512); wk == nil || wk.in16 == nil || wk.out16 == nil || len(ks) == 0 {
			t.Fatal("KILN_TEST_REQUIRE=avx512 but no AVX-512 sixteen-tile Winograd transforms run here")
		}
	}
	// AVX2 keeps eight tiles a call (the winograd family's sixteen-tile
	// kernels are AVX-512 only).
	if wk := winoKernelsFor(cpuid.AVX2); wk != nil && (wk.in16 != nil || wk.out16 != nil) {
		t.Error("the AVX2 Winograd transforms have sixteen-tile kernels")
	}
	return ks
}

// wino16Same runs wk's sixteen-tile transforms once against their twins,
// bit for bit (NaN as NaN): the input transform of the patches at src
// (rows wp apart) into a V buffer of value stride dstride, its |x| sums
// added to acc0, and the output transform of the product values at m
// (stride sstride) into cols columns of two rows ldy apart. Nothing past
// the values each writes may change: the lanes between dst's values and
// y's columns past cols keep a marker, and guard words surround both.
func wino16Same(t *testing.T, wk *winoKernels, src []float32, wp, dstride int, acc0 [16]float32,
	m []float32, sstride, ldy, cols int, bias float32) {
	t.Helper()
	const marker = -12345.5
	what := fmt.Sprintf("%s wp=%d dstride=%d", featureName(wk.feature), wp, dstride)
	_ = src[3*wp+33]
	got, want := newGuarded(15*dstride+16, 1), newGuarded(15*dstride+16, 1)
	for i := range got.Data {
		got.Data[i], want.Data[i] = marker, marker
	}
	accGot, accWant := acc0, acc0
	wk.in16(&src[0], wp, &got.Data[0], dstride, &accGot)
	winoIn16Go(&src[0], wp, &want.Data[0], dstride, &accWant)
	got.check(t, what+" in16")
	winoSame(t, what+" in16", got.Data, want.Data)
	winoSame(t, what+" in16 acc", accGot[:], accWant[:])

	what = fmt.Sprintf("%s sstride=%d ldy=%d cols=%d", featureName(wk.feature), sstride, ldy, cols)
	_ = m[15*sstride+(cols+1)/2-1]
	yGot, yWant := newGuarded(ldy+cols, 2), newGuarded(ldy+cols, 2)
	for i := range yGot.Data {
		yGot.Data[i], yWant.Data[i] = marker, marker
	}
	wk.out16(&m[0], sstride, &yGot.Data[0], ldy, bias, cols)
	winoOut16Go(&m[0], sstride, &yWant.Data[0], ldy, bias, cols)
	yGot.check(t, what+" out16")
	winoSame(t, what+" out16", yGot.Data, yWant.Data)
	for i, v := range yWant.Data {
		if inside := i%ldy < cols && i/ldy < 2 && (i < cols || i >= ldy); inside == (v == marker) {
			t.Fatalf("%s: twin wrote %v at %d (inside %v)", what, v, i, inside)
		}
	}
}

// TestWino16Kernels: the sixteen-tile transforms give their twins' bits
// at every output column count, for patch row strides around and past
// the 34 columns a call reads, value strides with and without a gap
// after the sixteen lanes, odd offsets (unaligned loads), and inputs
// with NaN, ±Inf and values near winoMaxIn.
func TestWino16Kernels(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 4))
	specials := []float32{float32(math.Inf(1)), float32(math.NaN()), float32(math.Inf(-1)), 0, -0.0, 1 << 44, -(1 << 46)}
	fill := func(x []float32, specialRate int) {
		for i := range x {
			x[i] = float32(r.NormFloat64())
			if specialRate > 0 && r.IntN(specialRate) == 0 {
				x[i] = specials[r.IntN(len(specials))]
			}
		}
	}
	for _, wk := range wino16Variants(t) {
		for _, wp := range []int{34, 35, 37, 66, 114} {
			for _, dstride := range []int{16, 17, 40} {
				for trial := range 12 {
					off := trial % 5
					src := make([]float32, off+3*wp+34)
					fill(src, []int{0, 30, 4}[trial%3])
					var acc0 [16]float32
					for i := range acc0 {
						acc0[i] = float32(r.Float64())
					}
					cols := 1 + r.IntN(32)
					sstride := max(16, (cols+1)/2+r.IntN(20))
					ldy := cols + r.IntN(40)
					m := make([]float32, 15*sstride+(cols+1)/2)
					fill(m, []int{0, 0, 10}[trial%3])
					wino16Same(t, wk, src[off:], wp, dstride, acc0, m, sstride, ldy, cols, float32(r.NormFloat64()))
				}
			}
		}
		// Every column count, at tight and loose strides.
		for cols := 1; cols <= 32; cols++ {
			for _, ss := range []int{(cols + 1) / 2, 16, 29} {
				m := make([]float32, 15*ss+(cols+1)/2)
				fill(m, 0)
				src := make([]float32, 3*34+34)
				fill(src, 0)
				wino16Same(t, wk, src, 34, 16, [16]float32{}, m, ss, cols, cols, 0.25)
				wino16Same(t, wk, src, 34, 16, [16]float32{}, m, ss, 2*cols+3, cols, -1)
			}
		}
	}
}

// TestWino16Twins: the sixteen-tile twins compute Bᵀ·d·B and Aᵀ·M·A +
// bias as written out with the matrices (small integers: exact in any
// order), sum |x| of every cell each lane is said to, and agree with the
// eight-tile twins on the values both compute.
func TestWino16Twins(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 16))
	const wp, dstride = 41, 19
	src := make([]float32, 3*wp+34)
	for i := range src {
		src[i] = float32(r.IntN(17) - 8)
	}
	v := make([]float32, 15*dstride+16)
	var acc [16]float32
	winoIn16Go(&src[0], wp, &v[0], dstride, &acc)
	checkWinoIn(t, src, wp, v, dstride, 16)
	for i := range 16 {
		want := 0.0
		for p := range 4 {
			for _, q := range []int{i, i + 16, i + 2, i + 18} {
				want += math.Abs(float64(src[p*wp+q]))
			}
		}
		if float64(acc[i]) != want {
			t.Fatalf("acc lane %d = %v, want %v", i, acc[i], want)
		}
	}
	// The eight-tile twin's V at the same patches: the first eight lanes.
	v8 := make([]float32, 15*dstride+8)
	var acc8 [8]float32
	winoInGo(&src[0], wp, &v8[0], dstride, &acc8)
	for xi := range 16 {
		winoSame(t, "V, eight tiles", v8[xi*dstride:][:8], v[xi*dstride:][:8])
	}

	const ss, ldy = 21, 37
	mv := make([]float32, 15*ss+16)
	for i := range mv {
		mv[i] = float32(r.IntN(17) - 8)
	}
	for cols := 1; cols <= 32; cols++ {
		y := make([]float32, ldy+32)
		for i := range y {
			y[i] = 99
		}
		winoOut16Go(&mv[0], ss, &y[0], ldy, 3, cols)
		for c := range 32 {
			for a := range 2 {
				want := 99.0
				if c < cols {
					want = winoOutWant(mv, ss, c/2, a, c%2, 3)
				}
				if got := float64(y[a*ldy+c]); got != want {
					t.Fatalf("cols %d: Y column %d row %d = %v, want %v", cols, c, a, got, want)
				}
			}
		}
	}
}

// BenchmarkWinoTransforms times the transforms alone, ns a tile, each
// variant at eight tiles a call and, where it has them, sixteen: the
// input transforms of a 56² output's padded plane (28 tile rows of 32
// tiles numbered, ResNet-18's first stage) into V panels, eight
// channels of it, and the output transforms of the same tiles (the rows' last eight columns
// through scratch at eight tiles a call, as winoOutputs does).
func BenchmarkWinoTransforms(b *testing.B) {
	const tw, th, wp, chans = 28, 28, 66, 8
	const tws = 32
	const tb = tws * th
	const vs = chans*tb + winoSkew
	r := rand.New(rand.NewPCG(1, 2))
	x := randFloats(r, chans*(2*th+2)*wp)
	v := make([]float32, 16*vs)
	y := make([]float32, chans*56*56)
	for _, wk := range winoFamily.variants() {
		if wk.in == nil {
			continue
		}
		for _, lanes := range []int{8, 16} {
			if lanes == 16 && wk.in16 == nil {
				continue
			}
			name := fmt.Sprintf("%s/%d", featureName(wk.feature), lanes)
			b.Run("in/"+name, func(b *testing.B) {
				var acc [16]float32
				for b.Loop() {
					for ci := range chans {
						plane := x[ci*(2*th+2)*wp:]
						for ty := range th {
							for tx := 0; tx < tws; tx += lanes {
								t := ty*tws + tx
								src := plane[2*ty*wp+2*tx:]
								dst := v[t/16*chans*16+ci*16+t%16:]
								_ = src[3*wp+2*lanes+1]
								_ = dst[15*vs+lanes-1]
								if lanes == 16 {
									wk.in16(&src[0], wp, &dst[0], vs, &acc)
								} else {
									wk.in(&src[0], wp, &dst[0], vs, (*[8]float32)(acc[:8]))
								}
							}
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chans*tw*th), "ns/tile")
			})
			b.Run("out/"+name, func(b *testing.B) {
				var tail [32]float32
				for b.Loop() {
					for m := range chans {
						plane := y[m*56*56:][:56*56]
						for ty := range th {
							for tx := 0; tx < tw; tx += lanes {
								src := v[m*tb+ty*tws+tx:]
								yy := plane[2*ty*56+2*tx:]
								cols := min(2*lanes, 56-2*tx)
								_ = src[15*vs+lanes-1]
								_ = yy[56+cols-1]
								if lanes == 16 {
									wk.out16(&src[0], vs, &yy[0], 56, 0.5, cols)
								} else if cols == 16 {
									wk.out(&src[0], vs, &yy[0], 56, 0.5)
								} else { // as winoOutputs: through scratch
									wk.out(&src[0], vs, &tail[0], 16, 0.5)
									copy(yy[:cols], tail[:cols])
									copy(yy[56:][:cols], tail[16:][:cols])
								}
							}
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chans*tw*th), "ns/tile")
			})
		}
	}
}
