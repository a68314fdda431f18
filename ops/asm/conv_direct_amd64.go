//go:build amd64 && !purego

package asm

// convDirect6x16AVX2 and convDirect5x16AVX2 are the AVX2
// convDirectKernels (conv_direct.go) for panels of 6 and 5 rows: twelve
// (ten) accumulators; the tap's two vectors load straight from the
// padded input, through its offset, where the packing path copies them
// into a panel first.
//
//go:noescape
func convDirect6x16AVX2(k int, a, x *float32, off *int, bias, c *float32, ldc int, flags uint)

//go:noescape
func convDirect5x16AVX2(k int, a, x *float32, off *int, bias, c *float32, ldc int, flags uint)

// convDirectAVX2 dispatches on the panel's rows (6 or 5: see
// directPanels).
func convDirectAVX2(rows, k int, a, x *float32, off *int, bias, c *float32, ldc int, flags uint) {
	if rows == 6 {
		convDirect6x16AVX2(k, a, x, off, bias, c, ldc, flags)
		return
	}
	convDirect5x16AVX2(k, a, x, off, bias, c, ldc, flags)
}
