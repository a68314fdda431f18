package asm

import (
	"math"

	"github.com/kilnml/kiln/ops/cpuid"
)

// microKernel computes one MR×NR tile of C from a packed A panel (k steps
// of MR values) and a packed B panel (k steps of NR values):
//
//	for i < MR, j < NR: t[i][j] = sum over p < k of a[p*MR+i] * b[p*NR+j]
//	c[i*ldc+j] = t[i][j]            (flags&gemmAccumulate == 0)
//	c[i*ldc+j] += t[i][j]           (flags&gemmAccumulate != 0)
//
// k >= 1; a holds k*MR floats, b k*NR, c reaches (MR-1)*ldc+NR. The caller
// checks all of it.
type microKernel func(k int, a, b, c *float32, ldc int, flags uint)

// rowAKernel is a microKernel that reads A in place, MR rows lda floats
// apart (step s of row i at a[i*lda+s]) rather than from a packed panel,
// forming each sum exactly as the packed kernel does. a reaches
// (MR-1)*lda+k floats.
type rowAKernel func(k int, a *float32, lda int, b, c *float32, ldc int, flags uint)

// fewRowsKernel computes, for 1 <= rows <= fewRowsMax and k >= 1, C
// [rows×64] (+)= A [rows×k] · B: A read in place (row r's step p at byte
// offset r·rs + p·ps from a), B fewRowsPanels packed NR-column panels of
// k steps back to back; the sums start at zero and go over p in order,
// then add the old C with gemmAccumulate (the other kernels' FMAs in the
// same order: the same bits). Other flags are ignored.
type fewRowsKernel func(rows, k int, a *float32, rs, ps int, b, c *float32, ldc int, flags uint)

// panelKernel runs a microKernel over tiles full tiles down one B panel:
// tile t reads the A panel MR·k floats on from the last and writes C rows
// MR·t on; only the first tile may act on gemmPrefetchNext. Same bits as
// tiles calls of the micro-kernel.
type panelKernel func(tiles, k int, a, b, c *float32, ldc int, flags uint)

// panel2Kernel is panelKernel over two B panels at once: b0 for C's
// columns 0..NR-1, b1 for NR..2NR-1 (tiles of MR×2NR). Same bits as two
// panelKernel calls.
type panel2Kernel func(tiles, k int, a, b0, b1, c *float32, ldc int, flags uint)

// edge2Kernel computes rows 0..rows-1 (rows 4 or 8) of one panel2Kernel
// tile from the same MR-row A panel, with the same bits, writing only
// those rows of C.
type edge2Kernel func(rows, k int, a, b0, b1, c *float32, ldc int, flags uint)

// panelRowAKernel is panelKernel for a rowAKernel: tile t reads A rows
// MR·t on.
type panelRowAKernel func(tiles, k int, a *float32, lda int, b, c *float32, ldc int, flags uint)

// gemvKernel computes NR outputs of a one-row product:
//
//	for j < NR: t[j] = sum over p < k of x[p] * b[p*ldb+j]
//	y[j] = t[j]  or  y[j] += t[j]   (as microKernel's flags)
//
// k >= 1; x holds k floats, b reaches (k-1)*ldb+NR, y NR. A packed B
// panel is the case ldb = NR.
type gemvKernel func(k int, x, b *float32, ldb int, y *float32, flags uint)

// packKernel copies a 16-column strip of a row-major matrix into a packed
// panel:
//
//	for p < k, j < 16: dst[p*16+j] = src[p*ld+j]
//
// k >= 1; src reaches (k-1)*ld+16 floats, dst k*16.
type packKernel func(k int, src *float32, ld int, dst *float32)

// rowsKernel adds four scaled rows of a row-major B into y:
//
//	for j < n: y[j] = (y[j] or 0) + x[0]*b[j] + x[1]*b[ldb+j] + x[2]*b[2*ldb+j] + x[3]*b[3*ldb+j]
//
// (the old y is kept only with flags&gemmAccumulate). n >= 0; x holds 4
// floats, b reaches 3*ldb+n, y n.
type rowsKernel func(n int, x, b *float32, ldb int, y *float32, flags uint)

// pack4Kernel packs four adjacent 16-column strips of a row-major matrix:
//
//	for q < 4, p < k, j < 16: dst[q*pstride+p*16+j] = src[p*ld+16*q+j]
//
// k >= 1; src reaches (k-1)*ld+64 floats, pstride >= 16*k, dst reaches
// 3*pstride+16*k.
type pack4Kernel func(k int, src *float32, ld int, dst *float32, pstride int)

// packAKernel interleaves MR rows of a row-major A, eight steps at a
// time:
//
//	for p < 8*k8, r < MR: dst[p*MR+r] = src[r*lda+p]
//
// k8 >= 1; src reaches (MR-1)*lda+8*k8 floats, dst 8*MR*k8.
type packAKernel func(k8 int, src *float32, lda int, dst *float32)

// gemmAccumulate is the flag bit that adds the product to C.
const gemmAccumulate uint = 1

// gemmPrefetchNext is the flag bit that asks the micro-kernel to fetch a
// later B panel of the same depth (the AVX2 kernels: two on, 2*k*NR floats
// past b) into cache as it goes. It is a hint: it never changes results,
// kernels may ignore it, and it may reach past the packed buffer, which
// prefetching tolerates.
const gemmPrefetchNext uint = 2

// gemmPrefetchFar is the flag bit that says the A panel streams from
// memory (a convolution's packed weights, too large for L2, read once a
// run): the amd64 panel kernels then fetch A 4 KiB ahead, far enough to
// cover a DRAM miss, where their usual distance covers an L2 hit. A
// hint, like gemmPrefetchNext.
const gemmPrefetchFar uint = 4

// gemmRelu and gemmClamp are flag bits that apply an epilogue's clamp to
// the finished sums before they are stored, in registers (a variant's
// kernels honour them where GemmVariant.clamp says so; callers pass them
// only there, and only with a tile's last depth block): gemmRelu is the
// elementwise Relu (x < 0 ? 0 : x: -0 and NaN kept), gemmClamp the
// elementwise Clamp to [+0, hi] with hi's bits in the flags' upper half
// (clampFlags). Same bits as those kernels applied to the stored tile.
const (
	gemmRelu  uint = 8
	gemmClamp uint = 16
)

// clampFlags is gemmClamp to [+0, hi].
func clampFlags(hi float32) uint { return gemmClamp | uint(math.Float32bits(hi))<<32 }

// GemmVariant is one implementation of the GEMM kernels: a micro-kernel
// with its tile shape, the GEMV kernel of the same width, and the cache
// blocking tuned for it.
type GemmVariant struct {
	// Name is what reports show: "avx2" (assembly) or "go" (pure Go).
	Name string
	// Feature is the ops/cpuid variant the kernels need.
	Feature cpuid.Variant

	mr, nr     int // micro-tile rows and columns
	kc, mc, nc int // depth, rows and columns of the cache blocks
	micro      microKernel
	micro4     microKernel // optional: rows 0-3 of a tile, bit-identical to micro's
	micro8     microKernel // optional: rows 0-7 of a tile (MR = 12), bit-identical to micro's
	gemv       gemvKernel
	packB16    packKernel                  // used for full 16-column strips of a row-major B
	gemvRows4  rowsKernel                  // one-row products over a row-major B
	packA      packAKernel                 // full MR-row panels of a row-major A
	packB64    pack4Kernel                 // four full 16-column strips of a row-major B
	microRowA  rowAKernel                  // optional: micro reading A in place (GemmConfig.InPlaceA)
	panel      panelKernel                 // optional: micro over a column of full tiles
	panelRowA  panelRowAKernel             // optional: microRowA over a column of full tiles
	panel2     panel2Kernel                // optional: panel over two column panels at once
	edge2      edge2Kernel                 // with panel2: rows 0-3 or 0-7 of its tile, same bits
	cols       colsKernel                  // optional: a tile's first colsMax columns
	colsP4     colsPanelsKernel            // optional: four panels' first colsMax columns (with cols)
	colsP8     colsPanelsKernel            // optional: eight panels' first column (with cols)
	zip2       zip2Kernel                  // optional: panel2 storing as ZipStore does
	zipEdge2   zipEdge2Kernel              // with zip2: edge2 storing as ZipStore does
	zip1       zip1Kernel                  // optional: panel storing as ZipStore does
	fewRows    fewRowsKernel               // optional: blocks of up to fewRowsMax rows, A in place (gemm_rows.go)
	clamp      bool                        // micro, panel and panel2 (where set) honour gemmRelu and gemmClamp
	prefetchW  func(p *float32, lines int) // optional: prefetchForWrite's kernel
	// optional: PREFETCHW of the lines holding p[i·stride], i < n (n >= 1)
	prefetchWS func(p *float32, stride, n int)
}

// Tile returns the micro-tile shape (rows, columns).
func (v *GemmVariant) Tile() (mr, nr int) { return v.mr, v.nr }

// Blocking returns the cache blocks: kc deep, mc rows of A, nc columns of B.
func (v *GemmVariant) Blocking() (kc, mc, nc int) { return v.kc, v.mc, v.nc }

// partial returns the kernel an edge tile of mrv < MR rows runs: the
// smallest of micro4, micro8 and micro that covers mrv rows, and the rows
// it computes.
func (v *GemmVariant) partial(mrv int) (microKernel, int) {
	switch {
	case mrv <= 4 && v.micro4 != nil:
		return v.micro4, 4
	case mrv <= 8 && v.micro8 != nil:
		return v.micro8, 8
	}
	return v.micro, v.mr
}

// withBlocking returns a copy with other cache blocks (for tuning runs).
func (v *GemmVariant) withBlocking(kc, mc, nc int) *GemmVariant {
	w := *v
	w.kc, w.mc = kc, max(v.mr, mc/v.mr*v.mr)
	w.nc = max(v.nr, nc/v.nr*v.nr)
	return &w
}

// gemmGo is the pure-Go variant: the twins of the assembly kernels, with
// the AVX2 variant's tile so both pack the same way.
var gemmGo = &GemmVariant{
	Name: "go", Feature: cpuid.Generic,
	mr: 6, nr: 16, kc: 256, mc: 288, nc: 2048,
	micro: gemmKernel6x16Go, gemv: gemv16Go, packB16: gemmPackB16Go, gemvRows4: gemvRows4Go, packA: gemmPackA6Go, packB64: gemmPackB64Go,
	cols: gemmColsGo(6), fewRows: gemmRowsGo,
}

// GemmVariants lists the variants this CPU and build can run, best first,
// ending with "go". KILN_CPU does not shorten it (tests run them all).
func GemmVariants() []*GemmVariant { return gemmFamily.variants() }

// BestGemm is the variant kernels should use: the best one cpuid.Allows
// (which honours KILN_CPU), chosen once.
func BestGemm() *GemmVariant { return gemmFamily.best() }

// GemmVariantNamed returns the variant called name if this machine can run
// it, else nil.
func GemmVariantNamed(name string) *GemmVariant { return gemmFamily.named(name) }
