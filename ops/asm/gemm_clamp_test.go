package asm

import (
	"math"
	"slices"
	"testing"
)

// TestGemmClampFlags: the kernels of a variant that honours gemmRelu and
// gemmClamp (micro, panel over two tiles, panel2 where it has one) store, bit for bit, what
// the elementwise kernels of the same name (the unfused epilogue) make of
// the sums they store without the flags, over sums that are NaN (of either
// sign: an accumulated Inf - Inf is the negative default NaN), ±0, ±Inf,
// subnormal, below, inside and above the bounds, overwriting and
// accumulating.
func TestGemmClampFlags(t *testing.T) {
	specials := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)),
		float32(math.Inf(-1)), 1e-40, -1e-40, -1, 0.5, 3, 5.75, 6, 6.5, 100, -7, 2.9}
	ran := false
	for _, v := range GemmVariants() {
		if !v.clamp {
			continue
		}
		ran = true
		ew := ewVariantNamed(v.Name)
		if ew == nil {
			t.Fatalf("no elementwise variant %s", v.Name)
		}
		mr, nr := v.mr, v.nr
		const tiles, ldc = 2, 80
		// k = 1: every sum is a[i]·b[j], exact (b holds powers of two).
		a := make([]float32, tiles*mr)
		for i := range a {
			a[i] = specials[i%len(specials)]
		}
		b := make([]float32, 2*nr)
		for j := range b {
			b[j] = float32(math.Ldexp(1, j%4-1))
		}
		old := make([]float32, tiles*mr*ldc)
		for i := range old {
			old[i] = specials[(i*7+3)%len(specials)] / 2
		}
		type kernel struct {
			name string
			cols int
			run  func(c []float32, flags uint)
		}
		kernels := []kernel{
			{"micro", nr, func(c []float32, flags uint) { v.micro(1, &a[0], &b[0], &c[0], ldc, flags) }},
			{"panel", nr, func(c []float32, flags uint) { v.panel(tiles, 1, &a[0], &b[0], &c[0], ldc, flags) }},
		}
		if v.panel2 != nil {
			kernels = append(kernels, kernel{"panel2", 2 * nr, func(c []float32, flags uint) {
				v.panel2(tiles, 1, &a[0], &b[0], &b[nr], &c[0], ldc, flags)
			}})
		}
		for _, k := range kernels {
			for _, acc := range []uint{0, gemmAccumulate} {
				for _, hi := range []float32{6, 0.25, float32(math.Inf(1))} {
					for _, clamp := range []uint{gemmRelu, clampFlags(hi)} {
						want := slices.Clone(old)
						k.run(want, acc)
						got := slices.Clone(old)
						k.run(got, acc|clamp)
						rows := mr
						if k.name != "micro" {
							rows = tiles * mr
						}
						for r := range rows {
							row := want[r*ldc:][:k.cols]
							var err error
							if clamp == gemmRelu {
								err = ew.Unary(EwRelu, row, row)
							} else {
								err = ew.Clamp(row, row, 0, hi)
							}
							if err != nil {
								t.Fatal(err)
							}
						}
						if !slices.EqualFunc(got, want, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }) {
							i := 0
							for j := range got {
								if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
									i = j
									break
								}
							}
							t.Fatalf("%s %s accumulate %d flags %#x: element %d = %v, want %v", v.Name, k.name, acc, clamp, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
	if !ran && (BestGemm().Name == "avx512" || BestGemm().Name == "avx2") {
		t.Fatalf("the %s variant does not honour the clamp flags", BestGemm().Name)
	}
}

// TestDepthwiseCopyClamp checks each depthwise variant's clamping copy,
// at every row length up to three vectors and a row stride past it,
// against its plain copy followed by the same-named elementwise ReLU or
// Clamp, bit for bit, on NaN of both signs, ±0, ±Inf, subnormals and
// values around the bounds; flags 0 is the plain copy. A NaN need only
// stay a NaN: the elementwise Clamp itself keeps a negative NaN's sign in
// its vector lanes and not in its Go tail (as the panel kernels' clamp
// keeps it).
func TestDepthwiseCopyClamp(t *testing.T) {
	specials := []float32{float32(math.NaN()), -float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)),
		float32(math.Inf(-1)), 1e-40, -1e-40, -1, 0.5, 3, 5.75, 6, 6.5, 100, -7, 2.9}
	ran := false
	for _, v := range depthwiseVariants() {
		if v.copyClamp == nil {
			continue
		}
		ran = true
		ew := ewVariantNamed(v.name)
		if ew == nil {
			t.Fatalf("no elementwise variant %s", v.name)
		}
		for cols := 1; cols <= 48; cols++ {
			const rows, lds = 3, 53
			ldd := cols + 5
			src := make([]float32, (rows-1)*lds+cols)
			for i := range src {
				src[i] = specials[(i*5+cols)%len(specials)]
			}
			for _, hi := range []float32{6, 0.25, float32(math.Inf(1))} {
				for _, clamp := range []uint{0, gemmRelu, clampFlags(hi)} {
					want := make([]float32, (rows-1)*ldd+cols)
					fill(want, 42)
					got := slices.Clone(want)
					v.copyRows(want, ldd, src, lds, rows, cols, 0)
					for r := range rows {
						row := want[r*ldd:][:cols]
						var err error
						switch clamp {
						case 0:
						case gemmRelu:
							err = ew.Unary(EwRelu, row, row)
						default:
							err = ew.Clamp(row, row, 0, hi)
						}
						if err != nil {
							t.Fatal(err)
						}
					}
					v.copyRows(got, ldd, src, lds, rows, cols, clamp)
					for i := range got {
						nan := got[i] != got[i] && want[i] != want[i]
						if !nan && math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s cols %d flags %#x: element %d = %v (%#x), want %v (%#x)",
								v.name, cols, clamp, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
						}
					}
				}
			}
		}
	}
	if !ran && bestDepthwise().name == "avx512" {
		t.Fatal("the avx512 depthwise variant has no clamping copy")
	}
}
