package asm

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBF16Encodings checks the hand-encoded instructions of the amd64
// assembly: Go's assembler has no mnemonic for VDPBF16PS or
// VCVTNE2PS2BF16 (gemm_bf16_amd64.s), for AVX-VNNI's VEX form of
// VPDPBUSD (gemm_i8_amd64.s) nor for PREFETCHW (prefetch_amd64.s, conv_phase_amd64.s), so the files spell each as a run of `BYTE
// $0x..;` directives with its GNU (AT&T) disassembly in a comment. The test
// builds this package's test binary for linux/amd64 (`go test -c`),
// disassembles the functions that use them with GNU objdump, and
// requires every BYTE run to appear there as one instruction that reads
// as its comment (case and whitespace aside). It runs on any host with
// the go command and a GNU objdump that knows x86-64 (binutils >= 2.32);
// without them it skips.
func TestBF16Encodings(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not on PATH")
	}
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		if os.Getenv("KILN_TEST_REQUIRE_OBJDUMP") == "1" { // CI: the check must run
			t.Fatal("KILN_TEST_REQUIRE_OBJDUMP=1 but GNU objdump is not on PATH (install binutils)")
		}
		t.Skip("GNU objdump not on PATH (binutils)")
	}
	var runs []byteRun
	for _, f := range []string{"gemm_bf16_amd64.s", "gemm_i8_amd64.s", "prefetch_amd64.s", "conv_phase_amd64.s"} {
		runs = append(runs, readByteRuns(t, f)...)
	}
	if len(runs) == 0 {
		t.Fatal("no BYTE runs found: the check would be vacuous")
	}
	bin := filepath.Join(t.TempDir(), "asm.test")
	build := exec.Command(gobin, "test", "-c", "-o", bin, ".")
	// GOFLAGS is cleared so that a -tags=purego from the caller cannot
	// leave the assembly out.
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	dis := map[string]string{} // hex bytes → disassembly
	for _, fn := range []string{"gemmPanelBF16AVX512", "gemvBF16AVX512", "bf16ConvertRowsAVX512", "gemmPanelU8S8AVXVNNI", "prefetchWriteAVX512", "convPhase12x32AVX512"} {
		// The assembly itself is the ABI0 symbol (the plain name is the
		// ABIInternal wrapper that calls it).
		sym := "github.com/kilnml/kiln/ops/asm." + fn + ".abi0"
		out, err := exec.Command(objdump, "-d", "--insn-width=16", "--disassemble="+sym, bin).Output()
		if err != nil {
			t.Skipf("objdump cannot disassemble the amd64 binary (%v)", err)
		}
		n := 0
		for l := range strings.Lines(string(out)) {
			m := objdumpX86RE.FindStringSubmatch(strings.TrimRight(l, "\n"))
			if m == nil {
				continue
			}
			dis[strings.Join(strings.Fields(m[1]), "")] = strings.TrimSpace(m[2])
			n++
		}
		if n == 0 {
			t.Fatalf("objdump found no instructions in %s", sym)
		}
	}
	for _, r := range runs {
		got, ok := dis[r.hex]
		switch {
		case !ok:
			t.Errorf("%s: BYTEs %s are not one instruction of the disassembly (unused macro, or a wrong length)", r.pos, r.hex)
		case r.insn == "":
			t.Errorf("%s: BYTEs %s (%s) have no instruction comment", r.pos, r.hex, got)
		case normInsn(got) != normInsn(r.insn):
			t.Errorf("%s: BYTEs %s disassemble as %q, comment says %q", r.pos, r.hex, got, r.insn)
		}
	}
	t.Logf("%d encodings checked", len(runs))
}

// objdumpX86RE matches one instruction of `objdump -d --insn-width=16`:
// address, the bytes, the instruction.
var objdumpX86RE = regexp.MustCompile(`^\s*[0-9a-f]+:\t((?:[0-9a-f]{2} )+)\s*\t(.*)$`)

// byteRun is one line's run of BYTE directives.
type byteRun struct {
	pos  string
	hex  string // the bytes as lower-case hex, no spaces
	insn string
}

var byteRunRE = regexp.MustCompile(`^\s*((?:BYTE\s+\$0x[0-9a-fA-F]{1,2}\s*;?\s*)+)(.*)$`)

// readByteRuns finds the lines of an assembly file made of BYTE
// directives and takes the instruction from the `/* insn */` (or
// `// insn`) comment that follows them.
func readByteRuns(t *testing.T, path string) []byteRun {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rs []byteRun
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		m := byteRunRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var hex strings.Builder
		for _, d := range regexp.MustCompile(`\$0x([0-9a-fA-F]{1,2})`).FindAllStringSubmatch(m[1], -1) {
			v, _ := strconv.ParseUint(d[1], 16, 8)
			hex.WriteString(strconv.FormatUint(v|0x100, 16)[1:])
		}
		rest := strings.TrimSpace(m[2])
		insn := ""
		if c, ok := strings.CutPrefix(rest, "//"); ok {
			insn = c
		} else if i := strings.Index(rest, "/*"); i >= 0 {
			insn, _, _ = strings.Cut(rest[i+2:], "*/")
		}
		rs = append(rs, byteRun{pos: path + ":" + strconv.Itoa(line), hex: hex.String(), insn: strings.TrimSpace(insn)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rs
}
