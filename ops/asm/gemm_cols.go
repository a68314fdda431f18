package asm

import "unsafe"

// colsKernel computes the first colsMax columns of one MR-row tile of
// depth k from packed panels: A, MR values a step (rows r < MR), and B,
// NR = 16 values a step, of which it reads the first colsMax:
//
//	c[j·16 + r] = Σ_{s<k} a[s·MR + r]·b[s·16 + j]   for r < MR, j < colsMax
//
// c, colsMax·16 floats, is scratch that the caller merges into its tile
// (lanes r ≥ MR are left undefined). It stands in for the micro-kernel
// where a tile has at most colsMax columns, as the last output position
// of a 7×7 plane (49 = 3·16 + 1) has: the micro-kernel spends MR
// multiply-adds a step on its sixteen columns whatever their number,
// this one colsMax, one per column on a vector of the tile's rows.
//
// With four multiply-adds a step for MR weights, a pass of these tiles is
// bound by reading A where the weights are cold (DenseNet-121's 1×1 and
// 3×3 convs over 2×2 planes, 128-576 KiB of weights each, leave the caches
// between runs): the assembly kernels prefetch A a few KiB ahead
// (BenchmarkConvColdWeights: 768→128 at 2×2 cold 43-52 → 16-18 µs).
type colsKernel func(k int, a, b, c *float32)

// colsMax is the columns a colsKernel computes.
const colsMax = 4

// colsPanelsKernel is colsKernel for several MR-row panels at once, the
// panels astride floats apart (as a depth block of packed weights lays
// them out): panel p's column j goes to c[(p·colsMax + j)·16 + r]. One
// panel's sums form a chain of k multiply-adds a column, each waiting
// for the last: a colsKernel runs at one step per multiply-add latency
// whatever its columns, and several panels' chains fill the pipes
// (ResNet's and MobileNetV2's 1×1 and 3×3 convs over 7×7 planes, whose
// 49th position is a tile of one column: 12% of a 960 → 320 step's time
// in gemmCols12AVX512 before). Every sum is the colsKernel's, bit for
// bit.
type colsPanelsKernel func(k int, a *float32, astride int, b, c *float32)

// colsPanelsMax is the most panels a colsPanelsKernel computes, and
// convEdgeTileFloats makes room for their sums.
const colsPanelsMax = 8

// convEdgeTileFloats is the floats of a conv worker's tile scratch: an
// edge micro-tile of variant v, or colsPanelsMax panels' columns.
func convEdgeTileFloats(v *GemmVariant) int { return max(v.mr*v.nr, colsPanelsMax*colsMax*16) }

// gemmColsGo returns the pure-Go colsKernel for MR = mr, each sum formed
// in step order as gemmKernelRowsx16Go forms it.
func gemmColsGo(mr int) colsKernel {
	return func(k int, a, b, c *float32) {
		cs := unsafe.Slice(c, colsMax*16)
		if k == 0 {
			clear(cs)
			return
		}
		as := unsafe.Slice(a, k*mr)
		bs := unsafe.Slice(b, (k-1)*16+colsMax)
		for j := range colsMax {
			for r := range mr {
				var s float32
				for p := range k {
					s += as[p*mr+r] * bs[p*16+j]
				}
				cs[j*16+r] = s
			}
		}
	}
}
