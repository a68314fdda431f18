package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// halfFormat describes a 16-bit float layout so that f16 and bf16 share the
// reference code below, which works on float64 arithmetic rather than bits.
type halfFormat struct {
	name      string
	mantBits  int // stored mantissa bits
	bias      int
	maxFinite uint16 // bits of the largest finite positive value
	toF32     func(uint16) float32
	fromF32   func(float32) uint16
	fromF64   func(float64) uint16
}

var (
	f16Format  = halfFormat{"f16", 10, 15, 0x7bff, F16ToF32, F32ToF16, f64ToF16}
	bf16Format = halfFormat{"bf16", 7, 127, 0x7f7f, BF16ToF32, F32ToBF16, f64ToBF16}
)

func (hf halfFormat) expMask() uint16  { return 0x7fff &^ (1<<hf.mantBits - 1) }
func (hf halfFormat) quietBit() uint16 { return 1 << (hf.mantBits - 1) }
func (hf halfFormat) isNaN(h uint16) bool {
	return h&hf.expMask() == hf.expMask() && h&(1<<hf.mantBits-1) != 0
}

// value decodes bits with math.Ldexp from the sign, exponent and mantissa
// fields (independent of the bit-shuffling code under test). For the
// all-ones exponent with mantissa 0 it returns ±Inf; callers skip NaNs.
func (hf halfFormat) value(h uint16) float64 {
	mant := int(h) & (1<<hf.mantBits - 1)
	exp := int(h&0x7fff) >> hf.mantBits
	var v float64
	switch {
	case h&hf.expMask() == hf.expMask():
		v = math.Inf(1)
	case exp == 0:
		v = math.Ldexp(float64(mant), 1-hf.bias-hf.mantBits)
	default:
		v = math.Ldexp(float64(mant|1<<hf.mantBits), exp-hf.bias-hf.mantBits)
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return v
}

// ref rounds x to the format with float64 arithmetic: find the binade with
// math.Frexp, scale so that one ulp is 1, and round with math.RoundToEven.
func (hf halfFormat) ref(x float64) uint16 {
	var sign uint16
	if math.Signbit(x) {
		sign = 0x8000
	}
	ax := math.Abs(x)
	maxV := hf.value(hf.maxFinite)
	halfUlpMax := math.Ldexp(1, hf.bias-hf.mantBits-1)
	if ax >= maxV+halfUlpMax { // covers Inf; a tie at the top goes to Inf (odd max)
		return sign | hf.expMask()
	}
	minExp := 1 - hf.bias // exponent of the smallest normal
	if ax < math.Ldexp(1, minExp) {
		m := math.RoundToEven(math.Ldexp(ax, hf.mantBits-minExp))
		return sign | uint16(m) // m == 1<<mantBits is the smallest normal: still right
	}
	_, e := math.Frexp(ax) // ax = fr * 2^e, fr in [0.5, 1)
	e--                    // ax in [2^e, 2^(e+1))
	m := math.RoundToEven(math.Ldexp(ax, hf.mantBits-e))
	// m in [2^mantBits, 2^(mantBits+1)]; the upper end carries into the exponent.
	return sign | (uint16(e+hf.bias)<<hf.mantBits + (uint16(m) - 1<<hf.mantBits))
}

func TestHalfToF32Exhaustive(t *testing.T) {
	for _, hf := range []halfFormat{f16Format, bf16Format} {
		for i := range 1 << 16 {
			h := uint16(i)
			got := hf.toF32(h)
			gb := math.Float32bits(got)
			if hf.isNaN(h) {
				// Quiet NaN, same sign, payload moved to the top of the f32 mantissa.
				want := uint32(h|hf.quietBit())<<(23-hf.mantBits) | 0x7f800000
				want = want&0x7fffffff | uint32(h&0x8000)<<16
				if !math.IsNaN(float64(got)) || gb != want {
					t.Fatalf("%s %#04x: got %#08x, want NaN %#08x", hf.name, h, gb, want)
				}
				continue
			}
			want := hf.value(h)
			if float64(got) != want || math.Signbit(float64(got)) != (h&0x8000 != 0) {
				t.Fatalf("%s %#04x: got %v (%#08x), want %v", hf.name, h, got, gb, want)
			}
		}
	}
}

func TestHalfRoundTripExhaustive(t *testing.T) {
	for _, hf := range []halfFormat{f16Format, bf16Format} {
		for i := range 1 << 16 {
			h := uint16(i)
			back := hf.fromF32(hf.toF32(h))
			if hf.isNaN(h) {
				if !hf.isNaN(back) || back&0x8000 != h&0x8000 || back != h|hf.quietBit() {
					t.Fatalf("%s NaN %#04x came back as %#04x", hf.name, h, back)
				}
				continue
			}
			if back != h {
				t.Fatalf("%s %#04x came back as %#04x", hf.name, h, back)
			}
			// The float64 path must agree.
			if b64 := hf.fromF64(float64(hf.toF32(h))); b64 != h {
				t.Fatalf("%s %#04x via f64 came back as %#04x", hf.name, h, b64)
			}
		}
	}
}

// TestHalfMidpoints checks every gap between adjacent finite values of each
// sign: the midpoint rounds to the even neighbour, and the float32 values
// just below and just above it round down and up. The last gap, from the
// largest finite value to the next power of two, is the overflow threshold.
func TestHalfMidpoints(t *testing.T) {
	for _, hf := range []halfFormat{f16Format, bf16Format} {
		for _, sign := range []uint16{0, 0x8000} {
			for lo := uint16(0); lo <= hf.maxFinite; lo++ {
				hi := lo + 1 // for maxFinite this is Inf, value() gives the next power of two
				a, b := hf.value(lo), hf.value(hi)
				if hi == hf.expMask() {
					b = math.Ldexp(1, hf.bias+1)
				}
				mid := (a + b) / 2
				m32 := float32(mid)
				if float64(m32) != mid {
					t.Fatalf("%s: midpoint %v after %#04x not exact in f32", hf.name, mid, lo)
				}
				even := lo
				if lo&1 != 0 {
					even = hi
				}
				s := float32(1)
				if sign != 0 {
					s = -1
				}
				check := func(what string, x float32, want uint16) {
					t.Helper()
					if got := hf.fromF32(x); got != want {
						t.Fatalf("%s %s %v (%#08x): got %#04x, want %#04x", hf.name, what, x, math.Float32bits(x), got, want)
					}
					if got := hf.fromF64(float64(x)); got != want {
						t.Fatalf("%s via f64 %s %v: got %#04x, want %#04x", hf.name, what, x, got, want)
					}
				}
				check("midpoint", s*m32, sign|even)
				check("below midpoint", s*math.Nextafter32(m32, 0), sign|lo)
				check("above midpoint", s*math.Nextafter32(m32, float32(math.Inf(1))), sign|hi)
				check("just above low end", s*math.Nextafter32(float32(a), float32(math.Inf(1))), sign|lo)
				// In float64, a hair off the midpoint must not round twice
				// (through f32) onto the tie.
				eps := math.Ldexp(mid, -40)
				if got := hf.fromF64(float64(s) * (mid - eps)); got != sign|lo {
					t.Fatalf("%s f64 just below midpoint %v: got %#04x, want %#04x", hf.name, mid, got, sign|lo)
				}
				if got := hf.fromF64(float64(s) * (mid + eps)); got != sign|hi {
					t.Fatalf("%s f64 just above midpoint %v: got %#04x, want %#04x", hf.name, mid, got, sign|hi)
				}
			}
		}
	}
}

func TestF16Specials(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	tests := []struct {
		in   float64
		want uint16
	}{
		{0, 0}, {math.Copysign(0, -1), 0x8000},
		{1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800},
		{65504, 0x7bff}, {65519.99, 0x7bff}, {65520, 0x7c00}, {-65520, 0xfc00},
		{1e6, 0x7c00}, {math.MaxFloat32, 0x7c00}, {inf, 0x7c00}, {-inf, 0xfc00},
		{0x1p-14, 0x0400},                              // smallest normal
		{0x1p-24, 0x0001},                              // smallest subnormal
		{0x1p-25, 0x0000},                              // tie with zero goes to even (zero)
		{-0x1p-25, 0x8000},                             // ... keeping the sign
		{0x1.000002p-25, 0x0001},                       // just above the tie rounds up
		{0x1p-26, 0}, {math.SmallestNonzeroFloat32, 0}, // far below
		{-math.SmallestNonzeroFloat32, 0x8000},
		{0x1.ff8p-15, 0x03ff}, // largest subnormal
		{0x1.ffcp-15, 0x0400}, // tie between largest subnormal (odd) and smallest normal
		{1 + 0x1p-11, 0x3c00}, // tie, even is below
		{1 + 3*0x1p-11, 0x3c02},
		{2049, 0x6800}, {2051, 0x6802}, // integer ties around 2^11
	}
	for _, tc := range tests {
		if got := F32ToF16(float32(tc.in)); got != tc.want {
			t.Errorf("F32ToF16(%v) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
	for _, in := range []float32{float32(nan), -float32(nan),
		math.Float32frombits(0x7f800001), math.Float32frombits(0xff800001), // payload only in dropped bits
		math.Float32frombits(0x7fffffff)} {
		got := F32ToF16(in)
		if got&0x7c00 != 0x7c00 || got&0x3ff == 0 || got&0x200 == 0 {
			t.Errorf("F32ToF16(NaN %#08x) = %#04x, want a quiet NaN", math.Float32bits(in), got)
		}
		if got>>15 != uint16(math.Float32bits(in)>>31) {
			t.Errorf("F32ToF16(NaN %#08x) = %#04x lost the sign", math.Float32bits(in), got)
		}
	}
}

func TestBF16Specials(t *testing.T) {
	tests := []struct {
		in   uint32 // f32 bits
		want uint16
	}{
		{0x3f800000, 0x3f80},                       // 1
		{0x3f808000, 0x3f80},                       // tie, even below
		{0x3f818000, 0x3f82},                       // tie, even above
		{0x3f808001, 0x3f81},                       // just above tie
		{0x3f807fff, 0x3f80},                       // just below tie
		{0x80000000, 0x8000},                       // -0
		{0x00000001, 0x0000},                       // smallest f32 subnormal -> 0
		{0x00008000, 0x0000},                       // tie with 0
		{0x00008001, 0x0001},                       // smallest bf16 subnormal
		{0x007f8000, 0x0080},                       // largest subnormal (odd) + half: to the smallest normal
		{0x7f7f7fff, 0x7f7f},                       // just below overflow threshold
		{0x7f7f8000, 0x7f80},                       // threshold: tie, odd max -> Inf
		{0x7f7fffff, 0x7f80},                       // MaxFloat32 -> Inf
		{0xff7fffff, 0xff80},                       // -MaxFloat32 -> -Inf
		{0x7f800000, 0x7f80}, {0xff800000, 0xff80}, // Inf
	}
	for _, tc := range tests {
		if got := F32ToBF16(math.Float32frombits(tc.in)); got != tc.want {
			t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
	for _, in := range []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fffffff, 0x7f80ffff} {
		got := F32ToBF16(math.Float32frombits(in))
		if got&0x7f80 != 0x7f80 || got&0x7f == 0 || got&0x40 == 0 || got>>15 != uint16(in>>31) {
			t.Errorf("F32ToBF16(NaN %#08x) = %#04x, want a quiet NaN with the same sign", in, got)
		}
	}
}

// TestHalfRandom compares the bit-level narrowing against the float64
// reference on millions of random float32 bit patterns: half uniform, half
// with exponents near the target's range where rounding is interesting.
func TestHalfRandom(t *testing.T) {
	n := 3_000_000
	if testing.Short() {
		n = 200_000
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, hf := range []halfFormat{f16Format, bf16Format} {
		lo, hi := uint32(max(0, 127-hf.bias-hf.mantBits-3)), uint32(min(255, 127+hf.bias+2))
		for i := range n {
			b := r.Uint32()
			if i&1 == 1 {
				exp := lo + r.Uint32N(hi-lo)
				b = b&0x807fffff | exp<<23
			}
			f := math.Float32frombits(b)
			got := hf.fromF32(f)
			if math.IsNaN(float64(f)) {
				if !hf.isNaN(got) || got>>15 != uint16(b>>31) {
					t.Fatalf("%s(NaN %#08x) = %#04x", hf.name, b, got)
				}
				continue
			}
			if want := hf.ref(float64(f)); got != want {
				t.Fatalf("%s(%v = %#08x) = %#04x, want %#04x", hf.name, f, b, got, want)
			}
		}
	}
}

// TestHalfRandomF64 checks the float64 -> half path (round-to-odd through
// f32) against the reference on random float64 values, which mostly have
// bits beyond f32's precision.
func TestHalfRandomF64(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, hf := range []halfFormat{f16Format, bf16Format} {
		lo, hi := 1023-hf.bias-hf.mantBits-3, 1023+hf.bias+2
		for range n {
			b := r.Uint64()&0x800fffffffffffff | uint64(lo+r.IntN(hi-lo))<<52
			x := math.Float64frombits(b)
			if got, want := hf.fromF64(x), hf.ref(x); got != want {
				t.Fatalf("%s(f64 %v = %#016x) = %#04x, want %#04x", hf.name, x, b, got, want)
			}
		}
	}
}

func TestHalfSlices(t *testing.T) {
	src := []float32{0, 1, -2.5, 65520, float32(math.Inf(-1)), 1e-8, 3.14159}
	h := make([]uint16, len(src))
	bf := make([]uint16, len(src)+2) // longer dst is fine
	F32ToF16Slice(h, src)
	F32ToBF16Slice(bf, src)
	back := make([]float32, len(src))
	backBF := make([]float32, len(src))
	F16ToF32Slice(back, h)
	BF16ToF32Slice(backBF, bf[:len(src)])
	for i, f := range src {
		if h[i] != F32ToF16(f) || bf[i] != F32ToBF16(f) {
			t.Errorf("slice narrowing differs at %d", i)
		}
		if back[i] != F16ToF32(h[i]) || backBF[i] != BF16ToF32(bf[i]) {
			t.Errorf("slice widening differs at %d", i)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("short dst did not panic")
		}
	}()
	F32ToF16Slice(h[:2], src)
}

func BenchmarkF32ToF16(b *testing.B) {
	src := make([]float32, 4096)
	for i := range src {
		src[i] = float32(i)*0.37 - 700
	}
	dst := make([]uint16, len(src))
	b.SetBytes(int64(4 * len(src)))
	for b.Loop() {
		F32ToF16Slice(dst, src)
	}
}

func BenchmarkF16ToF32(b *testing.B) {
	src := make([]uint16, 4096)
	for i := range src {
		src[i] = F32ToF16(float32(i)*0.37 - 700)
	}
	dst := make([]float32, len(src))
	b.SetBytes(int64(2 * len(src)))
	for b.Loop() {
		F16ToF32Slice(dst, src)
	}
}
