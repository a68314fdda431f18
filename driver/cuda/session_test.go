package cuda_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/cuda"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func smallGraph() *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3)
	g.Output(g.Relu(g.Add(x, x)))
	return g
}

// TestHelperCompile is run by the tests below in a child process (the
// driver is opened once per process); it prints Compile's error.
func TestHelperCompile(t *testing.T) {
	if os.Getenv("KILN_CUDA_HELPER") != "1" {
		t.Skip("helper for TestNoLibrary")
	}
	_, err := kiln.NewSession(kiln.CUDA(0)).Compile(smallGraph())
	if err == nil {
		os.Stdout.WriteString("COMPILED\n")
		return
	}
	os.Stdout.WriteString("ERROR: " + err.Error() + "\n")
	if errors.Is(err, cuda.ErrNoDriver) {
		os.Stdout.WriteString("IS ErrNoDriver\n")
	}
}

// TestNoLibrary: with KILN_CUDA_LIB pointing nowhere, choosing the GPU is
// a clear error with a hint (no panic, no crash at import).
func TestNoLibrary(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCompile$", "-test.v")
	cmd.Env = append(os.Environ(), "KILN_CUDA_HELPER=1", "KILN_CUDA_LIB=/nonexistent/libcuda.so.1")
	out, err := cmd.CombinedOutput()
	s := string(out)
	if err != nil || strings.Contains(s, "panic") {
		t.Fatalf("child failed: %v\n%s", err, s)
	}
	want := []string{"ERROR: kiln: device cuda:0:", "/nonexistent/libcuda.so.1", "KILN_CUDA_LIB", "IS ErrNoDriver"}
	if strings.Contains(s, "not supported") { // platforms without a CUDA driver
		want = []string{"ERROR: kiln: device cuda:0:", "not supported"}
	}
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("child output lacks %q:\n%s", w, s)
		}
	}
}

// TestNoDevice: with the real libcuda installed but no GPU (Debian's
// libcuda1 on CI), cuInit's CUDA_ERROR_NO_DEVICE surfaces from Compile
// with the driver's own name and text. KILN_TEST_REQUIRE_LIBCUDA=1 (CI)
// turns a missing library into a failure instead of a skip.
func TestNoDevice(t *testing.T) {
	_, err := cuda.DriverVersion()
	switch {
	case errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cuda.ErrNotSupported):
		if os.Getenv("KILN_TEST_REQUIRE_LIBCUDA") == "1" {
			t.Fatalf("KILN_TEST_REQUIRE_LIBCUDA=1 but: %v (run driver/cuda/setup-ci.sh)", err)
		}
		t.Skipf("no CUDA driver library: %v", err)
	case err == nil:
		if n, _ := cuda.Count(); n > 0 {
			t.Skipf("this machine has %d GPU(s); the GPU tests cover it", n)
		}
	}
	_, cerr := kiln.NewSession(kiln.CUDA(0)).Compile(smallGraph())
	if cerr == nil {
		t.Fatal("compiled on a machine without a GPU")
	}
	for _, w := range []string{"kiln: device cuda:0", "CUDA_ERROR_NO_DEVICE", "(100)", "nvidia-smi"} {
		if !strings.Contains(cerr.Error(), w) {
			t.Errorf("error lacks %q: %v", w, cerr)
		}
	}
	if !errors.Is(cerr, cuda.ErrNoDevice) {
		t.Errorf("errors.Is(err, ErrNoDevice) is false for %v", cerr)
	}
	if d := cuda.Describe(); !strings.Contains(d, "CUDA_ERROR_NO_DEVICE") {
		t.Errorf("Describe() = %q", d)
	}
}
