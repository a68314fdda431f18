//go:build amd64 && !purego

package asm

// gemmPanel12x32AVX512 is gemmPanel12x16AVX512 over two column panels
// at once, b0 for C's columns 0-15 and b1 for 16-31. For t < tiles:
//
//	for i < 12, j < 32:
//		s := sum over p < k of a[t*12*k+p*12+i] * (b0[p*16+j] for j < 16, b1[p*16+j-16] after)   (FMAs, p ascending)
//		c[(12*t+i)*ldc+j] = s    (flags&1 == 0)   or   += s   (flags&1 == 1)
//
// each sum formed exactly as the 16-column kernel forms it, so the bits
// are those of two calls of it. Why: the 16-column kernel issues one
// load per FMA (its A values come by embedded broadcast), which holds
// Zen 5 to about 92% of its FMA peak; here each broadcast A value feeds
// two FMAs and the kernel runs at the peak (an L1-resident tile: 209
// against 229 GFLOP/s). tiles >= 1, k >= 1, a = tiles*12*k floats, b0
// and b1 k*16 floats each, c reaching (12*tiles-1)*ldc+32 floats; the
// Go caller checks all of it. With gemmPrefetchNext its first tile
// fetches the next pair of B panels, b0 + 2·(b1 - b0) and b1 + 2·(b1 -
// b0) (the GEMM's packed B, panels back to back); it acts on
// gemmPrefetchFar, gemmRelu and gemmClamp as gemmPanel12x16AVX512 does.
//
//go:noescape
func gemmPanel12x32AVX512(tiles, k int, a, b0, b1, c *float32, ldc int, flags uint)

// gemmEdge32AVX512 computes rows 0-7 (rows = 8) or 0-3 (rows = 4) of
// one gemmPanel12x32AVX512 tile from the same 12-row A panel, with the
// same bits, and writes only those rows of C:
//
//	for i < rows, j < 32: s := sum over p < k of a[p*12+i] * (b0[p*16+j] or b1[p*16+j-16])
//	c[i*ldc+j] = s  or  c[i*ldc+j] += s   (flags as the 12-row kernel)
//
// with k >= 1, a = 12*k floats, b0 and b1 16*k each and c reaching
// (rows-1)*ldc+32. It takes a two-panel step's edge rows (M mod 12 = 4
// or 8: ResNet's 64, 128, 256 and 512 channels), which the 16-column
// edge kernels run at one load per FMA, four rows at half the FMA rate.
//
//go:noescape
func gemmEdge32AVX512(rows, k int, a, b0, b1, c *float32, ldc int, flags uint)

// gemmZip12x32AVX512 is gemmPanel12x32AVX512 storing as ZipStore does
// (zip2Kernel): the same sums, each pair of rows interleaved by two
// VPERMT2PS per sixteen columns straight into its place in out, so a
// transposed convolution that tiles its output (U-Net's 2×2, stride 2)
// writes no col matrix to scatter again. tiles >= 1, k >= 1, a = 12·k·
// tiles floats, b0 and b1 16·k each, offs 6·tiles offsets, bias 6·tiles
// values when flags&gemmZipBias; the Go caller checks that every pair's
// 64 outputs lie inside the output.
//
//go:noescape
func gemmZip12x32AVX512(tiles, k int, a, b0, b1, out *float32, offs *int, d1 int, bias *float32, flags uint)

// gemmZipEdge32AVX512 is gemmEdge32AVX512 storing as gemmZip12x32AVX512
// does (zipEdge2Kernel): rows 0-7 (rows = 8) or 0-3 (rows = 4) of one
// tile, pairs 0-3 or 0-1, the 4- or 8-row edge of M mod 12 (a decoder's
// 64·4 rows), which would otherwise go through scratch.
//
//go:noescape
func gemmZipEdge32AVX512(rows, k int, a, b0, b1, out *float32, offs *int, d1 int, bias *float32, flags uint)
