//go:build unix

package npy

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadFileFIFO: a FIFO is refused at once, not read until a writer
// closes it (which may be never).
func TestReadFileFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.npy")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadFile(p); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("ReadFile of a FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile blocked on a FIFO")
	}
}
