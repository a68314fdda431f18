package asm

import "github.com/kilnml/kiln/ops/cpuid"

// RowKernels is one implementation of the row-wise kernel families:
// reductions (reduce_*), softmax and normalisation rows (row_*), the
// blocked 32-bit transpose (transpose_*) and the inner steps of direct
// convolution and pooling (conv_*, pool_*, which also use the reduction
// accumulators). The primitives below take
// pointers and lengths; the exported methods check slice lengths in Go
// and only then call them, so assembly never sees an unchecked length.
type RowKernels struct {
	// Name is what reports show: "avx512", "avx2", "neon" (assembly) or
	// "go" (pure Go).
	Name string
	// Feature is the ops/cpuid variant the primitives need.
	Feature cpuid.Variant

	// sum returns Σ x[i], accumulated in float64.
	sum func(x *float32, n int) float64
	// sumSqDev returns Σ (x[i]-c)², accumulated in float64.
	sumSqDev func(x *float32, n int, c float64) float64
	// max and min return the extreme of x[:n] (n >= 0; ∓Inf when n is
	// 0), NaN when any element is NaN.
	max, min func(x *float32, n int) float32
	// maxNum returns the largest non-NaN element (-Inf if none), the sign
	// of a zero maximum unspecified; nil where a variant has no such
	// primitive (MaxNum then uses max).
	maxNum func(x *float32, n int) float32
	// accAdd does acc[i] += float64(x[i]).
	accAdd func(acc *float64, x *float32, n int)
	// accMax and accMin do acc[i] = max(acc[i], x[i]) (min), NaN when
	// either is NaN.
	accMax, accMin func(acc, x *float32, n int)
	// expShift sets y[i] = exp(x[i]-m) (y may be nil: nothing stored)
	// and returns Σ exp(x[i]-m) in float64. m must be at least every
	// x[i] (the row max) or NaN; see expDiff.
	expShift func(y, x *float32, n int, m float32) float64
	// expScale sets y[i] = exp(x[i]·s - m) and returns their sum in
	// float64, without expShift's error recovery (see ExpScaleShift); nil
	// where a variant has no such primitive.
	expScale func(y, x *float32, n int, s, m float32) float64
	// scaleAddMax sets y[i] = y[i]·s + add[i] and returns the max of y
	// (NaN if any is NaN); nil where a variant has no such primitive.
	scaleAddMax func(y, add *float32, n int, s float32) float32
	// scale does y[i] *= s.
	scale func(y *float32, n int, s float32)
	// norm sets y[i] = ((x[i]-mhi)-mlo)·r·scale[i·sstep] + bias[i·bstep]
	// with sstep, bstep in {0, 1} (0 reads element 0 for every i).
	norm func(y, x, scale, bias *float32, n, sstep, bstep int, mhi, mlo, r float32)
	// axpy does y[i] += a·x[i].
	axpy func(y, x *float32, n int, a float32)
	// transpose8 transposes a rows×cols block (both multiples of 8) of
	// 32-bit words: dst[j·ldd+i] = src[i·lds+j].
	transpose8 func(dst *uint32, ldd int, src *uint32, lds int, rows, cols int)
	// repeat sets y[i·s+j] = x[i] for i < n, j < s (s >= 2); nil where
	// a variant has none (Repeat then runs the twin).
	repeat func(y, x *float32, n, s int)
	// repeatWide is repeat for s >= repeatWideMin (each value stored as
	// whole vectors, the last one of a group overlapping the one
	// before); nil where a variant has none.
	repeatWide    func(y, x *float32, n, s int)
	repeatWideMin int
	// lerp2 sets y[2i] = a·x[i] + b·x[i+1], y[2i+1] = b·x[i] + a·x[i+1]
	// for i < n (see Lerp2); nil where a variant has none.
	lerp2 func(y, x *float32, n int, a, b float32)
	// blend sets y[i] = a·x0[i] + b·x1[i] for i < n (see Blend); nil
	// where a variant has none.
	blend func(y, x0, x1 *float32, n int, a, b float32)
	// blendRows runs BlendRows past its checks; nil where a variant has
	// none (BlendRows then runs the twin).
	blendRows blendRowsFunc
	// blendLerp2 runs BlendLerp2 past its checks; nil where a variant
	// has none (BlendLerp2 then runs the twin).
	blendLerp2 blendLerp2Func
	// addStride2 runs AddStride2 past its checks; nil where a variant
	// has none (AddStride2 then runs the twin).
	addStride2 func(y *float32, ldd int, x *float32, lds, rows, n int)
	// blendTaps runs BlendTaps's whole blocks of outputs; nil where a
	// variant has none (BlendTaps then runs the twin on every output).
	blendTaps blendTapsFunc
	// blendTapsWin is blendTaps for narrow taps in the window layout
	// (Taps.win), taken where it applies; nil where a variant has none.
	blendTapsWin blendTapsWinFunc
	// blendTapsWin8 is blendTapsWin on blocks of 8 outputs (Taps.win8),
	// taken where blendTapsWin is not; nil where a variant has none.
	blendTapsWin8 blendTapsWinFunc
	// lerpTaps runs LerpTaps's blocks of 16 outputs laid out by
	// Taps.window; nil where a variant has none (LerpTaps then runs the
	// twin).
	lerpTaps lerpTapsFunc
	// lerpTapsRows runs LerpTapsRows's whole blocks of narrow taps over
	// a band of rows; nil where a variant has none (LerpTapsRows then
	// runs LerpTaps per row).
	lerpTapsRows lerpTapsRowsFunc
	// zip2Add sets y[2i] = a[i] + b, y[2i+1] = c[i] + b for i < n, n a
	// multiple of 16 (see Zip2Add); nil where a variant has none.
	zip2Add func(y, a, c *float32, n int, b float32)
	// zipSum runs ZipSumRows past its checks (offs holds nt sources, the
	// first ne the even outputs'); nil where a variant has none.
	zipSum func(y *float32, ldd int, x *float32, offs *int, ne, nt, lds, rows, w int, b float32)
	// zipSum16 is zipSum for w a multiple of 16 (the rest of a row left
	// to the twin); a variant sets one or neither.
	zipSum16 func(y *float32, ldd int, x *float32, offs *int, ne, nt, lds, rows, w int, b float32)
}

// rowsGo is the pure-Go variant: the twins of the assembly primitives.
var rowsGo = &RowKernels{
	Name: "go", Feature: cpuid.Generic,
	sum: sumGo, sumSqDev: sumSqDevGo, max: maxGo, min: minGo,
	accAdd: accAddGo, accMax: accMaxGo, accMin: accMinGo,
	expShift: expShiftGo, expScale: expScaleGo, scaleAddMax: scaleAddMaxGo, scale: scaleGo, norm: normGo, axpy: axpyGo,
	transpose8: transpose8Go, repeat: repeatGo, lerp2: lerp2Go, blend: blendGo, blendRows: blendRowsGo, blendLerp2: blendLerp2Go, addStride2: addStride2Go,
}

// RowVariants lists the variants this CPU and build can run, best first,
// ending with "go". KILN_CPU does not shorten it (tests run them all).
func RowVariants() []*RowKernels { return rowFamily.variants() }

// BestRows is the variant kernels should use: the best one cpuid.Allows
// (which honours KILN_CPU), chosen once.
func BestRows() *RowKernels { return rowFamily.best() }
