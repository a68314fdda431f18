package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Shape tests of the elementwise kernels, run for every variant this
// machine has: every length 0..80 (ten 8-float blocks and every tail),
// 1023-1025, 100000 and 300001 (large enough to stream), starts misaligned by 1..7 elements, guard
// regions on both sides of the output, NaN/±Inf/±0/subnormal inputs,
// inputs unchanged, and in place equal to out of place. Results must
// equal the Go twin bit for bit (NaN: any NaN) and, for the binary
// operations, the float64 operation rounded once.

var ewLengths = func() []int {
	var ls []int
	for n := 0; n <= 80; n++ {
		ls = append(ls, n)
	}
	return append(ls, 1023, 1024, 1025, 100000, 300001) // the last streams (>= ewStreamBytes)
}()

// ewOffsets is the misaligned starts tried for length n: all eight
// below 2000 elements, every third above. -short (the arm64 run under
// qemu, 10-20x slower) tries the long ones at offset 0 only and leaves
// out the streaming length (non-temporal stores exist on amd64 only,
// where the full sweep runs).
func ewOffsets(n int) []int {
	switch {
	case n <= 2000:
		return []int{0, 1, 2, 3, 4, 5, 6, 7}
	case testing.Short() && n > 200000:
		return nil // the streaming length: amd64's non-temporal path, long under qemu
	case testing.Short():
		return []int{0}
	}
	return []int{0, 3, 6}
}

const ewGuard = 16

// ewSentinel fills guard regions: a NaN with a payload no kernel makes.
var ewSentinel = math.Float32frombits(0x7FA5A5A5)

// ewSpecials are mixed into the random inputs.
var ewSpecials = []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
	float32(math.NaN()), 1e-45, -1e-45, 1e-40, 3.4e38, -3.4e38, 88.73, -103.98, 0.625, -0.875, 0.75}

// ewInput makes n seeded values: mostly normal in [-12, 12], some spread
// over all exponents, some special.
func ewInput(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch r := rng.IntN(10); {
		case r == 0:
			x[i] = ewSpecials[rng.IntN(len(ewSpecials))]
		case r == 1:
			x[i] = math.Float32frombits(rng.Uint32())
		default:
			x[i] = float32(rng.NormFloat64() * 4)
		}
	}
	return x
}

// ewBuf is an output of n floats starting off elements into a buffer with
// sentinel guards on both sides.
type ewBuf struct {
	all []float32
	lo  int
	n   int
}

func newEwBuf(n, off int) *ewBuf {
	b := &ewBuf{all: make([]float32, ewGuard+off+n+ewGuard), lo: ewGuard + off, n: n}
	for i := range b.all {
		b.all[i] = ewSentinel
	}
	return b
}

func (b *ewBuf) out() []float32 { return b.all[b.lo : b.lo+b.n] }

// guardsIntact reports the first guard element that was written, or -1.
func (b *ewBuf) guardsIntact() int {
	for i, v := range b.all {
		if (i < b.lo || i >= b.lo+b.n) && math.Float32bits(v) != math.Float32bits(ewSentinel) {
			return i
		}
	}
	return -1
}

// at returns a copy of x placed off elements into a fresh buffer, so
// that its start is misaligned.
func at(x []float32, off int) []float32 {
	buf := make([]float32, off+len(x))
	copy(buf[off:], x)
	return buf[off:]
}

// sameBits compares two results: equal bits, or both NaN.
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

func firstDiff(got, want []float32) int {
	for i := range got {
		if !sameBits(got[i], want[i]) {
			return i
		}
	}
	return -1
}

func TestEwUnaryShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, v := range EwVariants() {
		for op := range EwUnary(ewNumUnary) {
			t.Run(fmt.Sprintf("%s/%v", v.Name, op), func(t *testing.T) {
				for _, n := range ewLengths {
					for _, off := range ewOffsets(n) {
						ewCheckUnary(t, v, op, rng, n, off)
					}
				}
			})
		}
	}
}

func ewCheckUnary(t *testing.T, v *EwKernels, op EwUnary, rng *rand.Rand, n, off int) {
	t.Helper()
	x := at(ewInput(rng, n), off)
	x0 := append([]float32(nil), x...)
	want := make([]float32, n)
	if n > 0 {
		ewUnaryGo[op](&want[0], &x0[0], n, false)
	}
	b := newEwBuf(n, (off*3)%8)
	if err := v.Unary(op, b.out(), x); err != nil {
		t.Fatal(err)
	}
	if i := firstDiff(b.out(), want); i >= 0 {
		t.Fatalf("n=%d off=%d: %v(%v) = %v, twin %v", n, off, op, x0[i], b.out()[i], want[i])
	}
	if i := b.guardsIntact(); i >= 0 {
		t.Fatalf("n=%d off=%d: guard element %d written", n, off, i)
	}
	if i := firstDiff(x, x0); i >= 0 {
		t.Fatalf("n=%d off=%d: input %d changed", n, off, i)
	}
	ref := ewRef64[op]
	for i, xv := range x0 {
		if e := ulpErr(want[i], ref(float64(xv))); e > ewMaxULP {
			t.Fatalf("%v(%v) = %v, float64 %v: %.2f ulp", op, xv, want[i], ref(float64(xv)), e)
		}
	}
	// In place: dst is x.
	if err := v.Unary(op, x, x); err != nil {
		t.Fatal(err)
	}
	if i := firstDiff(x, want); i >= 0 {
		t.Fatalf("n=%d off=%d in place: %v(%v) = %v, out of place %v", n, off, op, x0[i], x[i], want[i])
	}
}

// ewRefBinary is the float64 operation rounded once to float32, which
// for + - × ÷ is the correctly rounded float32 result.
var ewRefBinary = [ewNumBinary]func(a, b float64) float64{
	EwAdd: func(a, b float64) float64 { return a + b },
	EwSub: func(a, b float64) float64 { return a - b },
	EwMul: func(a, b float64) float64 { return a * b },
	EwDiv: func(a, b float64) float64 { return a / b },
	EwMax: func(a, b float64) float64 { return max(a, b) },
	EwMin: func(a, b float64) float64 { return min(a, b) },
}

// ewForm is one broadcast form of a binary operation.
type ewForm int

const (
	ewFormVV ewForm = iota // x[i] op y[i]
	ewFormVS               // x[i] op s
	ewFormSV               // s op y[i]
)

func (f ewForm) String() string { return [...]string{"vv", "vs", "sv"}[f] }

func TestEwBinaryShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, v := range EwVariants() {
		for op := range EwBinary(ewNumBinary) {
			for form := range ewForm(3) {
				t.Run(fmt.Sprintf("%s/%v/%v", v.Name, op, form), func(t *testing.T) {
					for _, n := range ewLengths {
						for _, off := range ewOffsets(n) {
							ewCheckBinary(t, v, op, form, rng, n, off)
						}
					}
				})
			}
		}
	}
}

// ewRunBinary runs one form; x or y is unused (the scalar s instead) in
// the scalar forms.
func ewRunBinary(v *EwKernels, op EwBinary, form ewForm, dst, x, y []float32, s float32) error {
	switch form {
	case ewFormVS:
		return v.BinaryScalar(op, dst, x, s)
	case ewFormSV:
		return v.ScalarBinary(op, dst, s, y)
	}
	return v.Binary(op, dst, x, y)
}

func ewCheckBinary(t *testing.T, v *EwKernels, op EwBinary, form ewForm, rng *rand.Rand, n, off int) {
	t.Helper()
	x := at(ewInput(rng, n), off)
	y := at(ewInput(rng, n), (off+5)%8)
	s := ewInput(rng, 1)[0]
	if rng.IntN(4) == 0 && n > 0 { // ties: ±0 against ±0, equal values
		s = x[0]
	}
	x0, y0 := append([]float32(nil), x...), append([]float32(nil), y...)
	want := make([]float32, n)
	f := ewRefBinary[op]
	for i := range want {
		a, b := x0[i], y0[i]
		switch form {
		case ewFormVS:
			b = s
		case ewFormSV:
			a = s
		}
		want[i] = float32(f(float64(a), float64(b)))
	}
	bo := newEwBuf(n, (off*3)%8)
	if err := ewRunBinary(v, op, form, bo.out(), x, y, s); err != nil {
		t.Fatal(err)
	}
	if i := firstDiff(bo.out(), want); i >= 0 {
		t.Fatalf("n=%d off=%d: %v %v %v s=%v: got %v, want %v", n, off, x0[i], op, y0[i], s, bo.out()[i], want[i])
	}
	if i := bo.guardsIntact(); i >= 0 {
		t.Fatalf("n=%d off=%d: guard element %d written", n, off, i)
	}
	if firstDiff(x, x0) >= 0 || firstDiff(y, y0) >= 0 {
		t.Fatalf("n=%d off=%d: an input changed", n, off)
	}
	// The Go twin gives the same bits.
	tw := make([]float32, n)
	if err := ewRunBinary(ewGo, op, form, tw, x, y, s); err != nil {
		t.Fatal(err)
	}
	if i := firstDiff(tw, want); i >= 0 {
		t.Fatalf("n=%d: twin %v %v %v = %v, want %v", n, x0[i], op, y0[i], tw[i], want[i])
	}
	// In place, into whichever operand is a vector (x for vv).
	in := x
	if form == ewFormSV {
		in = y
	}
	if err := ewRunBinary(v, op, form, in, x, y, s); err != nil {
		t.Fatal(err)
	}
	if i := firstDiff(in, want); i >= 0 {
		t.Fatalf("n=%d off=%d in place: got %v, want %v", n, off, in[i], want[i])
	}
	if form == ewFormVV { // and into y
		copy(x, x0)
		copy(y, y0)
		if err := v.Binary(op, y, x, y); err != nil {
			t.Fatal(err)
		}
		if i := firstDiff(y, want); i >= 0 {
			t.Fatalf("n=%d off=%d in place of y: got %v, want %v", n, off, y[i], want[i])
		}
	}
}

// Bit-for-bit agreement of every assembly variant with the Go twin over
// the accuracy sweep.
func TestEwTwinBits(t *testing.T) {
	xs := ewSweep(ewStride(ewGo))
	got, want := make([]float32, len(xs)), make([]float32, len(xs))
	for _, v := range EwVariants() {
		if v == ewGo {
			continue
		}
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

func TestEwErrors(t *testing.T) {
	x := make([]float32, 16)
	for _, v := range EwVariants() {
		if err := v.Unary(EwExp, x[:3], x[:4]); err == nil {
			t.Errorf("%s: length mismatch accepted", v.Name)
		}
		if err := v.Unary(EwExp, x[1:9], x[:8]); err != ErrEwAlias {
			t.Errorf("%s: partial overlap gave %v", v.Name, err)
		}
		if err := v.Binary(EwAdd, x[:8], x[8:], x[1:9]); err != ErrEwAlias {
			t.Errorf("%s: partial overlap of y gave %v", v.Name, err)
		}
		if err := v.Binary(EwAdd, x[:8], x[:8], x[:8]); err != nil {
			t.Errorf("%s: exact aliasing refused: %v", v.Name, err)
		}
		if err := v.Unary(ewNumUnary, x, x); err == nil {
			t.Errorf("%s: unknown op accepted", v.Name)
		}
		if err := v.BinaryScalar(EwBinary(-1), x, x, 1); err == nil {
			t.Errorf("%s: unknown op accepted", v.Name)
		}
	}
}

// Limits the issue names, checked by value: overflow to +Inf, underflow
// to 0, tiny tanh(x) = x, log at 0 and below, GELU's negative tail, NaN.
func TestEwLimits(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	negz := float32(math.Copysign(0, -1))
	cases := []struct {
		op   EwUnary
		x    float32
		want float32
		ulps float64 // 0: exact bits
	}{
		{EwExp, 88.8, inf, 0}, {EwExp, inf, inf, 0}, {EwExp, -inf, 0, 0}, {EwExp, -104, 0, 0},
		{EwExp, -103.9, 1e-45, 0}, // 2^-149·e^0.07·... rounds to the smallest subnormal
		{EwLog, 0, -inf, 0}, {EwLog, negz, -inf, 0}, {EwLog, inf, inf, 0}, {EwLog, 1, 0, 0},
		{EwLog, 1e-45, float32(math.Log(0x1p-149)), 1}, {EwLog, -1, nan, 0},
		{EwTanh, 1e-30, 1e-30, 0}, {EwTanh, -1e-40, -1e-40, 0}, {EwTanh, negz, negz, 0}, {EwTanh, 10, 1, 0}, {EwTanh, -inf, -1, 0},
		{EwSigmoid, inf, 1, 0}, {EwSigmoid, -inf, 0, 0}, {EwSigmoid, 0, 0.5, 0},
		{EwErf, 1e-30, float32(2 / math.SqrtPi * 1e-30), 1}, {EwErf, 4, 1, 0}, {EwErf, -inf, -1, 0},
		// The x·gate(x) activations: NaN at -Inf (-Inf·0, as the
		// spelled-out forms and PyTorch compute), -0 in the finite tail,
		// x at the top of the range.
		{EwGelu, -20, negz, 0}, {EwGelu, -inf, nan, 0}, {EwGelu, inf, inf, 0}, {EwGelu, 30, 30, 0},
		{EwGelu, -3.4e38, negz, 0}, {EwGelu, 3.4e38, 3.4e38, 0},
		{EwGeluTanh, -20, negz, 0}, {EwGeluTanh, -inf, nan, 0}, {EwGeluTanh, inf, inf, 0},
		{EwGeluTanh, -3.4e38, negz, 0}, {EwGeluTanh, 3.4e38, 3.4e38, 0},
		{EwSilu, -inf, nan, 0}, {EwSilu, inf, inf, 0}, {EwSilu, -200, negz, 0},
		{EwSilu, -3.4e38, negz, 0}, {EwSilu, 3.4e38, 3.4e38, 0},
		{EwRelu, negz, negz, 0}, {EwErf, negz, negz, 0}, {EwGelu, negz, negz, 0}, {EwGeluTanh, negz, negz, 0},
		{EwSilu, negz, negz, 0}, {EwSigmoid, negz, 0.5, 0}, {EwExp, negz, 1, 0}, {EwRelu, -1, 0, 0}, {EwAbs, negz, 0, 0}, {EwNeg, 0, negz, 0},
	}
	// 32 copies, so that the assembly (not only a tail) computes them:
	// two blocks of the widest variant (AVX-512's 16).
	run := func(v *EwKernels, op EwUnary, x float32) float32 {
		xs, got := make([]float32, 32), make([]float32, 32)
		for i := range xs {
			xs[i] = x
		}
		if err := v.Unary(op, got, xs); err != nil {
			t.Fatal(err)
		}
		return got[0]
	}
	for _, v := range EwVariants() {
		for _, c := range cases {
			got := run(v, c.op, c.x)
			ok := sameBits(got, c.want)
			if c.ulps > 0 {
				ok = ulpErr(got, float64(c.want)) <= c.ulps
			}
			if !ok {
				t.Errorf("%s %v(%v) = %v, want %v", v.Name, c.op, c.x, got, c.want)
			}
		}
		for op := range EwUnary(ewNumUnary) {
			if got := run(v, op, nan); got == got {
				t.Errorf("%s %v(NaN) = %v", v.Name, op, got)
			}
		}
	}
}
