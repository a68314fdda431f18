package asm

import "unsafe"

// The one-row 3-wide, stride-2 max kernel, which Pool2D no longer calls:
// the many-row kernels of pool_max3s2.go replaced it. It stays while
// convKernels.maxRow3S2 (conv_pack.go) and its registration
// (conv_amd64.go) name it; with those lines this file, its assembly and
// its test go.

// maxRow3S2Kernel computes n outputs of one output row from three input
// rows:
//
//	for i < n: y[i] = max(r[2i], r[2i+1], r[2i+2] for r in x0, x1, x2)
//
// Maxima are exact as Go's builtin max (NaN wins, +0 beats -0), so a
// window clipped to fewer rows passes a row twice. n >= 1; y holds n
// floats, each row 2n+1. The caller checks all of it.
type maxRow3S2Kernel func(y, x0, x1, x2 *float32, n int)

// maxRow3S2Go is the twin of the assembly kernels.
func maxRow3S2Go(y, x0, x1, x2 *float32, n int) {
	at := func(p *float32, i int) float32 { return *(*float32)(unsafe.Add(unsafe.Pointer(p), 4*i)) }
	for i := range n {
		m := at(x0, 2*i)
		for _, r := range [3]*float32{x0, x1, x2} {
			m = max(m, at(r, 2*i), at(r, 2*i+1), at(r, 2*i+2))
		}
		*(*float32)(unsafe.Add(unsafe.Pointer(y), 4*i)) = m
	}
}
