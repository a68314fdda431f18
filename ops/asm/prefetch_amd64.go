//go:build amd64 && !purego

package asm

// prefetchWriteAVX512 asks for the lines cache lines from p on (lines >=
// 1) in the state a write needs (PREFETCHW): a hint, which neither reads
// nor writes them nor faults. Callers pass ranges of their own slices
// (prefetchForWrite).
//
//go:noescape
func prefetchWriteAVX512(p *float32, lines int)
