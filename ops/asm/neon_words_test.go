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

// TestNeonWords checks the hand-encoded instructions of the arm64
// assembly: Go's assembler has no mnemonic for many NEON instructions, so
// the *_arm64.s files write them as `WORD $0x… // insn` with the
// instruction in GNU syntax beside it. The test builds this package for
// linux/arm64, disassembles its assembly objects with `go tool objdump
// -gnu` and requires every WORD's disassembly to read as its comment
// (case and whitespace aside). It runs on any host; only a missing go
// command skips it.
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
	for _, w := range words {
		got, ok := dis[w.word]
		switch {
		case !ok:
			t.Errorf("%s: WORD $%#08x is not in the arm64 objects (unused macro?)", w.pos, w.word)
		case w.insn == "":
			t.Errorf("%s: WORD $%#08x (%s) has no instruction comment", w.pos, w.word, got)
		case normInsn(got) != normInsn(w.insn):
			t.Errorf("%s: WORD $%#08x disassembles as %q, comment says %q", w.pos, w.word, got, w.insn)
		}
	}
	t.Logf("%d WORDs in %d files checked", len(words), len(files))
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
