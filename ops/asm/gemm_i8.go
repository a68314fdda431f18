package asm

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/kilnml/kiln/ops/cpuid"
)

// Int8 products. GemmU8S8 computes, in int32,
//
//	C[M×N] = A[M×K] · B[K×N]        C[i][j] = Σ_p A[i][p]·B[p][j]
//
// with A uint8 (activations, row-major), B int8 (weights, packed once into
// a PackedU8S8) and C int32 (row-major), on micro-kernels built on the
// CPU's integer dot products: VPDPBUSD on zmm (AVX512_VNNI) or ymm
// (AVX-VNNI), VPMADDWD on sign- and zero-extended values (AVX2), SDOT
// (Armv8.2 dot product, arm64), or the pure-Go twin.
//
// Exactness. Every variant computes the sum modulo 2³² (two's complement
// int32), and so gives the same bits as the twin and as the plain loop of
// the tests, whatever its order of summation (addition modulo 2³² is
// associative). That needs each instruction's partial sums to be exact and
// to wrap rather than saturate:
//
//   - A product of a uint8 and an int8 lies in [-32640, 32385]
//     (255·-128 and 255·127); every variant forms it exactly.
//   - VPDPBUSD (not VPDPBUSDS, which saturates) adds four such products,
//     |sum| <= 130560, to each int32 lane with wraparound.
//   - AVX2 does not use VPMADDUBSW: it adds two u8·s8 products into an
//     int16 with saturation, and 255·127 + 255·127 = 64770 > 32767. Its
//     variant widens instead: A zero-extended and B sign-extended to
//     int16 (VPMOVSXBW), then VPMADDWD, whose int16·int16 products and
//     pair sums are exact in int32 (its one overflow, -32768·-32768
//     twice, needs |a| = 32768; here |a| <= 255), and VPADDD, which wraps.
//   - SDOT multiplies int8 by int8, so the NEON variant packs A as
//     a-128 (the byte XOR 0x80) and adds 128·Σ_p B[p][j] (from the
//     packed B's column sums) to each finished sum: Σ a·b =
//     Σ (a-128)·b + 128·Σ b holds in the integers and so modulo 2³².
//     SDOT adds four exact products (|sum| <= 65536) with wraparound.
//
// The sum is the true integer value whenever it lies in int32's range,
// which any input guarantees for K <= 65793 (= ⌊2³¹/32640⌋); past that
// the extremes wrap, identically in every variant. TestGemmU8S8Extremes
// runs the extremes (255 against -128 and 127) past that depth.
//
// Zero points. With quantized operands a = qa - za and b = qb - zb,
//
//	Σ_p (qa-za)(qb-zb) = Σ qa·qb - zb·rowA[i] - za·colB[j] + K·za·zb
//
// where rowA[i] = Σ_p qa[i][p] (GemmU8S8Args.RowSums, filled by Run when
// given) and colB[j] = Σ_p qb[p][j] (PackedU8S8.ColSums, computed when
// packed). Other signednesses map onto u8×s8 the same way: an int8 A is
// A XOR 0x80 as uint8 with za + 128, a uint8 B is B XOR 0x80 as int8
// with zb - 128.
//
// Layouts. K is padded with zeros to a multiple of 16 (four quads, so the
// kernels unroll by four with no tail) and taken in quads of four steps;
// N is padded with zero columns to a multiple of 32 (so a kernel tile of
// two panels never reads past the last). B is packed in depth blocks of
// i8KC steps, each holding every 16-column panel, one after another:
// panel byte q*64 + 4j + t is B[4q+t][j0+j]. A is copied (as each
// variant wants it: bytes, bytes XOR 0x80, or zero-extended uint16) into
// rows of a buffer padded to the tile height, rows past M zero.

// Blocking of the int8 product, in steps of K.
const (
	i8NR     = 16   // columns of a panel
	i8NPad   = 32   // N is padded to a multiple of this (the widest tile)
	i8KAlign = 16   // K is padded to a multiple of this
	i8KC     = 1024 // steps per depth block: 256 quads, a 16 KiB B panel
	i8MC     = 288  // rows of C one work item covers at most (24 tiles of 12)
	i8NC     = 16 * i8NR
)

// i8PanelKernel runs the int8 micro-kernel down a column of tiles that
// share nr/16 consecutive B panels (of kq quads each), A read from the
// variant's packed rows:
//
//	for t < tiles, i < mr, j < nr:
//		s := Σ_{q < kq, u < 4} A(mr*t+i, 4q+u) · b[(j/16)*64*kq + 64q + 4(j%16) + u]     (int32, wrapping)
//		c[(mr*t+i)*ldc+j] = s  (flags&1 == 0)   or   c[(mr*t+i)*ldc+j] += s  (flags&1 == 1)
//
// where A(i, p) is the value the variant packed for A[i][p] at byte
// offset i*lda (+ p, or + 2p for 16-bit A). tiles >= 1, kq >= 4 and a
// multiple of 4, a reaching (mr*tiles-1)*lda + the row's kq quads, b
// 64*kq*nr/16 bytes and c (mr*tiles-1)*ldc+nr int32s; the Go caller
// checks it.
type i8PanelKernel func(tiles, kq int, a *byte, lda int, b *int8, c *int32, ldc int, flags uint)

// i8GemvKernel is the one-row form of i8PanelKernel over several panels
// of one depth block, panel p's quads at b + p*pstride bytes, writing the
// panels' sums to c[16p+j] (panels >= 1).
type i8GemvKernel func(kq, panels int, a *byte, b *int8, pstride int, c *int32, flags uint)

// GemmU8S8Variant is one implementation of the int8 kernels.
type GemmU8S8Variant struct {
	// Name is what reports show: "avx512vnni", "avxvnni", "avx2",
	// "neondot" or "go".
	Name string
	// Feature is the ops/cpuid variant the kernels run under; the
	// dot-product instructions are checked when the variant registers.
	Feature cpuid.Variant

	mr, nr int  // rows and columns (16 or 32) of the panel kernel's tile
	aWide  bool // A packed as zero-extended uint16
	aShift bool // A packed as a-128 in int8: Run adds 128·colB
	panel  i8PanelKernel
	gemv   i8GemvKernel // nil: one-row products run the panel kernel
}

// gemmU8S8Go is the pure-Go variant (the twins).
var gemmU8S8Go = &GemmU8S8Variant{Name: "go", Feature: cpuid.Generic, mr: 4, nr: 16, panel: gemmPanelU8S8Go, gemv: gemvU8S8Go}

// GemmU8S8Variants lists the int8 variants this CPU and build can run,
// best first, ending with the pure-Go twin.
func GemmU8S8Variants() []*GemmU8S8Variant { return gemmI8Family.variants() }

// BestGemmU8S8 is the variant int8 products dispatch to (KILN_CPU
// honoured); at worst the twin.
func BestGemmU8S8() *GemmU8S8Variant { return gemmI8Family.best() }

// PackedU8S8 is an int8 B [K×N] packed for GemmU8S8, with its column
// sums. Its layout is the same for every variant.
type PackedU8S8 struct {
	k, n, npad int
	data       []int8
	colSums    []int32
	Version    uint64 // free for the owner: e.g. the weights version it was packed from
}

// Bytes is the size of the packed buffer.
func (pb *PackedU8S8) Bytes() int { return len(pb.data) + 4*len(pb.colSums) }

// Dims are the depth and columns B was packed with.
func (pb *PackedU8S8) Dims() (k, n int) { return pb.k, pb.n }

// ColSums are Σ_p B[p][j] for j < N (for zero points; see the package's
// int8 notes). The caller must not modify them.
func (pb *PackedU8S8) ColSums() []int32 { return pb.colSums }

// block returns the panels of depth block [pc, pc+kc): every quad row of
// all panels is 4*npad bytes, and only the last block is short.
func (pb *PackedU8S8) block(pc, kc int) []int8 {
	return pb.data[pc*pb.npad : (pc+gemmRoundUp(kc, i8KAlign))*pb.npad]
}

// PackU8S8 packs B, K×N int8 row-major with row stride ldb (or, with
// transB, stored N×K: B[p][j] at b[j*ldb+p]), into pb, reusing pb's
// buffers when they are large enough.
func PackU8S8(pb *PackedU8S8, b []int8, k, n, ldb int, transB bool) error {
	rows, cols := k, n
	if transB {
		rows, cols = n, k
	}
	if k < 0 || n < 0 || ldb < max(cols, 1) {
		return fmt.Errorf("asm: int8 gemm: cannot pack B of K=%d N=%d with ldb %d", k, n, ldb)
	}
	if need := matSpan(rows, cols, ldb); len(b) < need {
		return fmt.Errorf("asm: int8 gemm: B has %d elements, needs %d", len(b), need)
	}
	at := func(p, j int) int8 {
		if transB {
			return b[j*ldb+p]
		}
		return b[p*ldb+j]
	}
	npad := gemmRoundUp(n, i8NPad)
	size := gemmRoundUp(k, i8KAlign) * npad
	if cap(pb.data) < size {
		pb.data = make([]int8, size)
	}
	if cap(pb.colSums) < n {
		pb.colSums = make([]int32, n)
	}
	pb.k, pb.n, pb.npad, pb.data, pb.colSums = k, n, npad, pb.data[:size], pb.colSums[:n]
	clear(pb.data)
	clear(pb.colSums)
	for pc := 0; pc < k; pc += i8KC {
		kc := min(i8KC, k-pc)
		blk, kcq := pb.block(pc, kc), gemmRoundUp(kc, i8KAlign)/4
		for jr := 0; jr < n; jr += i8NR {
			pan := blk[jr*kcq*4 : (jr+i8NR)*kcq*4]
			for j := range min(i8NR, n-jr) {
				s := int32(0)
				for p := range kc {
					v := at(pc+p, jr+j)
					pan[p/4*64+4*j+p%4] = v
					s += int32(v)
				}
				pb.colSums[jr+j] += s
			}
		}
	}
	return nil
}

// GemmU8S8Config is the shape of an int8 product: A is M×K uint8 with
// row stride LDA, C M×N int32 with row stride LDC (0: tight).
type GemmU8S8Config struct {
	M, N, K  int
	LDA, LDC int
}

// GemmU8S8Args are the operands of one run.
type GemmU8S8Args struct {
	A []uint8
	B *PackedU8S8
	C []int32
	// RowSums, if not nil (M entries), receives Σ_p A[i][p] for the
	// zero-point correction; they are final before any block of C is.
	RowSums []int32
	// Finish, if set, is called once for each finished block of C, rows
	// [m0, m1) × columns [n0, n1), by the worker that computed it while
	// the block is still in its cache: the hook for an epilogue (zero
	// points, scales, bias, activation) fused into the product. Blocks
	// are disjoint and cover C; calls may run concurrently.
	Finish func(m0, m1, n0, n1 int)
}

// GemmU8S8 is a prepared int8 product. A plan runs one product at a time;
// use one plan per concurrently running kernel.
type GemmU8S8 struct {
	cfg    GemmU8S8Config
	v      *GemmU8S8Variant
	par    Par
	kq     int    // quads of K (padded)
	lda    int    // bytes between packed A rows
	abuf   []byte // A packed: roundUp(M, mr) rows of lda bytes (allocated on first run)
	tiles  [][]int32
	run    GemmU8S8Args
	tm, tn int // grid of work items: row blocks × column blocks
	pm, pn int // row tiles and column tiles of C
	next   atomic.Int64
	rows   int // rows of A packed per For chunk
	body   func(lo, hi int)
	packer func(lo, hi int)
}

// NewGemmU8S8 prepares an int8 product for variant v (nil:
// BestGemmU8S8) run over par.
func NewGemmU8S8(cfg GemmU8S8Config, v *GemmU8S8Variant, par Par) (*GemmU8S8, error) {
	if cfg.M < 0 || cfg.N < 0 || cfg.K < 0 {
		return nil, fmt.Errorf("asm: int8 gemm: negative size M=%d N=%d K=%d", cfg.M, cfg.N, cfg.K)
	}
	if cfg.LDA == 0 {
		cfg.LDA = max(cfg.K, 1)
	}
	if cfg.LDC == 0 {
		cfg.LDC = max(cfg.N, 1)
	}
	if cfg.LDA < cfg.K || cfg.LDC < cfg.N {
		return nil, fmt.Errorf("asm: int8 gemm: LDA %d < K %d or LDC %d < N %d", cfg.LDA, cfg.K, cfg.LDC, cfg.N)
	}
	if v == nil {
		v = BestGemmU8S8()
	}
	if par.For == nil || par.Threads < 1 {
		par = Par{For: serialFor, Threads: 1}
	}
	par.Threads = min(par.Threads, maxGemmThreads)
	g := &GemmU8S8{cfg: cfg, v: v, par: par, kq: gemmRoundUp(cfg.K, i8KAlign) / 4}
	qb := 4 // bytes of a packed A quad
	if v.aWide {
		qb = 8
	}
	// Packed rows start on cache lines; a stride that is a multiple of
	// 4 KiB would put a tile's rows in one L1 set.
	g.lda = gemmRoundUp(max(g.kq*qb, 64), 64)
	if g.lda%4096 == 0 {
		g.lda += 64
	}
	g.tiles = make([][]int32, par.Threads)
	for i := range g.tiles {
		g.tiles[i] = make([]int32, v.mr*v.nr)
	}
	g.pm, g.pn = (cfg.M+v.mr-1)/v.mr, (cfg.N+v.nr-1)/v.nr
	g.body, g.packer = g.runItems, g.packRows
	return g, nil
}

// Variant is the variant the plan runs.
func (g *GemmU8S8) Variant() *GemmU8S8Variant { return g.v }

// Config is the plan's config with leading dimensions filled in.
func (g *GemmU8S8) Config() GemmU8S8Config { return g.cfg }

// check validates the operands before anything runs.
func (g *GemmU8S8) check(args *GemmU8S8Args) error {
	cfg := &g.cfg
	if pb := args.B; pb == nil || pb.k != cfg.K || pb.n != cfg.N {
		return fmt.Errorf("asm: int8 gemm: packed B does not fit a run of K=%d N=%d", cfg.K, cfg.N)
	}
	if need := matSpan(cfg.M, cfg.K, cfg.LDA); len(args.A) < need {
		return fmt.Errorf("asm: int8 gemm: A has %d elements, needs %d", len(args.A), need)
	}
	if need := matSpan(cfg.M, cfg.N, cfg.LDC); len(args.C) < need {
		return fmt.Errorf("asm: int8 gemm: C has %d elements, needs %d", len(args.C), need)
	}
	if args.RowSums != nil && len(args.RowSums) < cfg.M {
		return fmt.Errorf("asm: int8 gemm: RowSums has %d elements, needs %d", len(args.RowSums), cfg.M)
	}
	return nil
}

// Run computes the product (and the row sums, if asked).
func (g *GemmU8S8) Run(args *GemmU8S8Args) error {
	if err := g.check(args); err != nil {
		return err
	}
	cfg := &g.cfg
	if cfg.M == 0 {
		return nil
	}
	g.run = *args
	defer func() { g.run = GemmU8S8Args{} }() // drop references to the caller's memory
	if cfg.K == 0 || cfg.N == 0 {
		for i := range cfg.M * min(cfg.N, 1) {
			clear(args.C[i*cfg.LDC : i*cfg.LDC+cfg.N])
		}
		if args.RowSums != nil {
			RowSumsU8(args.RowSums, args.A, cfg.M, cfg.K, cfg.LDA)
		}
		if args.Finish != nil && cfg.N > 0 {
			args.Finish(0, cfg.M, 0, cfg.N)
		}
		return nil
	}
	if g.abuf == nil {
		// Rows past M and bytes past K stay zero: the last tile and
		// quad read them.
		g.abuf = alignedBytes(gemmRoundUp(cfg.M, g.v.mr) * g.lda)
	}
	// A worker needs as much time as the float32 GEMM's minimum share:
	// the int8 kernels do about four times the operations a second.
	work := 2 * cfg.M * cfg.N * cfg.K
	threads := min(g.par.Threads, max(1, work/(4*parMinFlops)))
	g.rows = max(1, (64<<10)/cfg.K)
	if chunks := (cfg.M + g.rows - 1) / g.rows; threads > 1 && chunks > 1 {
		g.par.For(chunks, 1, g.packer)
	} else {
		g.packRows(0, chunks)
	}
	g.tm, g.tn = workGrid(g.pm, g.pn, max(1, i8MC/g.v.mr), i8NC/g.v.nr, threads)
	g.next.Store(0)
	if threads > 1 {
		g.par.For(threads, 1, g.body)
	} else {
		g.runItems(0, 1)
	}
	return nil
}

// packRows packs the rows of A in chunks [lo, hi) into g.abuf as the
// variant reads them, and sums them if asked (the For body of packing).
func (g *GemmU8S8) packRows(lo, hi int) {
	cfg, a := &g.cfg, g.run.A
	r0, r1 := lo*g.rows, min(cfg.M, hi*g.rows)
	if r0 >= r1 {
		return
	}
	k := cfg.K
	for i := r0; i < r1; i++ {
		src, dst := a[i*cfg.LDA:i*cfg.LDA+k], g.abuf[i*g.lda:(i+1)*g.lda]
		switch {
		case g.v.aWide:
			for p, x := range src {
				dst[2*p] = x // little-endian uint16: high byte stays 0
			}
		case g.v.aShift:
			for p, x := range src {
				dst[p] = x ^ 0x80 // the padding stays 0: B's is 0 too
			}
		default:
			copy(dst, src)
		}
	}
	if rs := g.run.RowSums; rs != nil {
		RowSumsU8(rs[r0:r1], a[r0*cfg.LDA:], r1-r0, k, cfg.LDA)
	}
}

// RowSumsU8 writes Σ_p a[i*lda+p] over p < k into dst[i] for i < m: the
// zero-point term of the int8 product (see the package's int8 notes).
func RowSumsU8(dst []int32, a []uint8, m, k, lda int) {
	if k == 0 { // a may be empty
		clear(dst[:m])
		return
	}
	for i := range m {
		row := a[i*lda : i*lda+k]
		var s uint32
		// Eight bytes at a time: the even and odd bytes of each word
		// added in 16-bit lanes, 128 words before the lanes are folded
		// (at most 128·2·255 = 65280 a lane).
		for len(row) >= 8 {
			var acc uint64
			n := min(len(row)/8, 128)
			for w := range n {
				x := uint64(row[8*w]) | uint64(row[8*w+1])<<8 | uint64(row[8*w+2])<<16 | uint64(row[8*w+3])<<24 |
					uint64(row[8*w+4])<<32 | uint64(row[8*w+5])<<40 | uint64(row[8*w+6])<<48 | uint64(row[8*w+7])<<56
				acc += x&0x00ff00ff00ff00ff + x>>8&0x00ff00ff00ff00ff
			}
			s += uint32(acc&0xffff + acc>>16&0xffff + acc>>32&0xffff + acc>>48)
			row = row[8*n:]
		}
		for _, x := range row {
			s += uint32(x)
		}
		dst[i] = int32(s)
	}
}

// runItems is the For body of a run: worker slots [lo, hi) take work
// items until none are left.
func (g *GemmU8S8) runItems(lo, hi int) {
	items, mr, nr := int64(g.tm*g.tn), g.v.mr, g.v.nr
	for t := lo; t < hi; t++ {
		for {
			i := g.next.Add(1) - 1
			if i >= items {
				break
			}
			im, in := int(i)/g.tn, int(i)%g.tn
			m0, m1 := im*g.pm/g.tm*mr, min(g.cfg.M, (im+1)*g.pm/g.tm*mr)
			n0, n1 := in*g.pn/g.tn*nr, min(g.cfg.N, (in+1)*g.pn/g.tn*nr)
			g.item(g.tiles[t], m0, m1, n0, n1)
		}
	}
}

// item computes block [m0, m1) × [n0, n1) of C (m0 a multiple of mr, n0
// of nr): depth blocks outer, then column tiles of nr, then tiles down
// each column, full ones by the panel kernel straight into C and the edges
// through the scratch tile.
func (g *GemmU8S8) item(tile []int32, m0, m1, n0, n1 int) {
	cfg, v, c, ldc, lda, mr, nr := &g.cfg, g.v, g.run.C, g.cfg.LDC, g.lda, g.v.mr, g.v.nr
	full := (m1 - m0) / mr
	qb := 4
	if v.aWide {
		qb = 8
	}
	for pc := 0; pc < cfg.K; pc += i8KC {
		kc := min(i8KC, cfg.K-pc)
		kcq := gemmRoundUp(kc, i8KAlign) / 4
		blk := g.run.B.block(pc, kc)
		flags := uint(0)
		if pc > 0 {
			flags = gemmAccumulate
		}
		a := g.abuf[pc/4*qb:] // quad pc/4 of row 0
		if m1-m0 == 1 && v.gemv != nil {
			g.gemvRow(tile, a[m0*lda:m0*lda+kcq*qb], blk, kcq, m0, n0, n1, flags)
			continue
		}
		for jr := n0; jr < n1; jr += nr {
			cols := min(nr, n1-jr)
			bpan := blk[jr*kcq*4 : (jr+nr)*kcq*4] // inside: N is padded to 32
			ir := m0
			if cols == nr && full > 0 {
				_ = a[(m0+mr*full-1)*lda+kcq*qb-1] // every tile's rows are inside the buffer
				_ = c[(m0+mr*full-1)*ldc+jr+nr-1]
				v.panel(full, kcq, &a[m0*lda], lda, &bpan[0], &c[m0*ldc+jr], ldc, flags)
				ir += mr * full
			}
			for ; ir < m1; ir += mr {
				rows := min(mr, m1-ir)
				_ = a[(ir+mr-1)*lda+kcq*qb-1] // the padded rows are inside the buffer too
				v.panel(1, kcq, &a[ir*lda], lda, &bpan[0], &tile[0], nr, 0)
				for r := range rows {
					mergeI32(c[(ir+r)*ldc+jr:(ir+r)*ldc+jr+cols], tile[r*nr:r*nr+cols], flags&gemmAccumulate != 0)
				}
			}
		}
	}
	if v.aShift {
		// Σ a·b = Σ (a-128)·b + 128·Σ b (see the package's int8 notes).
		cs := g.run.B.colSums[n0:n1]
		for i := m0; i < m1; i++ {
			row := c[i*ldc+n0 : i*ldc+n1]
			for j, s := range cs {
				row[j] += s << 7
			}
		}
	}
	if g.run.Finish != nil {
		g.run.Finish(m0, m1, n0, n1)
	}
}

// gemvRow computes columns [n0, n1) of C's row i for one depth block
// (kcq quads of a, panels of blk): full panels in one call of the
// variant's one-row kernel, a last partial one through the scratch tile.
func (g *GemmU8S8) gemvRow(tile []int32, a []byte, blk []int8, kcq, i, n0, n1 int, flags uint) {
	c := g.run.C[i*g.cfg.LDC:]
	pstride := kcq * 64
	if full := (n1 - n0) / i8NR; full > 0 {
		_ = blk[n0*kcq*4+(full-1)*pstride+pstride-1] // the panels are inside the block
		_ = c[n0+full*i8NR-1]
		g.v.gemv(kcq, full, &a[0], &blk[n0*kcq*4], pstride, &c[n0], flags)
		n0 += full * i8NR
	}
	if n0 < n1 {
		_ = blk[n0*kcq*4+pstride-1]
		g.v.gemv(kcq, 1, &a[0], &blk[n0*kcq*4], pstride, &tile[0], 0)
		mergeI32(c[n0:n1], tile[:n1-n0], flags&gemmAccumulate != 0)
	}
}

// mergeI32 stores (or adds) a finished edge tile's row into C.
func mergeI32(dst, src []int32, acc bool) {
	if !acc {
		copy(dst, src)
		return
	}
	for j, s := range src {
		dst[j] += s
	}
}

// alignedBytes allocates n bytes starting on a 64-byte boundary.
func alignedBytes(n int) []byte {
	w := alignedWords((n + 3) / 4)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), n)
}
