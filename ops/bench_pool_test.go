package ops_test

import (
	"sync"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/ops"
)

// The benchmarks' parallel Env is the runtime's: one persistent
// exec.Pool per worker count, a Runner per Env (as each program has).
func init() {
	var mu sync.Mutex
	pools := map[int]*exec.Pool{}
	ops.SetBenchParEnv(func(threads int) ops.Env {
		mu.Lock()
		defer mu.Unlock()
		if pools[threads] == nil {
			pools[threads] = exec.NewPool(threads)
		}
		return ops.Env{Threads: threads, For: pools[threads].NewRunner().For}
	})
}
