package exec

import (
	"os"
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

// DefaultPool is the process-wide pool, sized by KILN_THREADS.
func DefaultPool() *Pool {
	defaultPoolOnce.Do(func() {
		n, _ := strconv.Atoi(os.Getenv("KILN_THREADS"))
		defaultPool = NewPool(n)
	})
	return defaultPool
}

// referenceOnly reports whether KILN_KERNELS=reference is set.
func referenceOnly() bool { return os.Getenv("KILN_KERNELS") == "reference" }
