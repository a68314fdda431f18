package asm

// prefetchForWrite asks, through pw (a variant's prefetchWriteAVX512, or
// nil: nothing), for the cache lines of s in the state a write needs, so
// that a kernel about to write s does not wait for each line in turn
// where another core holds it (an arena's buffer that a step split
// otherwise wrote last).
func prefetchForWrite(pw func(p *float32, lines int), s []float32) {
	if pw == nil || len(s) == 0 {
		return
	}
	pw(&s[0], (len(s)+15)/16)
}
