package sysmem

import "golang.org/x/sys/unix"

// read asks the kernel for hw.memsize.
func read() (int64, string) {
	v, err := unix.SysctlUint64("hw.memsize")
	if err != nil || v == 0 || v > 1<<62 {
		return 0, ""
	}
	return int64(v), "hw.memsize"
}
