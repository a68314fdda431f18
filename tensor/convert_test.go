package tensor

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

var (
	nan    = math.NaN()
	inf    = math.Inf(1)
	negZer = math.Copysign(0, -1)
)

// convertCase converts in (given as float64s, or as int64s for integer
// sources so that values past 2^53 are exact) from one dtype to another
// and compares the result, read back as int64s or float64s.
type convertCase struct {
	name     string
	from, to DType
	in       []float64
	inInt    []int64 // used instead of in when set
	want     []float64
	wantInt  []int64 // compared exactly instead of want when set
}

func (c convertCase) run(t *testing.T) {
	t.Helper()
	var src Tensor
	var err error
	if c.inInt != nil {
		src, err = FromI64(Shape{len(c.inInt)}, c.inInt)
		if err == nil && c.from != I64 {
			src, err = convertTo(c.from, src)
		}
	} else {
		src, err = FromFloat64s(c.from, Shape{len(c.in)}, c.in)
	}
	if err != nil {
		t.Fatalf("%s: building source: %v", c.name, err)
	}
	dst := New(c.to, src.Shape...)
	if err := Convert(dst, src); err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	switch {
	case c.wantInt != nil:
		i64, err := convertTo(I64, dst)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range i64.I64() {
			if g != c.wantInt[i] {
				t.Errorf("%s [%d]: got %d, want %d", c.name, i, g, c.wantInt[i])
			}
		}
	default:
		for i, g := range dst.Float64s() {
			w := c.want[i]
			if !(g == w && math.Signbit(g) == math.Signbit(w)) && !(math.IsNaN(g) && math.IsNaN(w)) {
				t.Errorf("%s [%d]: got %v, want %v", c.name, i, g, w)
			}
		}
	}
}

func convertTo(dt DType, src Tensor) (Tensor, error) {
	dst, err := Make(dt, src.Shape)
	if err != nil {
		return dst, err
	}
	return dst, Convert(dst, src)
}

func TestConvertRules(t *testing.T) {
	cases := []convertCase{
		// float -> int: truncate toward zero, NaN -> 0, saturate.
		{name: "f32->i8", from: F32, to: I8,
			in:      []float64{1.9, -1.9, 127.5, 300, -300, nan, inf, -inf, -0.5, 0},
			wantInt: []int64{1, -1, 127, 127, -128, 0, 127, -128, 0, 0}},
		{name: "f32->u8", from: F32, to: U8,
			in:      []float64{-1, -0.5, 255.9, 256, 1e30, nan, -inf, 7.99},
			wantInt: []int64{0, 0, 255, 255, 255, 0, 0, 7}},
		{name: "f32->i32", from: F32, to: I32,
			in:      []float64{2147483648, -2147483648, 1e10, -1e10, 16777216.0, -3.99, nan},
			wantInt: []int64{math.MaxInt32, math.MinInt32, math.MaxInt32, math.MinInt32, 16777216, -3, 0}},
		{name: "f64->i64", from: F64, to: I64,
			in:      []float64{0x1p63, -0x1p63, 1e19, -1e19, 0x1p62, 0x1.fffffffffffffp62, inf, nan, -2.5},
			wantInt: []int64{math.MaxInt64, math.MinInt64, math.MaxInt64, math.MinInt64, 1 << 62, 0x7ffffffffffffc00, math.MaxInt64, 0, -2}},
		{name: "f32->i64", from: F32, to: I64,
			in:      []float64{0x1p63, -0x1p63, -inf, nan, 1e20, 123.75},
			wantInt: []int64{math.MaxInt64, math.MinInt64, math.MinInt64, 0, math.MaxInt64, 123}},
		{name: "f16->i8", from: F16, to: I8,
			in:      []float64{65504, -65504, 2.5, -inf, nan},
			wantInt: []int64{127, -128, 2, -128, 0}},
		{name: "bf16->u8", from: BF16, to: U8,
			in:      []float64{-1, 3.5, 0x1p100, nan},
			wantInt: []int64{0, 3, 255, 0}},
		{name: "f64->i32", from: F64, to: I32,
			in:      []float64{2147483647.9, -2147483648.9, 2147483648},
			wantInt: []int64{math.MaxInt32, math.MinInt32, math.MaxInt32}},

		// int -> int: two's-complement wraparound, never through float64.
		{name: "i32->i8", from: I32, to: I8,
			inInt: []int64{300, -129, 128, 255, -1}, wantInt: []int64{44, 127, -128, -1, -1}},
		{name: "i32->u8", from: I32, to: U8,
			inInt: []int64{-1, 256, 257, -256}, wantInt: []int64{255, 0, 1, 0}},
		{name: "i64->i32", from: I64, to: I32,
			inInt:   []int64{1<<32 + 1, 1<<53 + 1, -1 << 40, math.MaxInt64, math.MinInt64},
			wantInt: []int64{1, 1, 0, -1, 0}},
		{name: "u8->i8", from: U8, to: I8, inInt: []int64{255, 128, 127}, wantInt: []int64{-1, -128, 127}},
		{name: "u8->i32 zero-extends", from: U8, to: I32, inInt: []int64{200, 255}, wantInt: []int64{200, 255}},
		{name: "i8->i64 sign-extends", from: I8, to: I64, inInt: []int64{-1, -128}, wantInt: []int64{-1, -128}},
		{name: "i8->u8", from: I8, to: U8, inInt: []int64{-1, -128}, wantInt: []int64{255, 128}},
		{name: "i64->u8", from: I64, to: U8,
			inInt: []int64{1<<53 + 3, math.MaxInt64, -(1 << 60) - 1}, wantInt: []int64{3, 255, 255}},

		// int -> float: one rounding to nearest, ties to even.
		{name: "i64->f64", from: I64, to: F64,
			inInt: []int64{1<<53 + 1, 1<<53 + 3, math.MaxInt64, math.MinInt64, -(1<<53 + 1)},
			want:  []float64{0x1p53, 0x1p53 + 4, 0x1p63, -0x1p63, -0x1p53}},
		{name: "i32->f32", from: I32, to: F32,
			inInt: []int64{16777217, 16777219, -16777217, math.MaxInt32},
			want:  []float64{16777216, 16777220, -16777216, 0x1p31}},
		{name: "i64->f32", from: I64, to: F32,
			// 2^60 + 2^36 is the tie between 2^60 and its successor; +1 is
			// past the tie, which rounding through float64 first would lose.
			inInt: []int64{1<<60 + 1<<36, 1<<60 + 1<<36 + 1, 1<<60 + 3<<36, math.MaxInt64},
			want:  []float64{0x1p60, 0x1p60 + 0x1p37, 0x1p60 + 0x1p38, 0x1p63}},
		{name: "i32->f16", from: I32, to: F16,
			inInt: []int64{2049, 2051, 65504, 65519, 65520, 1 << 30, -70000},
			want:  []float64{2048, 2052, 65504, 65504, inf, inf, -inf}},
		{name: "i64->bf16", from: I64, to: BF16,
			inInt: []int64{257, 259, 1<<60 + 1<<52, 1<<60 + 1<<52 + 1, -(1<<60 + 1<<52 + 1)},
			want:  []float64{256, 260, 0x1p60, 0x1p60 + 0x1p53, -(0x1p60 + 0x1p53)}},
		{name: "i8->f16", from: I8, to: F16, inInt: []int64{-128, 127}, want: []float64{-128, 127}},
		{name: "u8->bf16", from: U8, to: BF16, inInt: []int64{255, 254}, want: []float64{255, 254}},

		// float -> float: one rounding to nearest even; NaN, Inf, -0 kept.
		{name: "f64->f32", from: F64, to: F32,
			in:   []float64{1 + 0x1p-24, 1 + 3*0x1p-24, 1e300, -1e300, 1e-300, -1e-300, nan, negZer},
			want: []float64{1, 1 + 0x1p-22, inf, -inf, 0, negZer, nan, negZer}},
		{name: "f64->f16 no double rounding", from: F64, to: F16,
			// 1 + 2^-11 + 2^-40 rounds to 1 + 2^-11 in f32, which would
			// then tie to 1; the correct answer is 1 + 2^-10.
			in:   []float64{1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-11, 65519.999, 65520, 1e-300, -1e-300, 1e300},
			want: []float64{1 + 0x1p-10, 1, 65504, inf, 0, negZer, inf}},
		{name: "f64->bf16 no double rounding", from: F64, to: BF16,
			// Also in bf16's subnormal range (spacing 2^-133): 2^-134 is a
			// tie with zero, a hair above it is not.
			in:   []float64{1 + 0x1p-8 + 0x1p-40, 1 + 0x1p-8, 0x1p-130, 0x1p-134, 0x1p-134 + 0x1p-160, 1e300, -1e300},
			want: []float64{1 + 0x1p-7, 1, 0x1p-130, 0, 0x1p-133, inf, -inf}},
		{name: "f16->bf16", from: F16, to: BF16,
			in:   []float64{1 + 0x1p-8, 1 + 3*0x1p-8, 65504, 0x1p-24, -inf},
			want: []float64{1, 1 + 0x1p-6, 65536, 0x1p-24, -inf}},
		{name: "bf16->f16", from: BF16, to: F16,
			in:   []float64{0x1p20, -0x1p20, 0x1p-30, -0x1p-30, 1.5, nan},
			want: []float64{inf, -inf, 0, negZer, 1.5, nan}},
		{name: "f32->f16 nan", from: F32, to: F16, in: []float64{nan}, want: []float64{nan}},

		// Bool.
		{name: "f32->bool", from: F32, to: Bool,
			in: []float64{0, negZer, nan, 0.5, -inf, 1e-45}, wantInt: []int64{0, 0, 1, 1, 1, 1}},
		{name: "f16->bool", from: F16, to: Bool, in: []float64{0, 0x1p-24, nan}, wantInt: []int64{0, 1, 1}},
		{name: "i8->bool", from: I8, to: Bool, inInt: []int64{0, -1, 2, -128}, wantInt: []int64{0, 1, 1, 1}},
		{name: "i64->bool", from: I64, to: Bool, inInt: []int64{1 << 40, 0}, wantInt: []int64{1, 0}},
	}
	for _, dt := range DTypes() {
		cases = append(cases, convertCase{name: "bool->" + dt.String(), from: Bool, to: dt,
			inInt: []int64{0, 1, 0}, want: []float64{0, 1, 0}})
	}
	for _, c := range cases {
		c.run(t)
	}
}

// A Bool tensor may hold bytes other than 0 and 1 (from a view over
// foreign memory); they read as true.
func TestConvertBoolBytes(t *testing.T) {
	src, err := View(Bool, Shape{4}, []byte{0, 1, 2, 255})
	if err != nil {
		t.Fatal(err)
	}
	for _, dt := range DTypes() {
		dst := New(dt, 4)
		if err := Convert(dst, src); err != nil {
			t.Fatal(err)
		}
		got := dst.Float64s()
		if dt == Bool {
			got = []float64{float64(dst.Data[0]), float64(dst.Data[1]), float64(b2u8(dst.Data[2] != 0)), float64(b2u8(dst.Data[3] != 0))}
		}
		if got[0] != 0 || got[1] != 1 || got[2] != 1 || got[3] != 1 {
			t.Errorf("bool bytes -> %v: %v", dt, got)
		}
	}
}

// TestConvertAllPairs round-trips, for all 81 pairs, values that every
// dtype of the pair holds exactly. The vector is longer than a staging
// chunk (and not a multiple of it) so chunk edges are covered.
func TestConvertAllPairs(t *testing.T) {
	pool := []float64{0, 1, -1, 2, 3, -3, 7, 100, -100, 127, -128, 200, 255, 1000, -40000, 65504, 1 << 20, -(1 << 24)}
	holds := func(dt DType, v float64) bool {
		switch dt {
		case Bool:
			return v == 0 || v == 1
		case I8:
			return v >= -128 && v <= 127
		case U8:
			return v >= 0 && v <= 255
		case F16:
			return F16ToF32(F32ToF16(float32(v))) == float32(v)
		case BF16:
			return BF16ToF32(F32ToBF16(float32(v))) == float32(v)
		}
		return true
	}
	n := 2*convertChunk + 37
	for _, a := range DTypes() {
		for _, b := range DTypes() {
			var vals []float64
			for _, v := range pool {
				if holds(a, v) && holds(b, v) {
					vals = append(vals, v)
				}
			}
			in := make([]float64, n)
			for i := range in {
				in[i] = vals[(i*7+i/3)%len(vals)]
			}
			src, err := FromFloat64s(a, Shape{n}, in)
			if err != nil {
				t.Fatal(err)
			}
			mid, err := convertTo(b, src)
			if err != nil {
				t.Fatalf("%v -> %v: %v", a, b, err)
			}
			for i, g := range mid.Float64s() {
				if g != in[i] {
					t.Fatalf("%v -> %v [%d]: got %v, want %v", a, b, i, g, in[i])
				}
			}
			back, err := convertTo(a, mid)
			if err != nil {
				t.Fatal(err)
			}
			if string(back.Data) != string(src.Data) {
				t.Fatalf("%v -> %v -> %v did not round-trip", a, b, a)
			}
		}
	}
}

// TestConvertFastMatchesGeneric checks every typed fast loop against the
// generic staged path on random data including NaN, ±Inf, ±0, huge,
// tiny, tie and integer-boundary values.
func TestConvertFastMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 5000
	special := []float64{nan, inf, -inf, 0, negZer, 1e30, -1e30, 1e-40, 0x1p31, -0x1p31, 0x1p63, -0x1p63,
		65520, 65519, 1 + 0x1p-11, 1 + 0x1p-8, 2147483520, -2147483520.5}
	f64s := make([]float64, n)
	i64s := make([]int64, n)
	for i := range n {
		switch i % 4 {
		case 0:
			f64s[i] = special[r.IntN(len(special))]
			i64s[i] = []int64{math.MaxInt64, math.MinInt64, 0, -1, 1<<60 + 1<<36, 1<<60 + 1<<36 + 1, 1<<24 + 1}[r.IntN(7)]
		case 1:
			f64s[i] = float64(math.Float32frombits(r.Uint32()))
			i64s[i] = int64(r.Uint64())
		default:
			f64s[i] = r.NormFloat64() * math.Ldexp(1, r.IntN(80)-40)
			i64s[i] = r.Int64N(1<<30) - 1<<29
		}
	}
	srcs := map[DType]Tensor{}
	f64t, _ := FromF64(Shape{n}, f64s)
	srcs[F64] = f64t
	srcs[I64], _ = FromI64(Shape{n}, i64s)
	srcs[I32], _ = convertTo(I32, srcs[I64])
	srcs[F32] = New(F32, n)
	convertGeneric(srcs[F32], f64t)
	srcs[F16] = New(F16, n)
	convertGeneric(srcs[F16], f64t)
	srcs[BF16] = New(BF16, n)
	convertGeneric(srcs[BF16], f64t)

	pairs := [][2]DType{{F32, F16}, {F16, F32}, {F32, BF16}, {BF16, F32}, {F32, F64}, {F64, F32},
		{F32, I32}, {I32, F32}, {F32, I64}, {I64, F32}}
	for _, p := range pairs {
		src := srcs[p[0]]
		fast, slow := New(p[1], n), New(p[1], n)
		if !convertFast(fast, src) {
			t.Fatalf("%v -> %v: no fast path", p[0], p[1])
		}
		convertGeneric(slow, src)
		if string(fast.Data) != string(slow.Data) {
			t.Errorf("%v -> %v: fast and generic paths differ", p[0], p[1])
		}
	}
}

// TestIntToFloatRandom checks int64 -> float conversions against math/big
// (a different rounding implementation) on random values of every width.
func TestIntToFloatRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n = 20000
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(r.Uint64()) >> r.IntN(64)
	}
	src, _ := FromI64(Shape{n}, v)
	f32, _ := convertTo(F32, src)
	f16, _ := convertTo(F16, src)
	bf, _ := convertTo(BF16, src)
	for i, x := range v {
		want32, _ := new(big.Float).SetInt64(x).Float32()
		if got := f32.F32()[i]; got != want32 {
			t.Fatalf("i64 %d -> f32: got %v, want %v", x, got, want32)
		}
		// Round to the half's precision with big, then encode (exact).
		for _, c := range []struct {
			hf   halfFormat
			prec uint
			got  uint16
		}{{f16Format, 11, f16.F16()[i]}, {bf16Format, 8, bf.BF16()[i]}} {
			rounded, _ := new(big.Float).SetPrec(c.prec).SetInt64(x).Float64()
			if want := c.hf.ref(rounded); c.got != want {
				t.Fatalf("i64 %d -> %s: got %#04x, want %#04x", x, c.hf.name, c.got, want)
			}
		}
	}
}

func TestConvertErrors(t *testing.T) {
	a, b := New(F32, 2, 3), New(F16, 3, 2)
	err := Convert(b, a)
	if err == nil || !strings.Contains(err.Error(), "f32[2 3]") || !strings.Contains(err.Error(), "f16[3 2]") {
		t.Errorf("shape mismatch: %v", err)
	}
	if err := Convert(New(F32, 6), a); err == nil {
		t.Error("[6] vs [2 3] accepted")
	}
	if err := Convert(Tensor{DType: Invalid, Shape: Shape{2, 3}}, a); err == nil {
		t.Error("invalid dst dtype accepted")
	}
	short := Tensor{DType: F32, Shape: Shape{2, 3}, Data: make([]byte, 20)}
	if err := Convert(New(I32, 2, 3), short); err == nil || !strings.Contains(err.Error(), "src") {
		t.Errorf("short src data: %v", err)
	}
	if err := Convert(short, New(I32, 2, 3)); err == nil || !strings.Contains(err.Error(), "dst") {
		t.Errorf("short dst data: %v", err)
	}
	// Scalars (nil and empty shapes) and empty tensors convert.
	if err := Convert(New(I8), Tensor{DType: F32, Shape: Shape{}, Data: make([]byte, 4)}); err != nil {
		t.Error(err)
	}
	if err := Convert(New(I8, 0, 5), New(F64, 0, 5)); err != nil {
		t.Error(err)
	}
}

// TestConvertOverlap converts in place: a tensor and a wider or narrower
// view of the same bytes.
func TestConvertOverlap(t *testing.T) {
	buf := make([]byte, 4*8)
	src, _ := View(F16, Shape{8}, buf[:16])
	for i := range 8 {
		src.F16()[i] = F32ToF16(float32(i) - 3.5)
	}
	dst, _ := View(F32, Shape{8}, buf)
	if err := Convert(dst, src); err != nil {
		t.Fatal(err)
	}
	for i, g := range dst.F32() {
		if g != float32(i)-3.5 {
			t.Fatalf("widening in place [%d] = %v", i, g)
		}
	}
	back, _ := View(I8, Shape{8}, buf[4:12])
	if err := Convert(back, dst); err != nil {
		t.Fatal(err)
	}
	for i, g := range back.I8() {
		if want := int8(float32(i) - 3.5); g != want {
			t.Fatalf("narrowing in place [%d] = %d, want %d", i, g, want)
		}
	}
}

func TestFloat64sAndFromFloat64s(t *testing.T) {
	in := []float64{0, 1, -2, 300.7, -1e9, nan}
	want := map[DType][]float64{
		F32:  {0, 1, -2, float64(float32(300.7)), -1e9, nan},
		F64:  in,
		F16:  {0, 1, -2, 300.75, -inf, nan},
		BF16: {0, 1, -2, 300, -998244352, nan},
		I8:   {0, 1, -2, 127, -128, 0},
		U8:   {0, 1, 0, 255, 0, 0},
		I32:  {0, 1, -2, 300, -1e9, 0},
		I64:  {0, 1, -2, 300, -1e9, 0},
		Bool: {0, 1, 1, 1, 1, 1},
	}
	for _, dt := range DTypes() {
		tn, err := FromFloat64s(dt, Shape{2, 3}, in)
		if err != nil {
			t.Fatal(err)
		}
		if tn.DType != dt || !tn.Shape.Equal(Shape{2, 3}) {
			t.Fatalf("FromFloat64s(%v) made %v", dt, tn)
		}
		got := tn.Float64s()
		for i, w := range want[dt] {
			if got[i] != w && !(math.IsNaN(got[i]) && math.IsNaN(w)) {
				t.Errorf("%v [%d]: got %v, want %v", dt, i, got[i], w)
			}
		}
	}
	if _, err := FromFloat64s(F32, Shape{2, 3}, in[:5]); err == nil {
		t.Error("wrong count accepted")
	}
	if _, err := FromFloat64s(Invalid, Shape{1}, in[:1]); err == nil {
		t.Error("invalid dtype accepted")
	}
	if got := New(I8, 0).Float64s(); len(got) != 0 {
		t.Errorf("empty tensor: %v", got)
	}
	huge, _ := FromI64(Shape{1}, []int64{1<<53 + 1})
	if got := huge.Float64s()[0]; got != 0x1p53 {
		t.Errorf("i64 2^53+1 widened to %v", got)
	}
}

func BenchmarkConvertF32ToF16(b *testing.B) {
	src, dst := New(F32, 1<<16), New(F16, 1<<16)
	for i := range src.F32() {
		src.F32()[i] = float32(i) * 0.01
	}
	b.SetBytes(int64(len(src.Data)))
	for b.Loop() {
		_ = Convert(dst, src)
	}
}

func BenchmarkConvertGenericF64ToI8(b *testing.B) {
	src, dst := New(F64, 1<<16), New(I8, 1<<16)
	for i := range src.F64() {
		src.F64()[i] = float64(i%300) - 150
	}
	b.SetBytes(int64(len(src.Data)))
	for b.Loop() {
		_ = Convert(dst, src)
	}
}
