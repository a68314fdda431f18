package asm

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestNeonWords checks the hand-encoded instructions of the arm64
// assembly: Go's assembler has no mnemonic for many NEON instructions, so
// the *_arm64.s files write them as `WORD $0x… // insn` with the
// instruction in GNU syntax beside it. The test builds this package for
// linux/arm64, disassembles its assembly objects with `go tool objdump
// -gnu` and requires every WORD's disassembly to read as its comment
// (case and whitespace aside). Words Go's disassembler cannot decode
// (SDOT and other post-Armv8.0 instructions) are checked with llvm-mc
// instead, in a subtest that skips where llvm-mc is missing. It runs on
// any host; only a missing go command skips it.
func TestNeonWords(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not on PATH")
	}
	files, err := filepath.Glob("*_arm64.s")
	if err != nil || len(files) == 0 {
		t.Fatalf("no *_arm64.s files here (%v)", err)
	}
	var words []neonWord
	for _, f := range files {
		words = append(words, readNeonWords(t, f)...)
	}
	if len(words) == 0 {
		t.Fatal("no WORD lines found: the check would be vacuous")
	}
	dis := disassembleArm64(t, gobin)
	var unknown []neonWord // words Go's disassembler does not decode
	for _, w := range words {
		got, ok := dis[w.word]
		switch {
		case !ok:
			t.Errorf("%s: WORD $%#08x is not in the arm64 objects (unused macro?)", w.pos, w.word)
		case w.insn == "":
			t.Errorf("%s: WORD $%#08x (%s) has no instruction comment", w.pos, w.word, got)
		case got == "":
			unknown = append(unknown, w)
		case normInsn(got) != normInsn(w.insn):
			t.Errorf("%s: WORD $%#08x disassembles as %q, comment says %q", w.pos, w.word, got, w.insn)
		}
	}
	t.Logf("%d WORDs in %d files checked by go tool objdump", len(words)-len(unknown), len(files))
	// Go's disassembler stops at Armv8.0 (no SDOT): LLVM's checks the rest.
	t.Run("llvm-mc", func(t *testing.T) {
		if len(unknown) == 0 {
			t.Skip("every WORD decoded by go tool objdump")
		}
		checkWordsLLVM(t, unknown)
	})
}

// checkWordsLLVM disassembles words with llvm-mc and requires each to
// read as its comment. Without llvm-mc it skips, unless
// KILN_TEST_REQUIRE_LLVM_MC=1 (CI) makes that a failure.
func checkWordsLLVM(t *testing.T, words []neonWord) {
	t.Helper()
	mc := ""
	for _, name := range []string{"llvm-mc", "llvm-mc-19", "llvm-mc-18", "llvm-mc-17", "llvm-mc-16", "llvm-mc-15", "llvm-mc-14"} {
		if p, err := exec.LookPath(name); err == nil {
			mc = p
			break
		}
	}
	if mc == "" {
		if os.Getenv("KILN_TEST_REQUIRE_LLVM_MC") == "1" {
			t.Fatalf("KILN_TEST_REQUIRE_LLVM_MC=1 but llvm-mc is not on PATH (install llvm); %d WORDs unchecked", len(words))
		}
		t.Skipf("llvm-mc not on PATH (llvm): %d WORDs that go tool objdump cannot decode are unchecked", len(words))
	}
	var in strings.Builder
	for _, w := range words {
		fmt.Fprintf(&in, "0x%02x 0x%02x 0x%02x 0x%02x\n", w.word&0xff, w.word>>8&0xff, w.word>>16&0xff, w.word>>24)
	}
	cmd := exec.Command(mc, "-disassemble", "-triple=aarch64", "-mattr=+v8.6a,+dotprod,+i8mm,+bf16,+fullfp16")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-mc: %v\n%s", err, out)
	}
	var got []string
	for l := range strings.Lines(string(out)) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, ".") {
			got = append(got, l)
		}
	}
	if len(got) != len(words) {
		t.Fatalf("llvm-mc gave %d lines for %d WORDs (an invalid encoding?):\n%s", len(got), len(words), out)
	}
	for i, w := range words {
		if normInsn(got[i]) != normInsn(w.insn) {
			t.Errorf("%s: WORD $%#08x disassembles (llvm-mc) as %q, comment says %q", w.pos, w.word, got[i], w.insn)
		}
	}
	t.Logf("%d WORDs checked by llvm-mc", len(words))
}

// neonWord is one WORD line: where it is, its value and the instruction
// its comment names.
type neonWord struct {
	pos  string
	word uint32
	insn string
}

var neonWordRE = regexp.MustCompile(`^\s*WORD\s+\$(\S+)(.*)$`)

// readNeonWords finds the WORD lines of one assembly file; the comment may
// be `// insn` or, inside a macro, `/* insn */`.
func readNeonWords(t *testing.T, path string) []neonWord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ws []neonWord
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		m := neonWordRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pos := path + ":" + strconv.Itoa(line)
		v, err := strconv.ParseUint(strings.TrimRight(m[1], ";"), 0, 32)
		if err != nil {
			t.Errorf("%s: WORD value %q: %v", pos, m[1], err)
			continue
		}
		rest := strings.TrimSpace(m[2])
		insn := ""
		if c, ok := strings.CutPrefix(rest, "//"); ok {
			insn = c
		} else if i := strings.Index(rest, "/*"); i >= 0 {
			insn, _, _ = strings.Cut(rest[i+2:], "*/")
		}
		ws = append(ws, neonWord{pos: pos, word: uint32(v), insn: strings.TrimSpace(insn)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ws
}

// objdumpLineRE matches one instruction of `go tool objdump -gnu`:
// position, address, the encoding, then Go syntax and `// gnu syntax`.
var objdumpLineRE = regexp.MustCompile(`^\s*\S+:\d+\s+0x[0-9a-f]+\s+([0-9a-f]{8})\s+(.*)$`)

// disassembleArm64 builds the package for linux/arm64 and returns the GNU
// disassembly of every word in its assembly objects ("" where the
// disassembler does not decode it).
func disassembleArm64(t *testing.T, gobin string) map[uint32]string {
	t.Helper()
	dir := t.TempDir()
	run := func(wd string, args ...string) []byte {
		cmd := exec.Command(gobin, args...)
		cmd.Dir = wd
		// GOFLAGS is cleared so that a -tags=purego from the caller
		// cannot leave the assembly out.
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "GOFLAGS=")
		out, err := cmd.Output()
		if err != nil {
			msg := ""
			if ee, ok := err.(*exec.ExitError); ok {
				msg = string(ee.Stderr)
			}
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
		return out
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "pkg.a")
	run(wd, "build", "-o", archive, ".")
	// objdump reads only the first object of an archive: unpack it and
	// read each assembly object (the Go object holds no WORDs). Member
	// names are cut to 16 bytes, so a long file's object has no ".o"
	// (row_resize_arm64): take every member but the export data and the
	// Go object.
	run(dir, "tool", "pack", "x", archive)
	objs, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	dis := map[uint32]string{}
	for _, o := range objs {
		if b := filepath.Base(o); b == "_go_.o" || b == "__.PKGDEF" || o == archive {
			continue
		}
		for l := range strings.Lines(string(run(dir, "tool", "objdump", "-gnu", o))) {
			m := objdumpLineRE.FindStringSubmatch(strings.TrimRight(l, "\n"))
			if m == nil {
				continue
			}
			v, err := strconv.ParseUint(m[1], 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			gnu := ""
			if _, after, ok := strings.Cut(m[2], "// "); ok {
				gnu, _, _ = strings.Cut(after, "\t") // relocations follow a tab
			}
			dis[uint32(v)] = strings.TrimSpace(gnu)
		}
	}
	return dis
}

// normInsn compares instructions case- and whitespace-blind.
func normInsn(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), "")
}
