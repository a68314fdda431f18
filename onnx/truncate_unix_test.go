//go:build unix

package onnx

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kilnml/kiln"
)

// TestSetParamsTruncatedExternal: an external-data file truncated after
// Load (its mapping now faults) gives SetParams an error, not SIGBUS.
func TestSetParamsTruncatedExternal(t *testing.T) {
	dir := copyDir(t, filepath.Join("testdata", "special", "external"))
	m, err := Load(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if err := os.Truncate(filepath.Join(dir, "weights.bin"), 0); err != nil {
		t.Fatal(err)
	}
	if err := m.SetParams(cg); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("SetParams after truncation: %v", err)
	}
}

// TestFIFOModelAndExternal: a FIFO as the model or as an external-data
// file is refused at once (opening one would block until a writer came).
func TestFIFOModelAndExternal(t *testing.T) {
	dir := copyDir(t, filepath.Join("testdata", "special", "external"))
	ext := filepath.Join(dir, "weights.bin")
	if err := os.Remove(ext); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "model.onnx")
	for _, p := range []string{ext, fifo} {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	for _, p := range []string{filepath.Join(dir, "model.onnx"), fifo} {
		done := make(chan error, 1)
		go func() { _, err := Load(p); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Load(%s): %v", p, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Load(%s) blocked on a FIFO", p)
		}
	}
}
