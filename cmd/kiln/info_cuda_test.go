//go:build !nocuda

package main

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/driver/cuda"
)

// TestCUDAInfo checks the CUDA section names cuBLAS's path, or the reason
// it is not used, as driver/cuda reports them.
func TestCUDAInfo(t *testing.T) {
	var b strings.Builder
	writeCUDAInfo(&b)
	out := b.String()
	if !strings.HasPrefix(out, "cuda: ") {
		t.Errorf("no cuda line:\n%s", out)
	}
	path, err := cuda.CublasLibrary()
	want := "cublas: " + path + "\n"
	if err != nil {
		want = "cublas: not used: " + err.Error() + "\n"
	}
	if !strings.HasSuffix(out, want) {
		t.Errorf("info ends %q, want %q", out, want)
	}
}
