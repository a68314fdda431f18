package asm

import "unsafe"

// prefetchForWrite asks, through pw (a variant's prefetchWriteAVX512, or
// nil: nothing), for the cache lines of s in the state a write needs, so
// that a kernel about to write s does not wait for each line in turn
// where another core holds it (an arena's buffer that a step split
// otherwise wrote last): every line from the one holding s's first
// element to the one holding its last, however s sits in them.
func prefetchForWrite(pw func(p *float32, lines int), s []float32) {
	if pw == nil || len(s) == 0 {
		return
	}
	pw(&s[0], prefetchLines(uintptr(unsafe.Pointer(&s[0])), len(s)))
}

// prefetchLines is the number of 64-byte lines that n floats from
// address p touch.
func prefetchLines(p uintptr, n int) int {
	first := int(p % 64)
	return (first + 4*n + 63) / 64
}
