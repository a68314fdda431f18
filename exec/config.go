package exec

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
)

// Knobs read from the environment once:
//
//	KILN_THREADS  workers in the default pool (default GOMAXPROCS)
//	KILN_KERNELS  "reference" forces the reference kernels everywhere
var (
	defaultPool     *Pool
	defaultPoolOnce sync.Once
)

// DefaultPool is the process-wide pool, sized by KILN_THREADS (a value
// that is not a count from 1 to MaxWorkers is reported on stderr and
// the default used).
func DefaultPool() *Pool {
	defaultPoolOnce.Do(func() {
		n, err := threadsFromEnv(os.Getenv("KILN_THREADS"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "kiln: %v; using %d threads\n", err, runtime.GOMAXPROCS(0))
		}
		defaultPool = NewPool(n)
	})
	return defaultPool
}

// threadsFromEnv parses KILN_THREADS: "" is 0 (the default), else a
// count from 1 to MaxWorkers.
func threadsFromEnv(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxWorkers {
		return 0, fmt.Errorf("KILN_THREADS=%q is not a thread count from 1 to %d", s, MaxWorkers)
	}
	return n, nil
}

// referenceOnly reports whether KILN_KERNELS=reference is set.
func referenceOnly() bool { return os.Getenv("KILN_KERNELS") == "reference" }
