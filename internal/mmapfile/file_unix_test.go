//go:build unix

package mmapfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFIFORefused: a FIFO is refused before it is opened; opening one for
// reading would block until a writer came, which may be never.
func TestFIFORefused(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for name, open := range map[string]func() (*File, error){
		"Open":   func() (*File, error) { return Open(p) },
		"OpenIn": func() (*File, error) { return OpenIn(root, "pipe") },
	} {
		done := make(chan error, 1)
		go func() { _, err := open(); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s of a FIFO: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s of a FIFO blocked", name)
		}
	}
}

// TestCopyOutTruncated: a mapped file truncated after it was mapped
// faults on access (SIGBUS); CopyOut turns that into an error, and
// copies intact bytes as they are.
func TestCopyOutTruncated(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.bin")
	data := make([]byte, 3*os.Getpagesize())
	for i := range data {
		data[i] = byte(i)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !f.Mapped() {
		t.Skip("not mapped here")
	}
	got, err := CopyOut(nil, f.Bytes())
	if err != nil || string(got) != string(data) {
		t.Fatalf("intact copy: %v", err)
	}
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := CopyOut(got, f.Bytes()); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("copy of a truncated mapping: %v", err)
	}
}
