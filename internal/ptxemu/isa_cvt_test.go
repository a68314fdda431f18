package ptxemu

import (
	"math"
	"testing"
)

// Conversions, each expectation worked out by hand from IEEE 754 and the
// ISA's cvt rules (float-to-int saturates and maps NaN to 0; narrowing
// rounds in the given mode, overflowing to ±Inf or the largest finite
// value as the mode says; f16/bf16 NaN results are canonical).

type cvtCase struct {
	op     string
	dt, st string // register types
	in     uint64
	want   uint64
}

func runCvtCases(t *testing.T, cases []cvtCase) {
	t.Helper()
	for _, c := range cases {
		if got := op1(t, c.op, c.dt, []string{c.st}, c.in); got != c.want {
			t.Errorf("%s %#x = %#x, want %#x", c.op, c.in, got, c.want)
		}
	}
}

func TestCvtToHalf(t *testing.T) {
	runCvtCases(t, []cvtCase{
		{"cvt.rn.f16.f32", "b16", "f32", f32b(1), 0x3C00},
		{"cvt.rn.f16.f32", "b16", "f32", f32b(65504), 0x7BFF},
		{"cvt.rn.f16.f32", "b16", "f32", f32b(65519.99), 0x7BFF}, // below the tie with 65536
		{"cvt.rn.f16.f32", "b16", "f32", f32b(65520), 0x7C00},    // tie; 0x7BFF is odd: up to Inf
		{"cvt.rz.f16.f32", "b16", "f32", f32b(65520), 0x7BFF},
		{"cvt.rz.f16.f32", "b16", "f32", f32b(-1e6), 0xFBFF},
		{"cvt.rm.f16.f32", "b16", "f32", f32b(1e6), 0x7BFF},
		{"cvt.rm.f16.f32", "b16", "f32", f32b(-1e6), 0xFC00},
		{"cvt.rp.f16.f32", "b16", "f32", f32b(1e6), 0x7C00},
		{"cvt.rn.f16.f32", "b16", "f32", f32b(0x1p-24), 0x0001},   // smallest subnormal
		{"cvt.rn.f16.f32", "b16", "f32", f32b(0x1p-25), 0x0000},   // tie to even: 0
		{"cvt.rn.f16.f32", "b16", "f32", f32b(0x1.8p-25), 0x0001}, // past the tie
		{"cvt.rn.f16.f32", "b16", "f32", f32b(-0x1p-25), 0x8000},
		{"cvt.rn.f16.f32", "b16", "f32", 0x3F801000, 0x3C00}, // 1+2^-11: tie, even down
		{"cvt.rn.f16.f32", "b16", "f32", 0x3F803000, 0x3C02}, // 1+3·2^-11: tie, even up
		{"cvt.rm.f16.f32", "b16", "f32", 0xBF801000, 0xBC01}, // -(1+2^-11) toward -Inf
		{"cvt.rp.f16.f32", "b16", "f32", 0x3F801000, 0x3C01},
		{"cvt.rz.f16.f32", "b16", "f32", 0x3F803000, 0x3C01},
		{"cvt.rn.f16.f32", "b16", "f32", 0x7FC00001, 0x7FFF},  // canonical NaN
		{"cvt.rn.bf16.f32", "b16", "f32", 0x3F808000, 0x3F80}, // tie, even down
		{"cvt.rn.bf16.f32", "b16", "f32", 0x3F818000, 0x3F82}, // tie, even up
		{"cvt.rn.bf16.f32", "b16", "f32", 0x3F808001, 0x3F81}, // past the tie
		{"cvt.rn.bf16.f32", "b16", "f32", 0x7F7FFFFF, 0x7F80}, // overflows to Inf
		{"cvt.rz.bf16.f32", "b16", "f32", 0x7F7FFFFF, 0x7F7F}, // ... or not, toward zero
		{"cvt.rn.bf16.f32", "b16", "f32", 0x00018000, 0x0002}, // subnormal tie, even up
		{"cvt.rn.bf16.f32", "b16", "f32", 0x80000000, 0x8000}, // -0
		{"cvt.rn.bf16.f32", "b16", "f32", 0x7FC00001, 0x7FFF}, // canonical NaN
		{"cvt.rn.relu.bf16.f32", "b16", "f32", f32b(-3), 0x0000},
		{"cvt.rn.relu.f16.f32", "b16", "f32", f32b(3), 0x4200},
		{"cvt.rn.f16.f64", "b16", "f64", math.Float64bits(1 + 0x1p-11 + 0x1p-40), 0x3C01}, // one rounding from f64
		{"cvt.rn.f32.f64", "f32", "f64", math.Float64bits(1 + 0x1p-24), 0x3F800000},
		{"cvt.rn.f32.f64", "f32", "f64", math.Float64bits(1e300), 0x7F800000},
		{"cvt.rna.tf32.f32", "b32", "f32", 0x3F801000, 0x3F802000}, // tie away from zero at 10 bits
		{"cvt.rna.tf32.f32", "b32", "f32", 0x3F800FFF, 0x3F800000},
	})
}

func TestCvtWiden(t *testing.T) {
	runCvtCases(t, []cvtCase{
		{"cvt.f32.f16", "f32", "b16", 0x7C00, 0x7F800000},
		{"cvt.f32.f16", "f32", "b16", 0x0001, f32b(0x1p-24)},
		{"cvt.f32.f16", "f32", "b16", 0xC000, f32b(-2)},
		{"cvt.f32.bf16", "f32", "b16", 0x3F81, 0x3F810000},
		{"cvt.f64.f32", "f64", "f32", f32b(0.1), math.Float64bits(float64(float32(0.1)))},
		{"cvt.ftz.f64.f32", "f64", "f32", f32b(1e-40), 0},
	})
	// A NaN stays a NaN.
	if got := op1(t, "cvt.f32.f16", "f32", []string{"b16"}, 0x7E01); !math.IsNaN(float64(math.Float32frombits(uint32(got)))) {
		t.Errorf("cvt.f32.f16 NaN = %#x", got)
	}
}

func TestCvtFloatToInt(t *testing.T) {
	nan := uint64(0x7FC00000)
	i32 := func(v int32) uint64 { return uint64(uint32(v)) }
	runCvtCases(t, []cvtCase{
		{"cvt.rzi.s32.f32", "s32", "f32", f32b(2.7), 2},
		{"cvt.rzi.s32.f32", "s32", "f32", f32b(-2.7), i32(-2)},
		{"cvt.rni.s32.f32", "s32", "f32", f32b(2.5), 2}, // ties to even
		{"cvt.rni.s32.f32", "s32", "f32", f32b(3.5), 4},
		{"cvt.rni.s32.f32", "s32", "f32", f32b(-2.5), i32(-2)},
		{"cvt.rmi.s32.f32", "s32", "f32", f32b(-2.5), i32(-3)},
		{"cvt.rpi.s32.f32", "s32", "f32", f32b(2.1), 3},
		{"cvt.rzi.s32.f32", "s32", "f32", f32b(3e9), 0x7FFFFFFF}, // saturates
		{"cvt.rzi.s32.f32", "s32", "f32", f32b(-3e9), 0x80000000},
		{"cvt.rzi.s32.f32", "s32", "f32", nan, 0}, // NaN gives 0
		{"cvt.rzi.s32.f32", "s32", "f32", f32b(float32(math.Inf(1))), 0x7FFFFFFF},
		{"cvt.rzi.u32.f32", "u32", "f32", f32b(-5), 0},
		{"cvt.rzi.u32.f32", "u32", "f32", f32b(5e9), 0xFFFFFFFF},
		{"cvt.rzi.s64.f32", "s64", "f32", f32b(1e19), 0x7FFFFFFFFFFFFFFF},
		{"cvt.rzi.s64.f32", "s64", "f32", f32b(-1e19), 0x8000000000000000},
		{"cvt.rzi.u64.f64", "u64", "f64", math.Float64bits(0x1p64), 0xFFFFFFFFFFFFFFFF},
		{"cvt.rzi.u64.f64", "u64", "f64", math.Float64bits(1.2e19), 12000000000000000000},
		{"cvt.rzi.s8.f32", "s32", "f32", f32b(-300), 0xFFFFFF80}, // saturated to -128, sign-extended into the register
		{"cvt.rzi.u8.f32", "u32", "f32", f32b(300), 0xFF},
		{"cvt.rni.f32.f32", "f32", "f32", f32b(2.5), f32b(2)}, // integral value, same type
		{"cvt.rmi.f32.f32", "f32", "f32", f32b(-0.5), f32b(-1)},
		{"cvt.rpi.f32.f32", "f32", "f32", f32b(-0.5), 0x80000000}, // ceil(-0.5) = -0
	})
}

func TestCvtIntToFloat(t *testing.T) {
	runCvtCases(t, []cvtCase{
		{"cvt.rn.f32.s32", "f32", "s32", 16777217, f32b(16777216)}, // tie, even
		{"cvt.rn.f32.s32", "f32", "s32", 16777219, f32b(16777220)}, // tie, even
		{"cvt.rz.f32.s32", "f32", "s32", 16777219, f32b(16777218)},
		{"cvt.rp.f32.s32", "f32", "s32", 16777217, f32b(16777218)},
		{"cvt.rm.f32.s32", "f32", "s32", uint64(uint32(0xFEFFFFFF)), f32b(-16777218)}, // -16777217
		{"cvt.rn.f32.u64", "f32", "u64", 0xFFFFFFFFFFFFFFFF, 0x5F800000},              // 2^64
		{"cvt.rz.f32.u64", "f32", "u64", 0xFFFFFFFFFFFFFFFF, 0x5F7FFFFF},
		{"cvt.rn.f32.s64", "f32", "s64", 0x8000000000000000, 0xDF000000}, // -2^63
		{"cvt.rn.f64.s64", "f64", "s64", 1<<53 + 1, math.Float64bits(0x1p53)},
		{"cvt.rp.f64.s64", "f64", "s64", 1<<53 + 1, math.Float64bits(0x1p53 + 2)},
		{"cvt.rm.f64.s64", "f64", "s64", uint64(-(1<<53 + 1) & (1<<64 - 1)), math.Float64bits(-0x1p53 - 2)},
		{"cvt.rn.f64.u64", "f64", "u64", 0xFFFFFFFFFFFFFFFF, math.Float64bits(0x1p64)},
		{"cvt.rz.f64.u64", "f64", "u64", 0xFFFFFFFFFFFFFFFF, math.Float64bits(0x1p64 - 2048)},
		{"cvt.rn.f16.s32", "b16", "s32", 65520, 0x7C00},
		{"cvt.rn.f16.s32", "b16", "s32", 2049, 0x6800},    // 2048: tie, even
		{"cvt.rn.bf16.s32", "b16", "s32", 257, 0x4380},    // 256: tie, even
		{"cvt.rn.f32.u8", "f32", "u32", 0x1FF, f32b(255)}, // the low byte only
		{"cvt.rn.f32.s8", "f32", "u32", 0xFF, f32b(-1)},
	})
}

func TestCvtIntToInt(t *testing.T) {
	runCvtCases(t, []cvtCase{
		{"cvt.s32.s8", "s32", "u32", 0xF0, 0xFFFFFFF0},
		{"cvt.u32.u8", "u32", "u32", 0x1F0, 0xF0},
		{"cvt.u32.u16", "u32", "b16", 0x8001, 0x8001},
		{"cvt.s64.s32", "s64", "s32", 0x80000000, 0xFFFFFFFF80000000},
		{"cvt.u64.u32", "u64", "u32", 0x80000000, 0x80000000},
		{"cvt.u32.u64", "u32", "u64", 0x123456789, 0x23456789},
		{"cvt.sat.u8.s32", "u32", "s32", uint64(uint32(0xFFFFFFFB)), 0}, // -5
		{"cvt.sat.u8.s32", "u32", "s32", 300, 255},
		{"cvt.sat.s8.s32", "s32", "s32", uint64(uint32(0xFFFFFED4)), 0xFFFFFF80}, // -300 → -128
		{"cvt.sat.s32.u32", "s32", "u32", 0x90000000, 0x7FFFFFFF},
		{"cvt.s8.s32", "s32", "s32", 300, 44}, // wraps: 300 mod 256
	})
}

// TestCvtPack: cvt.rn.f16x2.f32 d, a, b puts a in the upper half.
func TestCvtPack(t *testing.T) {
	got := op1(t, "cvt.rn.f16x2.f32", "b32", []string{"f32", "f32"}, f32b(1), f32b(-2))
	if got != 0x3C00C000 {
		t.Errorf("cvt.rn.f16x2.f32 1, -2 = %#x, want 0x3C00C000", got)
	}
	got = op1(t, "cvt.rn.bf16x2.f32", "b32", []string{"f32", "f32"}, f32b(1), f32b(-2))
	if got != 0x3F80C000 {
		t.Errorf("cvt.rn.bf16x2.f32 1, -2 = %#x, want 0x3F80C000", got)
	}
}
