//go:build amd64 && !purego

package asm

import "testing"

// TestEwConstTable512 checks the AVX-512 kernels' constant table
// (math512_amd64.s, one word per constant) against the Go constants:
// ewConstSlots in order, then the constants only AVX-512 uses.
func TestEwConstTable512(t *testing.T) {
	extra := []struct {
		name string
		bits uint32
	}{
		// VFIXUPIMMPS responses of log by input class, one nibble per
		// token (QNaN, SNaN, ±0, +1, -Inf, +Inf, <0, >0): x, x, -Inf,
		// the result, NaN, x, NaN, the result.
		{"LOGFIX", 0x1 | 0x1<<4 | 0x4<<8 | 0x0<<12 | 0x3<<16 | 0x1<<20 | 0x3<<24 | 0x0<<28},
		// 2·float32(√½): the twin's m = x/2^k lies in [float32(√½), this/2).
		{"LOGM2", ewLogSqrtHalf + 1<<23},
		// VFIXUPIMMPS responses of the x·gate(x) activations: NaN for
		// -Inf (token 4), the result for every other class.
		{"NINFNAN", 0x3 << 16},
	}
	tab := ewConstTable512()
	if len(tab) != len(ewConstSlots)+len(extra) {
		t.Fatalf("assembly table has %d words, want %d", len(tab), len(ewConstSlots)+len(extra))
	}
	for i, c := range ewConstSlots {
		if tab[i] != c.bits {
			t.Errorf("C_%s = %#08x, want %#08x", c.name, tab[i], c.bits)
		}
	}
	for i, c := range extra {
		if got := tab[len(ewConstSlots)+i]; got != c.bits {
			t.Errorf("C_%s = %#08x, want %#08x", c.name, got, c.bits)
		}
	}
}
