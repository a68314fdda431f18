package sysmem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// read takes the smaller of /proc/meminfo's MemTotal and the cgroup
// limit (v2 memory.max, else v1 memory.limit_in_bytes) when one is set.
func read() (int64, string) {
	total, src := memTotal(), "MemTotal"
	for _, c := range []struct{ path, name string }{
		{"/sys/fs/cgroup/memory.max", "cgroup memory.max"},
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "cgroup memory.limit_in_bytes"},
	} {
		if v, ok := readBytes(c.path); ok && v > 0 && (total == 0 || v < total) {
			return v, c.name
		}
	}
	if total == 0 {
		return 0, ""
	}
	return total, src
}

// memTotal is /proc/meminfo's "MemTotal: N kB" in bytes, 0 if unreadable.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil && kb > 0 {
				return kb << 10
			}
		}
	}
	return 0
}

// readBytes reads a cgroup limit file: a byte count, or "max" (none).
func readBytes(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil
}
