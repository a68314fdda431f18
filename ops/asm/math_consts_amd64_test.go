//go:build !purego

package asm

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// ewConstSlots lists the 32-byte constants of math_amd64.s in table
// order, from the Go constants of the reference loops, so that a test can
// check the assembly uses the same bits (and KILN_EW_GEN=1 prints the
// table's #defines and DATA lines).
var ewConstSlots = []struct {
	name string
	bits uint32
}{
	{"ONE", f32b(1)}, {"HALF", f32b(0.5)}, {"SIGN", 0x80000000}, {"ABS", 0x7FFFFFFF},
	{"EXPMIN", f32b(ewExpMin)}, {"EXPMAX", f32b(ewExpMax)}, {"LOG2E", f32b(ewLog2e)},
	{"LN2HI", f32b(ewLn2Hi)}, {"LN2LO", f32b(ewLn2Lo)},
	{"EXPC0", f32b(ewExpC0)}, {"EXPC1", f32b(ewExpC1)}, {"EXPC2", f32b(ewExpC2)},
	{"EXPC3", f32b(ewExpC3)}, {"EXPC4", f32b(ewExpC4)}, {"B127", 127},
	{"LOGTINY", f32b(ewLogTiny)}, {"LOGPRE", f32b(ewLogPrescale)}, {"M23", f32b(-23)},
	{"SQRTHALF", ewLogSqrtHalf},
	{"LOGC0", f32b(ewLogC0)}, {"LOGC1", f32b(ewLogC1)}, {"LOGC2", f32b(ewLogC2)},
	{"LOGC3", f32b(ewLogC3)}, {"LOGC4", f32b(ewLogC4)}, {"LOGC5", f32b(ewLogC5)},
	{"LOGC6", f32b(ewLogC6)}, {"LOGC7", f32b(ewLogC7)},
	{"NINF", 0xFF800000}, {"QNAN", 0x7FC00000},
	{"TANHSMALL", f32b(ewTanhSmall)}, {"TANHC0", f32b(ewTanhC0)}, {"TANHC1", f32b(ewTanhC1)},
	{"TANHC2", f32b(ewTanhC2)}, {"TANHC3", f32b(ewTanhC3)}, {"TANHC4", f32b(ewTanhC4)},
	{"SILUMIN", f32b(ewSiluMin)}, {"GTMAX", f32b(ewGeluTanhMax)}, {"GTMIN", f32b(-ewGeluTanhMax)},
	{"GTK", f32b(ewGTK)}, {"GTKLO", f32b(ewGTKLo)}, {"GT2C", f32b(ewGT2C)}, {"GT2CLO", f32b(ewGT2CLo)},
	{"ERFSMALL", f32b(ewErfSmall)}, {"ERFMAX", f32b(ewErfMax)}, {"ERFT0", f32b(ewErfT0)},
	{"ERFC0M1", f32b(ewErfC0m1)}, {"ERFC1", f32b(ewErfC1)}, {"ERFC2", f32b(ewErfC2)},
	{"ERFC3", f32b(ewErfC3)}, {"ERFC4", f32b(ewErfC4)}, {"ERFC5", f32b(ewErfC5)},
	{"ERFK0", f32b(ewErfK0)}, {"ERFK1", f32b(ewErfK1)}, {"ERFK2", f32b(ewErfK2)},
	{"ERFK3", f32b(ewErfK3)}, {"ERFK4", f32b(ewErfK4)}, {"ERFK5", f32b(ewErfK5)},
	{"ERFK6", f32b(ewErfK6)},
	{"GELUSMALL", f32b(ewGeluSmall)}, {"GELUMAX", f32b(ewGeluMax)}, {"GELUT0", f32b(ewGeluT0)},
	{"GELUP0", f32b(ewGeluP0)}, {"GELUP1", f32b(ewGeluP1)}, {"GELUP2", f32b(ewGeluP2)},
	{"GELUP3", f32b(ewGeluP3)}, {"GELUP4", f32b(ewGeluP4)},
	{"GELUG0", f32b(ewGeluG0)}, {"GELUG1", f32b(ewGeluG1)}, {"GELUG2", f32b(ewGeluG2)},
	{"GELUG3", f32b(ewGeluG3)}, {"GELUG4", f32b(ewGeluG4)}, {"GELUG5", f32b(ewGeluG5)},
	{"GELUG6", f32b(ewGeluG6)}, {"GELUG7", f32b(ewGeluG7)}, {"GELUG8", f32b(ewGeluG8)},
	{"QUARTER", f32b(0.25)}, {"MHALF", f32b(-0.5)}, {"PINF", 0x7F800000}, {"FOUR", f32b(4)},
}

func f32b(f float32) uint32 { return math.Float32bits(f) }

func TestEwConstTable(t *testing.T) {
	if os.Getenv("KILN_EW_GEN") != "" {
		var defs, data strings.Builder
		for i, c := range ewConstSlots {
			fmt.Fprintf(&defs, "#define C_%s %d\n", c.name, 32*i)
			fmt.Fprintf(&data, "SPLAT(C_%s, $0x%08x)\n", c.name, c.bits)
		}
		fmt.Printf("%s\n%s#define EW_CONST_BYTES %d\n", defs.String(), data.String(), 32*len(ewConstSlots))
	}
	tab := ewConstTable()
	if len(tab) != 8*len(ewConstSlots) {
		t.Fatalf("assembly table has %d words, want %d", len(tab), 8*len(ewConstSlots))
	}
	for i, c := range ewConstSlots {
		for j := range 8 {
			if got := tab[8*i+j]; got != c.bits {
				t.Errorf("C_%s word %d = %#08x, want %#08x", c.name, j, got, c.bits)
			}
		}
	}
}
