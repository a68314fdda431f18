package ops

// SetBenchParEnv sets the Env the benchmarks run on threads workers
// (benchParEnv), for package ops_test, which can import exec's pool.
func SetBenchParEnv(f func(threads int) Env) { benchParEnv = f }
