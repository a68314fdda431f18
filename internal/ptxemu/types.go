package ptxemu

// typ is a PTX scalar type as an instruction names it.
type typ uint8

const (
	tNone typ = iota
	tB8
	tB16
	tB32
	tB64
	tU8
	tU16
	tU32
	tU64
	tS8
	tS16
	tS32
	tS64
	tF16
	tF16x2
	tBF16
	tBF16x2
	tTF32
	tF32
	tF64
	tPred
)

var typNames = map[string]typ{
	"b8": tB8, "b16": tB16, "b32": tB32, "b64": tB64,
	"u8": tU8, "u16": tU16, "u32": tU32, "u64": tU64,
	"s8": tS8, "s16": tS16, "s32": tS32, "s64": tS64,
	"f16": tF16, "f16x2": tF16x2, "bf16": tBF16, "bf16x2": tBF16x2, "tf32": tTF32,
	"f32": tF32, "f64": tF64, "pred": tPred,
}

func (t typ) String() string {
	for n, v := range typNames {
		if v == t {
			return "." + n
		}
	}
	return ".?"
}

// bits is the type's width; a predicate is one bit.
func (t typ) bits() int {
	switch t {
	case tB8, tU8, tS8:
		return 8
	case tB16, tU16, tS16, tF16, tBF16:
		return 16
	case tB32, tU32, tS32, tF32, tF16x2, tBF16x2, tTF32:
		return 32
	case tB64, tU64, tS64, tF64:
		return 64
	case tPred:
		return 1
	}
	return 0
}

func (t typ) bytes() int { return max(t.bits()/8, 1) }

func (t typ) signed() bool { return t == tS8 || t == tS16 || t == tS32 || t == tS64 }

func (t typ) isInt() bool { return t >= tB8 && t <= tS64 }

func (t typ) isFloat() bool { return t == tF16 || t == tBF16 || t == tF32 || t == tF64 }

// mask keeps the low n bits.
func mask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(n) - 1
}

// sext sign-extends the low n bits of v to 64.
func sext(v uint64, n int) int64 {
	if n >= 64 {
		return int64(v)
	}
	s := uint(64 - n)
	return int64(v<<s) >> s
}

// extend widens the low bits of v (of type t) to 64, by sign for signed
// types and by zero otherwise, as ld and cvt do into wider registers.
func extend(v uint64, t typ) uint64 {
	n := t.bits()
	if t.signed() {
		return uint64(sext(v, n))
	}
	return v & mask(n)
}
