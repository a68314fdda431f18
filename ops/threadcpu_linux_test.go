//go:build linux

package ops

import (
	"syscall"
	"unsafe"
)

// threadCPU is the CPU time the calling thread has used, in seconds
// (CLOCK_THREAD_CPUTIME_ID), and true; pin the goroutine to its thread
// (runtime.LockOSThread) around the span measured.
func threadCPU() (float64, bool) {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return float64(ts.Sec) + float64(ts.Nsec)*1e-9, true
}
