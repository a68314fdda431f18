package exec

import "testing"

// TestThreadsFromEnv: KILN_THREADS values that are not a usable count are
// errors (DefaultPool reports them), not silently the default.
func TestThreadsFromEnv(t *testing.T) {
	for s, want := range map[string]int{"": 0, "1": 1, "8": 8, "1024": 1024} {
		if n, err := threadsFromEnv(s); err != nil || n != want {
			t.Errorf("%q: %d, %v; want %d", s, n, err, want)
		}
	}
	for _, s := range []string{"two", "0", "-3", "1025", "5000000", "4 "} {
		if _, err := threadsFromEnv(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
	if w := NewPool(5000000).Workers(); w != MaxWorkers {
		t.Errorf("NewPool(5000000) has %d workers, want %d", w, MaxWorkers)
	}
}
