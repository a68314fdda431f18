//go:build amd64 && !purego

package asm

// prefetchWriteAVX512 asks for the lines cache lines from p on (lines >=
// 1) in the state a write needs (PREFETCHW): a hint, which neither reads
// nor writes them nor faults. Callers pass ranges of their own slices
// (prefetchForWrite).
//
//go:noescape
func prefetchWriteAVX512(p *float32, lines int)

// prefetchWriteStridedAVX512 is prefetchWriteAVX512 for the lines holding
// p[i·stride], i < n (n >= 1): a column of a row-major matrix.
//
//go:noescape
func prefetchWriteStridedAVX512(p *float32, stride, n int)
