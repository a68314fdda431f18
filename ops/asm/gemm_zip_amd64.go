//go:build amd64 && !purego

package asm

// gemmZip6x16AVX2 is gemmPanel6x16AVX2 storing as ZipStore does
// (zip1Kernel): the same sums, each pair of rows interleaved by
// VUNPCKLPS/VUNPCKHPS and two VPERM2F128 per eight columns straight
// into its place in out. tiles >= 1, k >= 1, a = 6·k·tiles floats, b
// 16·k, offs 3·tiles offsets, bias 3·tiles values when
// flags&gemmZipBias; the Go caller checks that every pair's 32 outputs
// lie inside the output.
//
//go:noescape
func gemmZip6x16AVX2(tiles, k int, a, b, out *float32, offs *int, bias *float32, flags uint)
