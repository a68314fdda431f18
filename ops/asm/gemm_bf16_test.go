package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bf16Specials are float32 inputs at the conversion's edges: ties to even
// both ways, values that round up a binade or to Inf, denormals (read as
// zero), signed zeros, infinities and NaNs with payloads only in the
// bits rounding drops.
var bf16Specials = []uint32{
	0x3f808000, 0x3f818000, 0x3f80ffff, 0x3f807fff, 0x3fffffff, 0x7f7fffff, 0xff7fffff, 0x7f7f8000,
	0x00000001, 0x807fffff, 0x00400000, 0x00800000, 0x80800000, 0x00000000, 0x80000000,
	0x7f800000, 0xff800000, 0x7f800001, 0x7fc00000, 0xffbfffff, 0x7f80ffff,
}

// TestBF16Convert checks each conversion kernel against bf16FromF32
// element by element (NaN for NaN), over row counts and strides, random
// values mixed with the specials; and bf16FromF32 itself on the specials.
func TestBF16Convert(t *testing.T) {
	want := map[uint32]uint16{
		0x3f808000: 0x3f80, 0x3f818000: 0x3f82, 0x3f80ffff: 0x3f81, 0x3fffffff: 0x4000, 0x7f7fffff: 0x7f80,
		0x00000001: 0x0000, 0x807fffff: 0x8000, 0x00800000: 0x0080, 0x7f800000: 0x7f80, 0x7f800001: 0x7fc0,
	}
	for in, w := range want {
		if got := bf16FromF32(math.Float32frombits(in)); got != w {
			t.Errorf("bf16FromF32(%#08x) = %#04x, want %#04x", in, got, w)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, v := range GemmBF16Variants() {
		for _, rows := range []int{1, 2, 5} {
			for _, n32 := range []int{1, 2, 3, 7} {
				lds, ldd := 32*n32+r.IntN(5), 16*n32+r.IntN(3)
				src := make([]float32, (rows-1)*lds+32*n32+3)
				for i := range src {
					src[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
					if r.IntN(4) == 0 {
						src[i] = math.Float32frombits(bf16Specials[r.IntN(len(bf16Specials))])
					}
				}
				keep := append([]float32(nil), src...)
				dst := make([]uint32, (rows-1)*ldd+16*n32+5)
				for i := range dst {
					dst[i] = 0xdeadbeef
				}
				v.convert(rows, n32, &src[1], lds, &dst[2], ldd)
				for i := range dst {
					rr, q := (i-2)/ldd, (i-2)%ldd
					if i < 2 || rr >= rows || q >= 16*n32 {
						if dst[i] != 0xdeadbeef {
							t.Fatalf("%s: word %d outside the rows was written", v.Name, i)
						}
						continue
					}
					for h := range 2 {
						x := src[1+rr*lds+2*q+h]
						got, exp := uint16(dst[i]>>(16*h)), bf16FromF32(x)
						if got != exp && !(isBF16NaN(got) && isBF16NaN(exp)) {
							t.Fatalf("%s: %#08x → %#04x, want %#04x", v.Name, math.Float32bits(x), got, exp)
						}
					}
				}
				for i := range src {
					if math.Float32bits(src[i]) != math.Float32bits(keep[i]) {
						t.Fatalf("%s: source changed at %d", v.Name, i)
					}
				}
			}
		}
	}
}

func isBF16NaN(x uint16) bool { return x&0x7fff > 0x7f80 }

// randBF16Pair returns two random bf16 values spread over a few binades
// (an occasional zero) as one word.
func randBF16Pair(r *rand.Rand) uint32 {
	h := func() uint32 {
		if r.IntN(16) == 0 {
			return 0
		}
		return uint32(bf16FromF32(float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(12)-6)))))
	}
	return h() | h()<<16
}

// TestBF16PanelKernel compares the assembly micro-kernel with its twin
// over tile counts, depths (the unrolled loop and its tail), strides and
// both flags. The twin follows Intel's description of VDPBF16PS (two
// roundings a lane per instruction); the test allows a few float32 ulps
// of the magnitude Σ|a·b| per lane rather than requiring the same bits,
// so a CPU that rounds the pair's sum once still passes, and reports
// how many lanes were bit-identical.
func TestBF16PanelKernel(t *testing.T) {
	if len(GemmBF16Variants()) < 2 {
		t.Skip("no AVX512_BF16 here (or KILN_CPU rules it out)")
	}
	asmV := GemmBF16Variants()[0]
	r := rand.New(rand.NewPCG(3, 4))
	same, total := 0, 0
	for _, tiles := range []int{1, 2, 3} {
		for _, kp := range []int{1, 2, 3, 4, 5, 7, 8, 9, 31, 64, 256} {
			for _, flags := range []uint{0, 1, 2, 3} {
				lda, ldc := kp+r.IntN(4), 16+r.IntN(5)
				a := make([]uint32, (12*tiles-1)*lda+kp)
				for i := range a {
					a[i] = randBF16Pair(r)
				}
				b := make([]uint32, 16*kp)
				for i := range b {
					b[i] = randBF16Pair(r)
				}
				c0 := make([]float32, (12*tiles-1)*ldc+16+8)
				for i := range c0 {
					c0[i] = gemmRand(r)
				}
				cg, ca := append([]float32(nil), c0...), append([]float32(nil), c0...)
				gemmPanelBF16Go(tiles, kp, &a[0], lda, &b[0], &cg[4], ldc, flags)
				asmV.panel(tiles, kp, &a[0], lda, &b[0], &ca[4], ldc, flags)
				for i := range c0 {
					rr, j := (i-4)/ldc, (i-4)%ldc
					if i < 4 || rr >= 12*tiles || j >= 16 {
						if math.Float32bits(ca[i]) != math.Float32bits(c0[i]) {
							t.Fatalf("asm wrote C outside the tiles at %d", i)
						}
						continue
					}
					var mag float64
					for q := range kp {
						w, x := a[rr*lda+q], b[q*16+j]
						mag += math.Abs(float64(bf16Widen(uint16(w))*bf16Widen(uint16(x)))) +
							math.Abs(float64(bf16Widen(uint16(w>>16))*bf16Widen(uint16(x>>16))))
					}
					if flags&1 != 0 {
						mag += math.Abs(float64(c0[i]))
					}
					total++
					if math.Float32bits(ca[i]) == math.Float32bits(cg[i]) {
						same++
					}
					if !close64(float64(ca[i]), float64(cg[i]), mag, 4*float64(kp+2)*0x1p-24) {
						t.Fatalf("tiles %d kp %d flags %d: C[%d,%d] asm %v, twin %v (magnitude %v)", tiles, kp, flags, rr, j, ca[i], cg[i], mag)
					}
				}
			}
		}
	}
	t.Logf("%d of %d lanes bit-identical to the twin", same, total)
}

// TestBF16GemvKernel compares the one-row assembly kernel with its twin
// (groups of eight panels and the single-panel tail, both flags, panel
// strides past a panel's length), as TestBF16PanelKernel does the tile
// kernel.
func TestBF16GemvKernel(t *testing.T) {
	if len(GemmBF16Variants()) < 2 {
		t.Skip("no AVX512_BF16 here (or KILN_CPU rules it out)")
	}
	asmV := GemmBF16Variants()[0]
	r := rand.New(rand.NewPCG(5, 6))
	same, total := 0, 0
	for _, panels := range []int{1, 2, 7, 8, 9, 16, 17, 23} {
		for _, kp := range []int{1, 2, 5, 64, 256} {
			for _, flags := range []uint{0, 1} {
				pstride := 16*kp + 16*r.IntN(3)
				a := make([]uint32, kp)
				for i := range a {
					a[i] = randBF16Pair(r)
				}
				b := make([]uint32, (panels-1)*pstride+16*kp)
				for i := range b {
					b[i] = randBF16Pair(r)
				}
				c0 := make([]float32, panels*16+8)
				for i := range c0 {
					c0[i] = gemmRand(r)
				}
				cg, ca := append([]float32(nil), c0...), append([]float32(nil), c0...)
				gemvBF16Go(kp, panels, &a[0], &b[0], pstride, &cg[4], flags)
				asmV.gemv(kp, panels, &a[0], &b[0], pstride, &ca[4], flags)
				for i := range c0 {
					if i < 4 || i >= 4+16*panels {
						if math.Float32bits(ca[i]) != math.Float32bits(c0[i]) {
							t.Fatalf("asm wrote C outside the panels at %d", i)
						}
						continue
					}
					p, j := (i-4)/16, (i-4)%16
					var mag float64
					for q := range kp {
						w, x := a[q], b[p*pstride+q*16+j]
						mag += math.Abs(float64(bf16Widen(uint16(w))*bf16Widen(uint16(x)))) +
							math.Abs(float64(bf16Widen(uint16(w>>16))*bf16Widen(uint16(x>>16))))
					}
					mag += math.Abs(float64(c0[i]))
					total++
					if math.Float32bits(ca[i]) == math.Float32bits(cg[i]) {
						same++
					}
					if !close64(float64(ca[i]), float64(cg[i]), mag, 4*float64(kp+2)*0x1p-24) {
						t.Fatalf("panels %d kp %d flags %d: C[%d] asm %v, twin %v", panels, kp, flags, i-4, ca[i], cg[i])
					}
				}
			}
		}
	}
	t.Logf("%d of %d lanes bit-identical to the twin", same, total)
}
