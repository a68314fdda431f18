// Command _bf16gen prints the EVEX encodings of the AVX512_BF16
// instructions that gemm_bf16_amd64.s spells as BYTE directives (Go's
// assembler has no mnemonic for them), each with its GNU (AT&T)
// disassembly as the comment that TestBF16Encodings checks against
// objdump. Run it from ops/asm (go run ./_bf16gen) and paste its macros
// over the generated block of gemm_bf16_amd64.s. It is not part of the
// build (the leading underscore keeps the go tool out).
package main

import (
	"fmt"
	"strings"
)

// Register numbers as the encoding sees them.
var gpNames = [16]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}

const (
	rBX, rSI, rR10, rR11, rR14 = 3, 6, 10, 11, 14
)

// evex returns the four-byte EVEX prefix: map 0F38, W0, 512-bit.
// reg is ModRM.reg's register (5 bits), vvvv the first source (5 bits),
// x and b the high bits the r/m operand needs (X: index bit 3, or bit 4
// of a vector r/m; B: base or r/m bit 3), pp the implied prefix, bcst the
// EVEX.b bit.
func evex(reg, vvvv int, x, b bool, pp int, bcst bool) []byte {
	p0 := byte(0x02) // mm = 0F38
	if reg&8 == 0 {
		p0 |= 0x80 // R̄
	}
	if !x {
		p0 |= 0x40 // X̄
	}
	if !b {
		p0 |= 0x20 // B̄
	}
	if reg&16 == 0 {
		p0 |= 0x10 // R̄'
	}
	p1 := byte((^vvvv&15)<<3 | 0x04 | pp) // W0
	p2 := byte(0x40)                      // L'L = 512
	if bcst {
		p2 |= 0x10
	}
	if vvvv&16 == 0 {
		p2 |= 0x08 // V̄'
	}
	return []byte{0x62, p0, p1, p2}
}

// dpbf16Mem encodes vdpbf16ps disp(base[,index,scale]){1to16}, zmm src1, zmm dst.
// index < 0: none. disp must be a multiple of 4 within disp8·4.
func dpbf16Mem(dst, src1, base, index, scale, disp int) ([]byte, string) {
	if disp%4 != 0 || disp/4 < -128 || disp/4 > 127 || base&7 == 4 || base&7 == 5 {
		panic("unsupported operand")
	}
	x := index >= 0 && index&8 != 0
	enc := evex(dst, src1, x, base&8 != 0, 2 /* F3 */, true)
	enc = append(enc, 0x52)
	mod := 0
	if disp != 0 {
		mod = 1
	}
	var mem string
	if index < 0 {
		enc = append(enc, byte(mod<<6|(dst&7)<<3|base&7))
		mem = fmt.Sprintf("(%%%s)", gpNames[base])
	} else {
		ss := map[int]int{1: 0, 2: 1, 4: 2, 8: 3}[scale]
		enc = append(enc, byte(mod<<6|(dst&7)<<3|4), byte(ss<<6|(index&7)<<3|base&7))
		mem = fmt.Sprintf("(%%%s,%%%s,%d)", gpNames[base], gpNames[index], scale)
	}
	if disp != 0 {
		enc = append(enc, byte(int8(disp/4))) // disp8·N, N = 4 for a 32-bit broadcast
		mem = fmt.Sprintf("%#x", disp) + mem
	}
	return enc, fmt.Sprintf("vdpbf16ps %s{1to16},%%zmm%d,%%zmm%d", mem, src1, dst)
}

// dpbf16Reg encodes vdpbf16ps zmm src2, zmm src1, zmm dst (AT&T order).
func dpbf16Reg(dst, src1, src2 int) ([]byte, string) {
	enc := evex(dst, src1, src2&16 != 0, src2&8 != 0, 2 /* F3 */, false)
	enc = append(enc, 0x52, byte(3<<6|(dst&7)<<3|src2&7))
	return enc, fmt.Sprintf("vdpbf16ps %%zmm%d,%%zmm%d,%%zmm%d", src2, src1, dst)
}

// cvtne2Reg encodes vcvtne2ps2bf16 zmm src2, zmm src1, zmm dst (AT&T
// order): dst's low 16 words from src2, high 16 from src1.
func cvtne2Reg(dst, src1, src2 int) ([]byte, string) {
	enc := evex(dst, src1, src2&16 != 0, src2&8 != 0, 3 /* F2 */, false)
	enc = append(enc, 0x72, byte(3<<6|(dst&7)<<3|src2&7))
	return enc, fmt.Sprintf("vcvtne2ps2bf16 %%zmm%d,%%zmm%d,%%zmm%d", src2, src1, dst)
}

func bytesLine(enc []byte, insn string) string {
	var s []string
	for _, b := range enc {
		s = append(s, fmt.Sprintf("BYTE $0x%02x", b))
	}
	return "\t" + strings.Join(s, "; ") + " /* " + insn + " */"
}

func main() {
	// DSTEP_u_B: step u of the unrolled pair loop with B in zmm B (0-3):
	// twelve rows, A rows 0-2 at PA (SI), 3-5 at PA3 (R10), 6-8 at PA6
	// (R11), 9-11 at PA9 (R14), stride LDA (BX); accumulators Z16-Z27.
	bases := [4]int{rSI, rR10, rR11, rR14}
	for u := range 4 {
		fmt.Printf("#define DPBF16_STEP%d \\\n", u)
		for r := range 12 {
			base, k := bases[r/3], r%3
			index, scale := -1, 1
			if k > 0 {
				index, scale = rBX, k
			}
			enc, insn := dpbf16Mem(16+r, u, base, index, scale, 4*u)
			sep := "; \\"
			if r == 11 {
				sep = ""
			}
			fmt.Println(bytesLine(enc, insn) + sep)
		}
		fmt.Println()
	}
	// GEMV_DP(u): panel u of eight (B in Z(u)) times the broadcast A
	// pair in Z8, into accumulator Z(16+u).
	fmt.Printf("#define GEMV_DP8 \\\n")
	for u := range 8 {
		enc, insn := dpbf16Reg(16+u, u, 8)
		sep := "; \\"
		if u == 7 {
			sep = ""
		}
		fmt.Println(bytesLine(enc, insn) + sep)
	}
	enc, insn := dpbf16Reg(16, 0, 8)
	fmt.Printf("\n#define GEMV_DP1 \\\n%s\n\n", bytesLine(enc, insn))
	enc, insn = cvtne2Reg(2, 1, 0)
	fmt.Printf("#define CVTNE2_Z0_Z1_Z2 \\\n%s\n", bytesLine(enc, insn))
}
