package ptxemu

import (
	"math"
	"testing"
)

// Integer, bit and predicate instructions, expectations by hand from the
// ISA (two's-complement wrap, .hi/.lo/.wide halves of the full product,
// division truncating toward zero, shift amounts clamped to the width).

type intCase struct {
	op   string
	dt   string
	st   []string
	in   []uint64
	want uint64
}

func u32(v int32) uint64 { return uint64(uint32(v)) }
func u64(v int64) uint64 { return uint64(v) }

func TestIntArith(t *testing.T) {
	s32x2, u32x2 := rep("s32", 2), rep("u32", 2)
	cases := []intCase{
		{"add.u32", "u32", u32x2, []uint64{0xFFFFFFFF, 2}, 1},
		{"add.sat.s32", "s32", s32x2, []uint64{math.MaxInt32, 1}, math.MaxInt32},
		{"sub.sat.s32", "s32", s32x2, []uint64{u32(math.MinInt32), 1}, u32(math.MinInt32)},
		{"sub.s64", "s64", rep("s64", 2), []uint64{0, 1}, u64(-1)},
		{"mul.lo.u32", "u32", u32x2, []uint64{0x10000, 0x10001}, 0x10000},
		{"mul.hi.u32", "u32", u32x2, []uint64{0xFFFFFFFF, 0xFFFFFFFF}, 0xFFFFFFFE},
		{"mul.hi.s32", "s32", s32x2, []uint64{u32(-3), 0x40000000}, 0xFFFFFFFF},
		{"mul.hi.s64", "s64", rep("s64", 2), []uint64{0x8000000000000000, 2}, u64(-1)},
		{"mul.hi.u64", "u64", rep("u64", 2), []uint64{math.MaxUint64, math.MaxUint64}, math.MaxUint64 - 1},
		{"mul.wide.s32", "s64", s32x2, []uint64{u32(-1), 5}, u64(-5)},
		{"mul.wide.u32", "u64", u32x2, []uint64{0xFFFFFFFF, 2}, 0x1FFFFFFFE},
		{"mul.wide.s16", "s32", rep("s16", 2), []uint64{0x8000, 2}, u32(-65536)},
		{"mad.lo.s32", "s32", rep("s32", 3), []uint64{3, 4, 5}, 17},
		{"mad.wide.s32", "s64", []string{"s32", "s32", "s64"}, []uint64{u32(-2), 3, 100}, 94},
		{"mad.hi.u32", "u32", rep("u32", 3), []uint64{0x80000000, 4, 7}, 9},
		{"div.s32", "s32", s32x2, []uint64{u32(-7), 2}, u32(-3)},
		{"rem.s32", "s32", s32x2, []uint64{u32(-7), 2}, u32(-1)},
		{"rem.s32", "s32", s32x2, []uint64{7, u32(-2)}, 1},
		{"div.u32", "u32", u32x2, []uint64{0xFFFFFFFE, 2}, 0x7FFFFFFF},
		{"div.s32", "s32", s32x2, []uint64{u32(math.MinInt32), u32(-1)}, u32(math.MinInt32)},
		{"div.u64", "u64", rep("u64", 2), []uint64{1 << 63, 3}, (1 << 63) / 3},
		{"abs.s32", "s32", []string{"s32"}, []uint64{u32(math.MinInt32)}, u32(math.MinInt32)},
		{"abs.s32", "s32", []string{"s32"}, []uint64{u32(-9)}, 9},
		{"neg.s64", "s64", []string{"s64"}, []uint64{5}, u64(-5)},
		{"min.s32", "s32", s32x2, []uint64{u32(-1), 1}, u32(-1)},
		{"min.u32", "u32", u32x2, []uint64{0xFFFFFFFF, 1}, 1},
		{"max.s64", "s64", rep("s64", 2), []uint64{u64(-1), u64(-2)}, u64(-1)},
		{"max.relu.s32", "s32", s32x2, []uint64{u32(-5), u32(-3)}, 0},
	}
	runIntCases(t, cases)
}

func runIntCases(t *testing.T, cases []intCase) {
	t.Helper()
	for _, c := range cases {
		if got := op1(t, c.op, c.dt, c.st, c.in...); got != c.want {
			t.Errorf("%s %#x = %#x, want %#x", c.op, c.in, got, c.want)
		}
	}
}

func TestBits(t *testing.T) {
	b32 := []string{"b32", "u32"}
	cases := []intCase{
		{"shl.b32", "b32", b32, []uint64{1, 31}, 0x80000000},
		{"shl.b32", "b32", b32, []uint64{1, 32}, 0}, // clamped: all bits out
		{"shl.b32", "b32", b32, []uint64{1, 100}, 0},
		{"shr.s32", "s32", []string{"s32", "u32"}, []uint64{0x80000000, 40}, 0xFFFFFFFF}, // sign fill
		{"shr.u32", "u32", []string{"u32", "u32"}, []uint64{0x80000000, 40}, 0},
		{"shr.b32", "b32", b32, []uint64{0x80000000, 31}, 1},
		{"shr.s16", "s16", []string{"s16", "u32"}, []uint64{0x8000, 20}, 0xFFFF},
		{"shl.b64", "b64", []string{"b64", "u32"}, []uint64{1, 63}, 1 << 63},
		{"and.b32", "b32", rep("b32", 2), []uint64{0xF0F0, 0xFF00}, 0xF000},
		{"or.b32", "b32", rep("b32", 2), []uint64{0xF0F0, 0xFF00}, 0xFFF0},
		{"xor.b32", "b32", rep("b32", 2), []uint64{0xF0F0, 0xFF00}, 0x0FF0},
		{"not.b32", "b32", []string{"b32"}, []uint64{0xF0F0}, 0xFFFF0F0F},
		{"cnot.b32", "b32", []string{"b32"}, []uint64{0}, 1},
		{"cnot.b32", "b32", []string{"b32"}, []uint64{7}, 0},
		{"popc.b32", "u32", []string{"b32"}, []uint64{0xF0F0}, 8},
		{"popc.b64", "u32", []string{"b64"}, []uint64{math.MaxUint64}, 64},
		{"clz.b32", "u32", []string{"b32"}, []uint64{1}, 31},
		{"clz.b32", "u32", []string{"b32"}, []uint64{0}, 32},
		{"clz.b64", "u32", []string{"b64"}, []uint64{1 << 40}, 23},
		{"brev.b32", "b32", []string{"b32"}, []uint64{1}, 0x80000000},
		{"and.pred", "pred", rep("pred", 2), []uint64{1, 0}, 0},
		{"or.pred", "pred", rep("pred", 2), []uint64{1, 0}, 1},
		{"xor.pred", "pred", rep("pred", 2), []uint64{1, 1}, 0},
		{"not.pred", "pred", []string{"pred"}, []uint64{0}, 1},
		{"selp.s32", "s32", []string{"s32", "s32", "pred"}, []uint64{1, 2, 1}, 1},
		{"selp.s32", "s32", []string{"s32", "s32", "pred"}, []uint64{1, 2, 0}, 2},
		{"mov.b32", "b32", []string{"b32"}, []uint64{0xDEADBEEF}, 0xDEADBEEF},
	}
	runIntCases(t, cases)
}

func TestSetpInt(t *testing.T) {
	cases := []intCase{
		{"setp.lt.s32", "pred", rep("s32", 2), []uint64{u32(-1), 1}, 1},
		{"setp.lt.u32", "pred", rep("u32", 2), []uint64{0xFFFFFFFF, 1}, 0},
		{"setp.lo.u32", "pred", rep("u32", 2), []uint64{1, 0xFFFFFFFF}, 1},
		{"setp.hs.u32", "pred", rep("u32", 2), []uint64{5, 5}, 1},
		{"setp.hi.u64", "pred", rep("u64", 2), []uint64{1 << 63, 1}, 1},
		{"setp.ge.s64", "pred", rep("s64", 2), []uint64{1 << 63, 1}, 0}, // -2^63 < 1
		{"setp.ne.b16", "pred", rep("b16", 2), []uint64{1, 2}, 1},
		{"setp.le.s16", "pred", rep("s16", 2), []uint64{0x8000, 0}, 1},
		{"setp.lt.and.s32", "pred", []string{"s32", "s32", "pred"}, []uint64{1, 2, 0}, 0},
		{"setp.lt.or.s32", "pred", []string{"s32", "s32", "pred"}, []uint64{3, 2, 1}, 1},
		{"setp.lt.xor.s32", "pred", []string{"s32", "s32", "pred"}, []uint64{1, 2, 1}, 0},
	}
	runIntCases(t, cases)
}

// TestSetpPair: setp writes p and its complement q (each combined with
// the BoolOp operand); mov packs and unpacks vectors.
func TestSetpPairAndPack(t *testing.T) {
	src := ptxModule(`
	.reg .pred %p, %q, %c;
	.reg .b32 %a, %b, %r1, %r2, %w;
	.reg .b16 %h1, %h2;
	.reg .b64 %d;`, `
	mov.b32 %a, 1;
	mov.b32 %b, 2;
	setp.eq.u32 %c, %a, 1;
	setp.lt.and.u32 %p|%q, %b, %a, %c;
	selp.u32 %r1, 1, 0, %p;
	selp.u32 %r2, 1, 0, %q;
	st.global.u32 [%out], %r1;
	st.global.u32 [%out+4], %r2;
	mov.b16 %h1, 0x1234;
	mov.b16 %h2, 0xABCD;
	mov.b32 %w, {%h1, %h2};
	st.global.u32 [%out+8], %w;
	mov.b64 %d, {%a, %b};
	st.global.u64 [%out+16], %d;
	mov.b32 {%h2, %h1}, %w;
	st.global.u16 [%out+24], %h1;
	st.global.u16 [%out+26], %h2;`)
	out, err := runPTX(t, src, launch1D(1), Options{}, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{0x1_00000000, 0xABCD1234, 0x2_00000001, 0x1234ABCD}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("slot %d = %#x, want %#x", i, out[i], want[i])
		}
	}
}
