package asm

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/kilnml/kiln/ops/cpuid"
)

// BF16 products. GemmBF16 computes C = Alpha·op(A)·op(B) with op(B) a
// weight held in bfloat16 (PackedBF16: packed once, half the bytes of a
// float32 PackedB) and op(A) rounded to bfloat16 as it is converted, on a
// micro-kernel built on VDPBF16PS (AVX512_BF16), which multiplies pairs
// of bf16 values and accumulates them into float32 lanes:
//
//	acc = acc + a[2q+1]·b[2q+1]    rounded to float32 (nearest even), denormal results flushed to zero
//	acc = acc + a[2q]·b[2q]        likewise; bf16 denormal inputs read as zero
//
// Layouts. K is taken in pairs of steps (kp = ceil(K/2) pairs; an odd K
// gets a zero step). A is converted to bf16 rows: row i, pair q is the
// 32-bit word a[i][2q] | a[i][2q+1]<<16, rows lda words apart; the
// micro-kernel broadcasts each word into all sixteen lanes (m32bcst).
// B is packed in blocks of bf16KC steps, each holding every 16-column
// panel: panel word q*16+j is b[2q][j] | b[2q+1][j]<<16.
//
// Accuracy. Rounding A to bf16 (8 significant bits, nearest even)
// changes each a by at most 2⁻⁸|a|; B is used exactly when it holds bf16
// values (weights set as BF16), else it is rounded the same way when
// packed (another 2⁻⁸). Each product of two bf16 values is exact in
// float32, and the sum of an element is a chain of at most
// K + K/512 float32 additions (one per step within a depth block of 512,
// one per block into C), each rounded once. So, against the exact
// product of the float32 A and the bf16 B,
//
//	|C - C*| <= Σ_p |a_ip|·|b_pj| · (2⁻⁸ + (K + K/512 + 2)·2⁻²⁴)
//	            + (Σ_p |b_pj| + K + 2)·2⁻¹²⁶
//
// where the last line covers flushed denormals: A values below 2⁻¹²⁶
// read as zero, and so do partial sums that fall below it. With Alpha ≠
// 1, A is scaled in float32 before rounding (one more 2⁻²⁴ on each
// product); an epilogue adds its own float32 roundings. The 2⁻⁸ term
// dominates: expect about three significant digits where the float32
// GEMM gives six or seven (errors of random sign grow like √K, so the
// typical error is far below the bound). bf16Bound in the tests is this
// bound; TestGemmBF16Accuracy checks it over many shapes and layouts,
// TestGemmBF16Special with NaN, ±Inf and denormals.
//
// The pure-Go twins (gemm_bf16_go.go) compute the same bits as the
// instructions' documented semantics; see bf16Dot2 for the one place
// where they may differ (products of tiny values below float32's normal
// range).

// Blocking of the BF16 product, in steps of K (bf16KC even, so only the
// last depth block can have an odd step) and rows of the 12×16 tile.
const (
	bf16MR   = 12
	bf16NR   = 16
	bf16KC   = 512 // 256 pairs: a 16 KiB B panel, as the float32 kernel's
	bf16MC   = 24 * bf16MR
	bf16NC   = 16 * bf16NR // columns of C one work item covers at most
	bf16Conv = 32          // floats the conversion kernel takes at a time
)

// bf16PanelKernel runs the BF16 micro-kernel down a column of tiles that
// share one B panel, A read from converted rows:
//
//	for t < tiles, i < 12, j < 16:
//		s := 0; for q < kp: s = dot2(s, a[(12t+i)*lda+q], b[q*16+j])   (see bf16Dot2)
//		c[(12t+i)*ldc+j] = s  (flags&1 == 0)   or   c[(12t+i)*ldc+j] += s  (flags&1 == 1)
//
// tiles >= 1, kp >= 1, a reaches (12*tiles-1)*lda+kp words, b kp*16 and
// c (12*tiles-1)*ldc+16 floats; the Go caller checks all of it.
type bf16PanelKernel func(tiles, kp int, a *uint32, lda int, b *uint32, c *float32, ldc int, flags uint)

// bf16GemvKernel is the one-row form of bf16PanelKernel, over several
// panels of one depth block:
//
//	for p < panels, j < 16:
//		s := 0; for q < kp: s = dot2(s, a[q], b[p*pstride+q*16+j])
//		c[p*16+j] = s  (flags&1 == 0)   or   c[p*16+j] += s  (flags&1 == 1)
//
// panels >= 1, kp >= 1, a holds kp words, b reaches
// (panels-1)*pstride+kp*16 and c panels*16 floats.
type bf16GemvKernel func(kp, panels int, a *uint32, b *uint32, pstride int, c *float32, flags uint)

// bf16ConvertKernel converts rows of float32 to bf16 pairs:
//
//	for r < rows, q < 16*n32: dst[r*ldd+q] = cvt(src[r*lds+2q]) | cvt(src[r*lds+2q+1])<<16
//
// with cvt as bf16FromF32 (nearest even, denormals to zero, NaN quiet);
// rows >= 1, n32 >= 1, src reaching (rows-1)*lds+32*n32 floats and dst
// (rows-1)*ldd+16*n32 words.
type bf16ConvertKernel func(rows, n32 int, src *float32, lds int, dst *uint32, ldd int)

// GemmBF16Variant is one implementation of the BF16 kernels.
type GemmBF16Variant struct {
	// Name is what reports show: "avx512bf16" or "go-bf16".
	Name string
	// Feature is the ops/cpuid variant the kernels need (the assembly also
	// needs AVX512_BF16: cpuid.HasBF16).
	Feature cpuid.Variant

	panel   bf16PanelKernel
	gemv    bf16GemvKernel
	convert bf16ConvertKernel
}

// gemmBF16Go is the pure-Go variant (the twins).
var gemmBF16Go = &GemmBF16Variant{Name: "go-bf16", Feature: cpuid.Generic, panel: gemmPanelBF16Go, gemv: gemvBF16Go, convert: bf16ConvertRowsGo}

// GemmBF16Variants lists the BF16 variants this CPU and build can run
// (the assembly where cpuid.HasBF16), ending with the pure-Go twin.
func GemmBF16Variants() []*GemmBF16Variant { return gemmBF16Family.variants() }

// BestGemmBF16 is the variant BF16 weights should run on, or nil where
// the CPU (or KILN_CPU) rules out AVX512_BF16: there the twin would be far
// slower than the float32 kernels, so callers keep float32.
func BestGemmBF16() *GemmBF16Variant { return gemmBF16Family.best() }

// PackedBF16 is op(B) rounded to bf16 and packed for GemmBF16: blocks of
// bf16KC steps (the last may be shorter, an odd one padded with a zero
// step), each holding every 16-column panel of pairs.
type PackedBF16 struct {
	k, n, npad int
	data       []uint32
	Version    uint64 // free for the owner: e.g. the weights version it was packed from
}

// Bytes is the size of the packed buffer.
func (pb *PackedBF16) Bytes() int { return 4 * len(pb.data) }

// Dims are the depth and columns op(B) was packed with.
func (pb *PackedBF16) Dims() (k, n int) { return pb.k, pb.n }

// block returns the panels of depth block [pc, pc+kc).
func (pb *PackedBF16) block(pc, kc int) []uint32 {
	base := pc / 2 * pb.npad
	return pb.data[base : base+(kc+1)/2*pb.npad]
}

// GemmBF16Args are the operands of one run: A and C as for Gemm, B packed.
type GemmBF16Args struct {
	A, C []float32
	B    *PackedBF16
	// Epilogue, if set, is applied to C once its blocks are final.
	Epilogue *Epilogue
}

// GemmBF16 is a prepared BF16 product. Like Gemm, a plan runs one
// product at a time; use one plan per concurrently running kernel.
type GemmBF16 struct {
	gemmSizes
	v        *GemmBF16Variant
	par      Par
	kp       int      // pairs of steps
	lda      int      // words between converted A rows
	abuf     []uint32 // A converted: roundUp(M, 12) rows of lda words (allocated on first run)
	tiles    [][]float32
	run      GemmBF16Args
	tm, tn   int // grid of work items: row blocks × column blocks
	pm, pn   int // row tiles and column panels of C
	next     atomic.Int64
	convRows int // rows of A converted per For chunk
	body     func(lo, hi int)
	convBody func(lo, hi int)
}

// NewGemmBF16 prepares a BF16 product for variant v (nil: BestGemmBF16,
// an error if there is none) run over par. Accumulate is not supported;
// InPlaceA is ignored (A is always converted).
func NewGemmBF16(cfg GemmConfig, v *GemmBF16Variant, par Par) (*GemmBF16, error) {
	if err := cfg.normalise(); err != nil {
		return nil, err
	}
	if cfg.Accumulate {
		return nil, errors.New("asm: bf16 gemm: Accumulate is not supported")
	}
	if v == nil {
		if v = BestGemmBF16(); v == nil {
			return nil, errors.New("asm: bf16 gemm: this CPU (or KILN_CPU) has no AVX512_BF16")
		}
	}
	if par.For == nil || par.Threads < 1 {
		par = Par{For: serialFor, Threads: 1}
	}
	par.Threads = min(par.Threads, maxGemmThreads)
	g := &GemmBF16{gemmSizes: gemmSizes{cfg: cfg}, v: v, par: par, kp: (cfg.K + 1) / 2}
	g.setNeeds()
	// Converted rows start on cache lines; a stride that is a multiple of
	// 4 KiB would put all twelve rows of a tile in one L1 set.
	g.lda = gemmRoundUp(max(g.kp, 1), 16)
	if g.lda%1024 == 0 {
		g.lda += 16
	}
	g.tiles = make([][]float32, par.Threads)
	for i := range g.tiles {
		g.tiles[i] = make([]float32, bf16MR*bf16NR)
	}
	g.pm, g.pn = (cfg.M+bf16MR-1)/bf16MR, (cfg.N+bf16NR-1)/bf16NR
	g.body, g.convBody = g.runItems, g.convertRows
	return g, nil
}

// Variant is the variant the plan runs.
func (g *GemmBF16) Variant() *GemmBF16Variant { return g.v }

// Config is the plan's config with leading dimensions filled in.
func (g *GemmBF16) Config() GemmConfig { return g.cfg }

// PackB rounds op(B) (as the plan's config describes it) to bf16 (nearest
// even: exact for values that are bf16 already) and packs it into pb,
// reusing pb's buffer when it is large enough.
func (g *GemmBF16) PackB(pb *PackedBF16, b []float32) error {
	cfg := &g.cfg
	if len(b) < g.needB {
		return fmt.Errorf("asm: bf16 gemm: B has %d elements, needs %d", len(b), g.needB)
	}
	npad := gemmRoundUp(cfg.N, bf16NR)
	size := g.kp * npad
	if cap(pb.data) < size {
		pb.data = make([]uint32, size)
	}
	pb.k, pb.n, pb.npad, pb.data = cfg.K, cfg.N, npad, pb.data[:size]
	for pc := 0; pc < cfg.K; pc += bf16KC {
		kc := min(bf16KC, cfg.K-pc)
		blk := pb.block(pc, kc)
		kcp := (kc + 1) / 2
		for jr := 0; jr < npad; jr += bf16NR {
			packBF16Panel(blk[jr*kcp:(jr+bf16NR)*kcp], b, cfg, pc, kc, jr)
		}
	}
	return nil
}

// packBF16Panel packs columns [j0, j0+16) of op(B)'s steps [p0, p0+kc)
// into one panel of pairs, zeros past N and past the last step.
func packBF16Panel(pan []uint32, b []float32, cfg *GemmConfig, p0, kc, j0 int) {
	ldb, cols := cfg.LDB, min(bf16NR, cfg.N-j0)
	at := func(p, j int) uint32 {
		if cfg.TransB {
			return uint32(bf16Round(b[(j0+j)*ldb+p0+p]))
		}
		return uint32(bf16Round(b[(p0+p)*ldb+j0+j]))
	}
	for q := range (kc + 1) / 2 {
		d := pan[q*bf16NR : (q+1)*bf16NR]
		for j := range bf16NR {
			var w uint32
			if j < cols {
				w = at(2*q, j)
				if 2*q+1 < kc {
					w |= at(2*q+1, j) << 16
				}
			}
			d[j] = w
		}
	}
}

// check validates the operands before anything runs.
func (g *GemmBF16) check(args *GemmBF16Args) error {
	cfg := &g.cfg
	if pb := args.B; pb == nil || pb.k != cfg.K || pb.n < cfg.N || len(pb.data) < g.kp*gemmRoundUp(cfg.N, bf16NR) {
		return fmt.Errorf("asm: bf16 gemm: packed B does not fit a run of K=%d N=%d", cfg.K, cfg.N)
	}
	if len(args.A) < g.needA {
		return fmt.Errorf("asm: bf16 gemm: A has %d elements, needs %d", len(args.A), g.needA)
	}
	if len(args.C) < g.needC {
		return fmt.Errorf("asm: bf16 gemm: C has %d elements, needs %d", len(args.C), g.needC)
	}
	if cfg.M > 0 && cfg.N > 0 && overlap32(args.C, args.A) {
		return errors.New("asm: bf16 gemm: C overlaps A")
	}
	if ep := args.Epilogue; ep != nil {
		if err := ep.check(cfg.M, cfg.N, 1); err != nil {
			return err
		}
		if overlap32(ep.Residual, args.C) {
			return errors.New("asm: bf16 gemm epilogue: residual overlaps C")
		}
	}
	return nil
}

// Run computes the product.
func (g *GemmBF16) Run(args *GemmBF16Args) error {
	if err := g.check(args); err != nil {
		return err
	}
	cfg := &g.cfg
	if cfg.M == 0 || cfg.N == 0 {
		return nil
	}
	g.run = *args
	defer func() { g.run = GemmBF16Args{} }() // drop references to the caller's memory
	if cfg.K == 0 {
		for i := range cfg.M {
			clear(args.C[i*cfg.LDC : i*cfg.LDC+cfg.N])
		}
		g.epilogue(0, cfg.M, 0, cfg.N)
		return nil
	}
	if g.abuf == nil {
		// Rows past M stay zero: the last tile reads them.
		g.abuf = alignedWords(gemmRoundUp(cfg.M, bf16MR) * g.lda)
	}
	work := 2 * cfg.M * cfg.N * cfg.K
	threads := min(g.par.Threads, max(1, work/parMinFlops))
	// Convert A: rows shared out, about 64 KiB of A a chunk.
	g.convRows = max(1, (16<<10)/cfg.K)
	if chunks := (cfg.M + g.convRows - 1) / g.convRows; threads > 1 && chunks > 1 {
		g.par.For(chunks, 1, g.convBody)
	} else {
		g.convertRows(0, chunks)
	}
	g.grid(threads)
	g.next.Store(0)
	if threads > 1 {
		g.par.For(threads, 1, g.body)
	} else {
		g.runItems(0, 1)
	}
	return nil
}

// alignedWords allocates n words starting on a 64-byte boundary.
func alignedWords(n int) []uint32 {
	buf := make([]uint32, n+16)
	off := int((64 - uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%64) % 64 / 4)
	return buf[off : off+n : off+n]
}

// convertRows converts the rows of op(A) in chunks [lo, hi) to bf16
// pairs in g.abuf (the For body of the conversion).
func (g *GemmBF16) convertRows(lo, hi int) {
	cfg, a := &g.cfg, g.run.A
	r0, r1 := lo*g.convRows, min(cfg.M, hi*g.convRows)
	if r0 >= r1 {
		return
	}
	k, kp, lda := cfg.K, g.kp, g.lda
	if cfg.TransA || cfg.Alpha != 1 {
		for i := r0; i < r1; i++ {
			d := g.abuf[i*lda : i*lda+kp]
			for q := range d {
				lo := bf16FromF32(cfg.Alpha * g.opA(a, i, 2*q))
				var hi uint16
				if 2*q+1 < k {
					hi = bf16FromF32(cfg.Alpha * g.opA(a, i, 2*q+1))
				}
				d[q] = uint32(lo) | uint32(hi)<<16
			}
		}
		return
	}
	n32 := k / bf16Conv
	if n32 > 0 {
		_ = a[(r1-1)*cfg.LDA+n32*bf16Conv-1]    // the rows' blocks are inside A
		_ = g.abuf[(r1-1)*lda+n32*bf16Conv/2-1] // and their words inside the buffer
		g.v.convert(r1-r0, n32, &a[r0*cfg.LDA], cfg.LDA, &g.abuf[r0*lda], lda)
	}
	for i := r0; i < r1; i++ {
		bf16ConvertTail(g.abuf[i*lda+n32*bf16Conv/2:i*lda+kp], a[i*cfg.LDA+n32*bf16Conv:i*cfg.LDA+k])
	}
}

// bf16ConvertTail converts the last floats of a row (fewer than 32) to
// pairs, a zero high half after an odd count.
func bf16ConvertTail(dst []uint32, src []float32) {
	for q := range dst {
		w := uint32(bf16FromF32(src[2*q]))
		if 2*q+1 < len(src) {
			w |= uint32(bf16FromF32(src[2*q+1])) << 16
		}
		dst[q] = w
	}
}

// opA is op(A)[i, p].
func (g *GemmBF16) opA(a []float32, i, p int) float32 {
	if g.cfg.TransA {
		return a[p*g.cfg.LDA+i]
	}
	return a[i*g.cfg.LDA+p]
}

// grid cuts C into work items for threads workers: row blocks of at
// most bf16MC rows and column blocks of at most bf16NC columns (so an
// item's converted A block and its C block stay in L2), then more
// column (or row) blocks until there are four items a worker.
func (g *GemmBF16) grid(threads int) {
	g.tm, g.tn = workGrid(g.pm, g.pn, bf16MC/bf16MR, bf16NC/bf16NR, threads)
}

// workGrid cuts a product of pm row tiles × pn column panels into tm × tn
// work items of at most mt tiles × np panels each, then cuts more column
// (or, once every panel is its own, row) blocks until there are four
// items a worker, so that uneven items even out.
func workGrid(pm, pn, mt, np, threads int) (tm, tn int) {
	tm, tn = (pm+mt-1)/mt, (pn+np-1)/np
	for tm*tn < 4*threads && threads > 1 && (tn < pn || tm < pm) {
		if tn < pn {
			tn++
		} else {
			tm++
		}
	}
	return tm, tn
}

// runItems is the For body of a run: worker slots [lo, hi) take work
// items until none are left.
func (g *GemmBF16) runItems(lo, hi int) {
	items := int64(g.tm * g.tn)
	for t := lo; t < hi; t++ {
		for {
			i := g.next.Add(1) - 1
			if i >= items {
				break
			}
			im, in := int(i)/g.tn, int(i)%g.tn
			m0, m1 := im*g.pm/g.tm*bf16MR, min(g.cfg.M, (im+1)*g.pm/g.tm*bf16MR)
			n0, n1 := in*g.pn/g.tn*bf16NR, min(g.cfg.N, (in+1)*g.pn/g.tn*bf16NR)
			g.item(g.tiles[t], m0, m1, n0, n1)
		}
	}
}

// item computes block [m0, m1) × [n0, n1) of C (m0 a multiple of 12, n0
// of 16): depth blocks outer, then 16-column panels, then tiles down each
// panel, full ones by the panel kernel straight into C and the edges
// through the scratch tile.
func (g *GemmBF16) item(tile []float32, m0, m1, n0, n1 int) {
	cfg, v, c, ldc, lda := &g.cfg, g.v, g.run.C, g.cfg.LDC, g.lda
	full := (m1 - m0) / bf16MR // full tiles
	for pc := 0; pc < cfg.K; pc += bf16KC {
		kc := min(bf16KC, cfg.K-pc)
		kcp := (kc + 1) / 2
		blk := g.run.B.block(pc, kc)
		flags := uint(0)
		if pc > 0 {
			flags = gemmAccumulate
		}
		a := g.abuf[pc/2:] // step pc of row 0
		if m1-m0 == 1 {
			g.gemvRow(tile, a[m0*lda:m0*lda+kcp], blk, kcp, m0, n0, n1, flags)
			continue
		}
		for jr := n0; jr < n1; jr += bf16NR {
			cols := min(bf16NR, n1-jr)
			bpan := blk[jr*kcp : (jr+bf16NR)*kcp]
			ir := m0
			if cols == bf16NR && full > 0 {
				_ = a[(m0+bf16MR*full-1)*lda+kcp-1] // every tile's rows are inside the buffer
				_ = c[(m0+bf16MR*full-1)*ldc+jr+bf16NR-1]
				v.panel(full, kcp, &a[m0*lda], lda, &bpan[0], &c[m0*ldc+jr], ldc, flags)
				ir += bf16MR * full
			}
			for ; ir < m1; ir += bf16MR {
				rows := min(bf16MR, m1-ir)
				_ = a[(ir+bf16MR-1)*lda+kcp-1] // the padded rows are inside the buffer too
				v.panel(1, kcp, &a[ir*lda], lda, &bpan[0], &tile[0], bf16NR, 0)
				for r := range rows {
					gemmMerge(c[(ir+r)*ldc+jr:(ir+r)*ldc+jr+cols], tile[r*bf16NR:r*bf16NR+cols], flags&gemmAccumulate != 0)
				}
			}
		}
	}
	g.epilogue(m0, m1-m0, n0, n1-n0)
}

// gemvRow computes columns [n0, n1) of C's row i for one depth block
// (kcp pairs of a, panels of blk): full panels in one call of the
// variant's one-row kernel, a last partial one through the scratch tile.
func (g *GemmBF16) gemvRow(tile []float32, a, blk []uint32, kcp, i, n0, n1 int, flags uint) {
	c := g.run.C[i*g.cfg.LDC:]
	pstride := kcp * bf16NR
	if full := (n1 - n0) / bf16NR; full > 0 {
		_ = blk[n0*kcp+(full-1)*pstride+pstride-1] // the panels are inside the block
		_ = c[n0+full*bf16NR-1]
		g.v.gemv(kcp, full, &a[0], &blk[n0*kcp], pstride, &c[n0], flags)
		n0 += full * bf16NR
	}
	if n0 < n1 {
		_ = blk[n0*kcp+pstride-1]
		g.v.gemv(kcp, 1, &a[0], &blk[n0*kcp], pstride, &tile[0], 0)
		gemmMerge(c[n0:n1], tile[:n1-n0], flags&gemmAccumulate != 0)
	}
}

// epilogue applies the run's epilogue, if any, to a finished block.
func (g *GemmBF16) epilogue(i0, rows, j0, cols int) {
	if ep := g.run.Epilogue; ep != nil {
		ep.apply(g.run.C, 0, g.cfg.LDC, 0, i0, rows, j0, cols)
	}
}
