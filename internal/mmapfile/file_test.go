package mmapfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestOpenReadsContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.bin")
	want := []byte("hello, mapped world")
	if err := os.WriteFile(p, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(f.Bytes()) != string(want) {
		t.Fatalf("got %q, want %q", f.Bytes(), want)
	}
	if runtime.GOOS == "linux" && !f.Mapped() {
		t.Error("expected a mapping on linux")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f.Bytes() != nil || f.Close() != nil {
		t.Error("Close must drop the view and be idempotent")
	}
}

func TestEmptyAndSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "empty")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil || len(f.Bytes()) != 0 {
		t.Fatalf("empty file: %v, %d bytes", err, len(f.Bytes()))
	}
	if _, err := Open(dir); err == nil {
		t.Error("a directory must be refused")
	}
	if _, err := Open(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file must be an error")
	}
}

func TestOpenInConfines(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "model")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "w.bin"), []byte("abcd"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(sub)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	f, err := OpenIn(root, "w.bin")
	if err != nil || string(f.Bytes()) != "abcd" {
		t.Fatalf("inside: %v %q", err, f.Bytes())
	}
	f.Close()
	for _, name := range []string{"../secret", filepath.Join(dir, "secret")} {
		if _, err := OpenIn(root, name); err == nil {
			t.Errorf("%s escaped the root", name)
		}
	}
	if runtime.GOOS != "windows" {
		if err := os.Symlink(filepath.Join(dir, "secret"), filepath.Join(sub, "link")); err == nil {
			if _, err := OpenIn(root, "link"); err == nil {
				t.Error("a symlink escaped the root")
			}
		}
	}
}
