package sysmem

import "sync"

var (
	limit     int64
	source    string
	limitOnce sync.Once
)

// Limit is the memory available to the process in bytes and where the
// figure comes from ("MemTotal", "cgroup memory.max", ...); 0 and "" where
// this platform gives no figure.
func Limit() (int64, string) {
	limitOnce.Do(func() { limit, source = read() })
	return limit, source
}
