package mslhost

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Kernel is one MSL kernel function and its dispatch geometry, as
// package msl writes it (msl.Kernel: buffer i is argument i).
type Kernel struct {
	Name    string
	Source  string
	Buffers []string // the element type of each buffer argument, in order
	Groups  [3]int   // threadgroups per grid
	Threads [3]int   // threads per threadgroup
}

// Arg is a buffer argument: a byte offset into one of a program's
// regions.
type Arg struct{ Region, Offset int }

// Step is one dispatch of a kernel over its whole grid.
type Step struct {
	Kernel *Kernel
	Args   []Arg
}

// Program is memory, as regions of bytes, and the dispatches that run
// over it in order.
type Program struct {
	Regions [][]byte
	Steps   []Step
}

// Compiler is the C++ compiler Run uses: $CXX, else g++, else c++.
func Compiler() (string, error) {
	if cxx := os.Getenv("CXX"); cxx != "" {
		return osexec.LookPath(cxx)
	}
	for _, name := range []string{"g++", "c++"} {
		if p, err := osexec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("mslhost: no C++ compiler (set CXX, or install g++)")
}

// TB is the part of testing.TB that NeedCompiler uses (so that this
// package does not import testing).
type TB interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// NeedCompiler stops a test that runs kernels on the host when there is
// no C++ compiler: it fails under KILN_TEST_REQUIRE_CXX=1 (as CI sets:
// there the host runs must happen), else it skips, saying why, so that
// `go test ./...` passes on a machine with Go alone.
func NeedCompiler(t TB) {
	t.Helper()
	if _, err := Compiler(); err != nil {
		if CompilerRequired() {
			t.Fatalf("%v, and KILN_TEST_REQUIRE_CXX=1", err)
		}
		t.Skipf("%v: the kernels' host runs are skipped (KILN_TEST_REQUIRE_CXX=1 makes this a failure)", err)
	}
}

// CompilerRequired reports whether KILN_TEST_REQUIRE_CXX=1 asks tests to
// fail, not skip, without a C++ compiler.
func CompilerRequired() bool { return os.Getenv("KILN_TEST_REQUIRE_CXX") == "1" }

// Run compiles every program's kernels, after header (msl.Header: what
// follows its "using namespace metal;" is kept), into one host binary,
// runs each program's steps in order, and writes the regions' final
// bytes back into the programs.
func Run(header string, progs []*Program) error {
	cxx, err := Compiler()
	if err != nil {
		return err
	}
	const open = "using namespace metal;"
	i := strings.Index(header, open)
	if i < 0 {
		return fmt.Errorf("mslhost: the header has no %q", open)
	}
	var src strings.Builder
	src.WriteString(shim)
	src.WriteString(header[i+len(open):])
	var body strings.Builder
	var in bytes.Buffer
	total := 0
	for pi, p := range progs {
		if err := writeProgram(&src, &body, pi, p); err != nil {
			return err
		}
		for _, r := range p.Regions {
			in.Write(r)
			total += len(r)
		}
	}
	src.WriteString("int main() {\n")
	src.WriteString(body.String())
	src.WriteString("    return 0;\n}\n")
	dir, err := os.MkdirTemp("", "mslhost")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file, bin := filepath.Join(dir, "k.cpp"), filepath.Join(dir, "k")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		return err
	}
	if msg, err := osexec.Command(cxx, "-std=c++17", "-O1", "-pthread", "-fno-strict-aliasing", "-Wno-attributes", "-o", bin, file).CombinedOutput(); err != nil {
		return fmt.Errorf("mslhost: %s: %v\n%s", filepath.Base(cxx), err, clip(msg))
	}
	cmd := osexec.Command(bin)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = &in, &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("mslhost: running the kernels: %v\n%s", err, clip(stderr.Bytes()))
	}
	if len(out) != total {
		return fmt.Errorf("mslhost: the kernels wrote %d bytes, want %d", len(out), total)
	}
	for _, p := range progs {
		for _, r := range p.Regions {
			out = out[copy(r, out):]
		}
	}
	return nil
}

// threadgroupDecl is a threadgroup array declared in a kernel's body.
var threadgroupDecl = regexp.MustCompile(`(?m)^(\s+)threadgroup `)

// attr is a thread position attribute of a kernel's signature.
var attr = regexp.MustCompile(`\[\[([a-z_]+)\]\]`)

// writeProgram adds program pi's kernels to src, in a namespace of
// their own, and its run to main's body.
func writeProgram(src, body *strings.Builder, pi int, p *Program) error {
	fmt.Fprintf(src, "namespace p%d {\n", pi)
	seen := map[string]*Kernel{}
	for _, s := range p.Steps {
		k := s.Kernel
		if prev, ok := seen[k.Name]; ok {
			if prev != k {
				return fmt.Errorf("mslhost: program %d has two kernels named %s", pi, k.Name)
			}
			continue
		}
		seen[k.Name] = k
		src.WriteString(threadgroupDecl.ReplaceAllString(k.Source, "${1}static "))
		src.WriteString("\n")
	}
	src.WriteString("}\n")
	fmt.Fprintf(body, "    { // program %d\n", pi)
	for ri := range p.Regions {
		fmt.Fprintf(body, "    unsigned char* r%d = kilnRegion(%d);\n", ri, len(p.Regions[ri]))
	}
	for si, s := range p.Steps {
		call, err := stepCall(pi, p, s)
		if err != nil {
			return fmt.Errorf("mslhost: program %d, step %d (%s): %w", pi, si, s.Kernel.Name, err)
		}
		body.WriteString(call)
	}
	for ri := range p.Regions {
		fmt.Fprintf(body, "    fwrite(r%d, 1, %d, stdout); free(r%d);\n", ri, len(p.Regions[ri]), ri)
	}
	body.WriteString("    }\n")
	return nil
}

// stepCall writes the C++ that dispatches one step: a loop over the
// grid for a kernel that takes only thread_position_in_grid, else a
// launch of every threadgroup's threads.
func stepCall(pi int, p *Program, s Step) (string, error) {
	k := s.Kernel
	if len(s.Args) != len(k.Buffers) {
		return "", fmt.Errorf("%d arguments for %d buffers", len(s.Args), len(k.Buffers))
	}
	args := make([]string, 0, len(s.Args)+4)
	for i, a := range s.Args {
		if a.Region < 0 || a.Region >= len(p.Regions) || a.Offset < 0 || a.Offset > len(p.Regions[a.Region]) {
			return "", fmt.Errorf("buffer %d at region %d offset %d is outside the program's memory", i, a.Region, a.Offset)
		}
		args = append(args, fmt.Sprintf("(%s*)(r%d + %d)", k.Buffers[i], a.Region, a.Offset))
	}
	g, t := k.Groups, k.Threads
	nt := t[0] * t[1] * t[2]
	if nt <= 0 || nt > 1024 || g[0]*g[1]*g[2] <= 0 {
		return "", fmt.Errorf("dispatch of %v groups of %v threads", g, t)
	}
	sig := k.Source
	// The signature runs from "kernel void" (program-scope constant
	// tables, as a Resize's, may come before it) to the body's brace.
	if i := strings.Index(sig, "kernel void "); i >= 0 {
		sig = sig[i:]
	}
	if i := strings.Index(sig, "{"); i >= 0 {
		sig = sig[:i]
	}
	linear := g[1] == 1 && g[2] == 1 && t[1] == 1 && t[2] == 1
	grouped := false
	for _, m := range attr.FindAllStringSubmatch(sig, -1) {
		switch m[1] {
		case "thread_position_in_grid":
			if !linear {
				return "", fmt.Errorf("thread_position_in_grid of a %v×%v dispatch (one dimension only)", g, t)
			}
			args = append(args, fmt.Sprintf("grp.x * %du + t", nt))
		case "threadgroup_position_in_grid":
			args, grouped = append(args, "grp"), true
		case "thread_index_in_threadgroup":
			args, grouped = append(args, "t"), true
		case "thread_position_in_threadgroup":
			args, grouped = append(args, fmt.Sprintf("uint2{t %% %du, t / %du}", t[0], t[0])), true
		case "thread_index_in_simdgroup":
			args, grouped = append(args, "t % 32u"), true
		case "simdgroup_index_in_threadgroup":
			args, grouped = append(args, "t / 32u"), true
		default:
			return "", fmt.Errorf("attribute [[%s]] is not emulated", m[1])
		}
	}
	call := fmt.Sprintf("p%d::%s(%s)", pi, k.Name, strings.Join(args, ", "))
	if !grouped {
		return fmt.Sprintf("    for (uint gx = 0; gx < %du; gx++) { uint3 grp{gx, 0, 0}; for (uint t = 0; t < %du; t++) { %s; } }\n", g[0], nt, call), nil
	}
	return fmt.Sprintf("    kilnLaunch(%du, %du, %du, %du, [&](uint3 grp, uint t) { %s; });\n", g[0], g[1], g[2], nt, call), nil
}

// clip shortens compiler or program output for an error.
func clip(b []byte) string {
	const n = 4000
	if len(b) > n {
		return string(b[:n]) + "\n…"
	}
	return string(b)
}
