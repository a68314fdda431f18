package sysmem

import (
	"runtime"
	"testing"
)

// TestLimit: on Linux and macOS the figure is a plausible byte count with
// its source named; elsewhere it may be absent, but never negative.
func TestLimit(t *testing.T) {
	v, src := Limit()
	t.Logf("%d bytes (%s)", v, src)
	switch {
	case v < 0:
		t.Fatalf("negative limit %d", v)
	case runtime.GOOS == "linux" || runtime.GOOS == "darwin":
		if v < 64<<20 || src == "" {
			t.Fatalf("limit %d from %q: want at least 64 MiB and a source", v, src)
		}
	}
}
