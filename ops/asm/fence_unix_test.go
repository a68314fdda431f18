//go:build unix

package asm

import (
	"syscall"
	"testing"
	"unsafe"
)

// fencedFloats returns n floats between two inaccessible pages, touching
// the first one (atStart) or the last, so that a kernel reading a float
// before or past them faults, and the func that unmaps them.
func fencedFloats(t *testing.T, n int, atStart bool) ([]float32, func()) {
	page := syscall.Getpagesize()
	body := (4*n + page - 1) / page * page
	mem, err := syscall.Mmap(-1, 0, body+2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	if err := syscall.Mprotect(mem[page+body:], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	first := page + body - 4*n
	if atStart {
		first = page
	}
	floats := unsafe.Slice((*float32)(unsafe.Pointer(&mem[first])), n)
	return floats, func() { syscall.Munmap(mem) }
}
