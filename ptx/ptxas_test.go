package ptx

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// ptxasPath finds ptxas: KILN_PTXAS, then PATH, then where
// driver/cuda/setup-ci.sh extracts Debian's nvidia-cuda-toolkit.
func ptxasPath() string {
	if p := os.Getenv("KILN_PTXAS"); p != "" {
		return p
	}
	if p, err := exec.LookPath("ptxas"); err == nil {
		return p
	}
	const deb = "/opt/cuda-deb/usr/bin/ptxas"
	if _, err := os.Stat(deb); err == nil {
		return deb
	}
	return ""
}

// TestPTXASRequired fails in CI (KILN_TEST_REQUIRE_PTXAS=1) when ptxas is
// missing, so the assembly tests cannot pass by skipping.
func TestPTXASRequired(t *testing.T) {
	p := ptxasPath()
	if p == "" {
		if os.Getenv("KILN_TEST_REQUIRE_PTXAS") == "1" {
			t.Fatal("KILN_TEST_REQUIRE_PTXAS=1 but no ptxas found (KILN_PTXAS, PATH, /opt/cuda-deb/usr/bin/ptxas); run driver/cuda/setup-ci.sh")
		}
		t.Skip("no ptxas: run driver/cuda/setup-ci.sh or set KILN_PTXAS")
	}
	out, err := exec.Command(p, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", p, err, out)
	}
	t.Logf("ptxas: %s", strings.TrimSpace(string(out)))
}

// assemble runs ptxas on a module of the kernels for each architecture
// and fails the test with the offending entry named.
func assemble(t *testing.T, ks []*Kernel) {
	t.Helper()
	p := ptxasPath()
	if p == "" {
		t.Skip("no ptxas: run driver/cuda/setup-ci.sh or set KILN_PTXAS")
	}
	src := Module(ks...)
	dir := t.TempDir()
	file := filepath.Join(dir, "k.ptx")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// Both architectures at once: ptxas is single-threaded.
	errs := make(chan string, 2)
	for _, arch := range []string{"sm_80", "sm_90"} {
		go func() {
			cmd := exec.Command(p, "-arch="+arch, "-o", filepath.Join(dir, arch+".cubin"), file)
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs <- fmt.Sprintf("ptxas -arch=%s failed on %d kernels: %v\n%s", arch, len(ks), err, annotate(src, string(out)))
				return
			}
			errs <- ""
		}()
	}
	for range 2 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

var lineRe = regexp.MustCompile(`line (\d+)`)

// annotate adds, to each ptxas message, the entry and text of its line.
func annotate(src, msgs string) string {
	lines := strings.Split(src, "\n")
	var b strings.Builder
	for _, m := range strings.Split(strings.TrimSpace(msgs), "\n") {
		b.WriteString(m)
		if g := lineRe.FindStringSubmatch(m); g != nil {
			n, _ := strconv.Atoi(g[1])
			entry := "?"
			for i := min(n, len(lines)) - 1; i >= 0; i-- {
				if strings.HasPrefix(lines[i], ".visible .entry ") {
					entry = strings.TrimSuffix(strings.TrimPrefix(lines[i], ".visible .entry "), "(")
					break
				}
			}
			if n >= 1 && n <= len(lines) {
				fmt.Fprintf(&b, "   [entry %s: %q]", entry, strings.TrimSpace(lines[n-1]))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
