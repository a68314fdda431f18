package tensor

import (
	"math"
	"math/bits"
)

// Narrowing in two steps (say f64 -> f32 -> f16, each rounding to nearest)
// can round twice and land on the wrong side of a tie. The helpers here
// avoid that with round-to-odd for the intermediate step: truncate, then set
// the lowest bit if anything was dropped. As long as the intermediate format
// has at least two more bits of precision than the final one at the value's
// magnitude (f32 versus f16 or bf16, f64 versus f32, in every range
// including subnormals), rounding the round-to-odd result to nearest-even
// gives the correctly rounded value (Boldo and Melquiond, 2008).

// f64ToF32Odd rounds x to float32 with round-to-odd. NaN stays NaN.
func f64ToF32Odd(x float64) float32 {
	f := float32(x)
	if float64(f) == x || x != x {
		return f // exact (or NaN): nothing was dropped
	}
	b := math.Float32bits(f)
	if math.Abs(float64(f)) > math.Abs(x) {
		// float32() rounded away from zero; step one ulp back toward zero
		// to get the truncation (Inf steps back to MaxFloat32).
		b--
	}
	return math.Float32frombits(b | 1)
}

// f64ToF16 rounds x to the nearest f16 (ties to even) with a single rounding.
func f64ToF16(x float64) uint16 { return F32ToF16(f64ToF32Odd(x)) }

// f64ToBF16 rounds x to the nearest bf16 (ties to even) with a single rounding.
func f64ToBF16(x float64) uint16 { return F32ToBF16(f64ToF32Odd(x)) }

// i64ToF64Odd converts v to float64 with round-to-odd: exact up to 2^53 in
// magnitude, otherwise truncated to 53 bits with the lowest bit set when
// any dropped bit was set.
func i64ToF64Odd(v int64) float64 {
	if -1<<53 <= v && v <= 1<<53 {
		return float64(v)
	}
	u := uint64(v)
	if v < 0 {
		u = -u // magnitude; also right for MinInt64 (2^63)
	}
	shift := bits.Len64(u) - 53
	kept := u >> shift
	if u&(1<<shift-1) != 0 {
		kept |= 1
	}
	r := math.Ldexp(float64(kept), shift)
	if v < 0 {
		r = -r
	}
	return r
}

// i64ToF32 rounds v to the nearest float32 (ties to even) with a single
// rounding, independent of how the platform converts int64 to float32.
func i64ToF32(v int64) float32 { return float32(i64ToF64Odd(v)) }

// floatToInt truncates x toward zero and saturates it to [lo, hi]; NaN
// gives 0. float64(hi) may round up (2^63 for MaxInt64), which is why the
// comparisons are inclusive.
func floatToInt(x float64, lo, hi int64) int64 {
	switch {
	case x != x:
		return 0
	case x <= float64(lo):
		return lo
	case x >= float64(hi):
		return hi
	}
	return int64(x)
}
