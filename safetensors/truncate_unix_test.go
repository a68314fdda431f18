//go:build unix

package safetensors

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
)

// TestSetParamsTruncatedFile: a file truncated after Open (its mapping
// now faults) gives SetParams an error, not SIGBUS.
func TestSetParamsTruncatedFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "mlp.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "mlp.safetensors")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cg, err := kiln.NewSession(kiln.CPU).Compile(mlpGraph(false))
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.SetParams(cg); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("SetParams after truncation: %v", err)
	}
}
