package asm

import (
	"fmt"
	"unsafe"
)

// Packing copies blocks of op(A) and op(B) into the order the micro-kernel
// reads them: A in panels of MR rows stored step by step (kc×MR), B in
// panels of NR columns (kc×NR). Panels past the matrix edge are padded
// with zeros, so every tile computes full width and the extra rows and
// columns are simply not written back. Transposes are resolved here: the
// kernels only ever see packed panels.

// packA packs op(A)[i0:i0+mc, p0:p0+kc] into ceil(mc/mr) panels of
// kc×mr (unscaled: Alpha multiplies the finished sums, see
// Gemm.epilogue).
func packA(v *GemmVariant, dst, a []float32, cfg *GemmConfig, i0, mc, p0, kc int) {
	mr := v.mr
	lda := cfg.LDA
	for ir := 0; ir < mc; ir += mr {
		rows := min(mr, mc-ir)
		pan := dst[ir*kc : (ir+mr)*kc]
		switch {
		case cfg.TransA && rows == mr && (mr == 12 || mr == 6):
			// A is stored K×M: one step's rows are contiguous, copied
			// as a fixed-size array (inline moves: copy's call cost
			// was most of the packing for twelve floats).
			for p := range kc {
				src := a[(p0+p)*lda+i0+ir:][:mr]
				if mr == 12 {
					*(*[12]float32)(pan[p*12:]) = *(*[12]float32)(src)
				} else {
					*(*[6]float32)(pan[p*6:]) = *(*[6]float32)(src)
				}
			}
		case cfg.TransA:
			// A is stored K×M: one step's rows are contiguous.
			for p := range kc {
				src := a[(p0+p)*lda+i0+ir:][:rows]
				d := pan[p*mr : p*mr+mr]
				copy(d, src)
				clear(d[rows:])
			}
		case rows == mr && kc >= 8 && v.packA != nil:
			// A full panel: the variant's packer for whole groups of
			// eight steps, Go for the last kc%8.
			src := a[(i0+ir)*lda+p0:]
			_ = src[(mr-1)*lda+kc-1] // the row segments are inside A
			k8 := kc / 8
			v.packA(k8, &src[0], lda, &pan[0])
			for p := 8 * k8; p < kc; p++ {
				for r := range mr {
					pan[p*mr+r] = src[r*lda+p]
				}
			}
		case (mr == 6 || mr == 12) && kc <= len(gemmZeroRow):
			var src [12]*float32
			for r := range mr {
				if r < rows {
					row := a[(i0+ir+r)*lda+p0:][:kc] // the row segment is inside A
					src[r] = &row[0]
				} else {
					src[r] = &gemmZeroRow[0] // a panel past M's edge reads zeros
				}
			}
			if mr == 6 {
				pack6(pan[:6*kc], (*[6]*float32)(src[:6]), kc)
			} else {
				pack12(pan[:12*kc], &src, kc)
			}
		default:
			for r := range mr {
				if r >= rows {
					for p := range kc {
						pan[p*mr+r] = 0
					}
					continue
				}
				src := a[(i0+ir+r)*lda+p0:][:kc]
				for p, x := range src {
					pan[p*mr+r] = x
				}
			}
		}
	}
}

// gemmZeroRow stands in for rows past the edge of A.
var gemmZeroRow [1024]float32

// pack6 interleaves six rows of kc floats: dst[p*6+r] = src[r][p]. The
// caller has checked that dst holds 6*kc floats and each row kc; indexing
// through unsafe.Add keeps bounds checks out of the loop, which otherwise
// cost as much as the copying.
func pack6(dst []float32, src *[6]*float32, kc int) {
	d := unsafe.Pointer(&dst[:6*kc][0])
	s0, s1, s2 := unsafe.Pointer(src[0]), unsafe.Pointer(src[1]), unsafe.Pointer(src[2])
	s3, s4, s5 := unsafe.Pointer(src[3]), unsafe.Pointer(src[4]), unsafe.Pointer(src[5])
	for p := range kc {
		o := (*[6]float32)(unsafe.Add(d, 24*p))
		o[0] = *(*float32)(unsafe.Add(s0, 4*p))
		o[1] = *(*float32)(unsafe.Add(s1, 4*p))
		o[2] = *(*float32)(unsafe.Add(s2, 4*p))
		o[3] = *(*float32)(unsafe.Add(s3, 4*p))
		o[4] = *(*float32)(unsafe.Add(s4, 4*p))
		o[5] = *(*float32)(unsafe.Add(s5, 4*p))
	}
}

// pack12 interleaves twelve rows of kc floats, dst[p*12+r] = src[r][p],
// as pack6 does six (the AVX-512 variant's panels).
func pack12(dst []float32, src *[12]*float32, kc int) {
	d := unsafe.Pointer(&dst[:12*kc][0])
	var s [12]unsafe.Pointer
	for r, p := range src {
		s[r] = unsafe.Pointer(p)
	}
	for p := range kc {
		o := (*[12]float32)(unsafe.Add(d, 48*p))
		for r := range s {
			o[r] = *(*float32)(unsafe.Add(s[r], 4*p))
		}
	}
}

// packB packs op(B)[p0:p0+kc, j0:j0+nc] into ceil(nc/nr) panels of kc×nr,
// full 16-column strips of a row-major B with v's packers (four at a
// time where it can).
func packB(v *GemmVariant, dst, b []float32, cfg *GemmConfig, p0, kc, j0, nc int) {
	nr, ldb := v.nr, cfg.LDB
	for jr := 0; jr < nc; jr += nr {
		cols := min(nr, nc-jr)
		pan := dst[jr*kc : (jr+nr)*kc]
		switch {
		case cfg.TransB:
			packBTransposed(pan, b[(j0+jr)*ldb+p0:], ldb, kc, nr, cols)
		case nr == 16 && jr+64 <= nc:
			src := b[p0*ldb+j0+jr:]
			_ = src[(kc-1)*ldb+63]        // the four strips are inside B
			_ = dst[(jr+3*nr)*kc+16*kc-1] // and their panels inside dst
			v.packB64(kc, &src[0], ldb, &pan[0], nr*kc)
			jr += 3 * nr
		case cols == 16 && nr == 16:
			src := b[p0*ldb+j0+jr:]
			_ = src[(kc-1)*ldb+15] // the strip is inside B
			v.packB16(kc, &src[0], ldb, &pan[0])
		default:
			for p := range kc {
				d := pan[p*nr : p*nr+nr]
				copy(d, b[(p0+p)*ldb+j0+jr:][:cols])
				clear(d[cols:])
			}
		}
	}
}

// packBTransposed packs one panel of a B stored N×K: column c of the
// panel is row c of b (cols rows, ldb apart, kc long), and the panel's
// columns from cols to nr are zero. Its 8×8 blocks go through the row
// kernels' transpose primitive (AVX2: 0.27 ns an element against 0.6-0.8
// for the Go blocks below, which take the edges; a 896×64 K of attention).
func packBTransposed(pan, b []float32, ldb, kc, nr, cols int) {
	r8, p8 := cols&^7, kc&^7
	if r8 > 0 && p8 > 0 {
		_ = b[(r8-1)*ldb+p8-1]  // the block's last source word
		_ = pan[(p8-1)*nr+r8-1] // and where it goes
		BestRows().transpose8((*uint32)(unsafe.Pointer(&pan[0])), nr, (*uint32)(unsafe.Pointer(&b[0])), ldb, r8, p8)
		transposeRect(pan, b, ldb, nr, 0, r8, p8, kc) // the last kc%8 steps
	} else {
		r8 = 0
	}
	transposeRect(pan, b, ldb, nr, r8, cols, 0, kc) // the last cols%8 columns
	for p := range kc {
		clear(pan[p*nr+cols : (p+1)*nr])
	}
}

// transposeRect sets pan[p*nr+c] = b[c*ldb+p] for c in [c0, c1) and p in
// [p0, p1). Blocks of four rows by four steps are moved through locals,
// so each panel row is written in runs of four and each source row read
// in runs of four: 0.9 ns an element on Zen 5 where writing one panel
// column at a time (stores nr floats apart) took 1.7.
func transposeRect(pan, b []float32, ldb, nr, c0, c1, p0, p1 int) {
	c4, p4 := c0+(c1-c0)&^3, p0+(p1-p0)&^3
	for c := c0; c < c4; c += 4 {
		r0, r1 := b[c*ldb:][:p1], b[(c+1)*ldb:][:p1]
		r2, r3 := b[(c+2)*ldb:][:p1], b[(c+3)*ldb:][:p1]
		for p := p0; p < p4; p += 4 {
			a, e, f, g := r0[p:p+4:p+4], r1[p:p+4:p+4], r2[p:p+4:p+4], r3[p:p+4:p+4]
			d := pan[p*nr+c:][:3*nr+4]
			d[0], d[1], d[2], d[3] = a[0], e[0], f[0], g[0]
			d[nr], d[nr+1], d[nr+2], d[nr+3] = a[1], e[1], f[1], g[1]
			d[2*nr], d[2*nr+1], d[2*nr+2], d[2*nr+3] = a[2], e[2], f[2], g[2]
			d[3*nr], d[3*nr+1], d[3*nr+2], d[3*nr+3] = a[3], e[3], f[3], g[3]
		}
		for p := p4; p < p1; p++ {
			d := pan[p*nr+c:][:4]
			d[0], d[1], d[2], d[3] = r0[p], r1[p], r2[p], r3[p]
		}
	}
	for c := c4; c < c1; c++ {
		for p := p0; p < p1; p++ {
			pan[p*nr+c] = b[c*ldb+p]
		}
	}
}

// PackedB is op(B) packed once for a plan's variant, for a B that does
// not change between runs (weights): running then skips B's packing. The
// layout is KC-deep blocks, each holding every NR-column panel.
type PackedB struct {
	v       *GemmVariant
	k, n    int
	npad    int // N rounded up to NR
	data    []float32
	Version uint64 // free for the owner: e.g. the weights version it was packed from
}

func (pb *PackedB) variantName() string {
	if pb.v == nil {
		return "no variant"
	}
	return pb.v.Name
}

// Bytes is the size of the packed buffer.
func (pb *PackedB) Bytes() int { return 4 * len(pb.data) }

// PackB packs b (op(B) as the plan's config describes it) into pb,
// reusing pb's buffer when it is large enough.
func (g *Gemm) PackB(pb *PackedB, b []float32) error { return g.PackBDims(pb, b, 0, 0) }

// PackBDims packs the first k rows and n columns of op(B) (0: as
// planned), for runs with GemmArgs.K = k and N at most n.
func (g *Gemm) PackBDims(pb *PackedB, b []float32, k, n int) error {
	full := g.gemmSizes
	defer func() { g.gemmSizes = full }()
	if err := g.shrink(0, n, k); err != nil {
		return err
	}
	cfg, v := &g.cfg, g.v
	if len(b) < g.needB {
		return fmt.Errorf("asm: gemm: B has %d elements, needs %d", len(b), g.needB)
	}
	npad := gemmRoundUp(cfg.N, v.nr)
	size := cfg.K * npad
	if cap(pb.data) < size {
		pb.data = make([]float32, size)
	}
	pb.v, pb.k, pb.n, pb.npad, pb.data = v, cfg.K, cfg.N, npad, pb.data[:size]
	if cfg.N == 0 {
		return nil
	}
	for pc := 0; pc < cfg.K; pc += v.kc {
		kc := min(v.kc, cfg.K-pc)
		packB(v, pb.data[pc*npad:pc*npad+kc*npad], b, cfg, pc, kc, 0, cfg.N)
	}
	return nil
}

// block returns the panels of depth block [pc, pc+kc) covering columns
// [jc, jc+nc); jc is a multiple of NR.
func (pb *PackedB) block(pc, kc, jc, nc int) []float32 {
	base := pc*pb.npad + jc*kc
	return pb.data[base : base+gemmRoundUp(nc, pb.v.nr)*kc]
}

// bBlock returns the packed B of depth block [pc, pc+kc) and columns
// [jc, jc+nc): the caller's pre-packed block, or one packed into s now.
func (g *Gemm) bBlock(s *gemmScratch, bo, pc, kc, jc, nc int) []float32 {
	if pb := g.run.PackedB; pb != nil {
		return pb.block(pc, kc, jc, nc)
	}
	s.ensureB(g)
	bp := s.b[:gemmRoundUp(nc, g.v.nr)*kc]
	packB(g.v, bp, g.run.B[bo:], &g.cfg, pc, kc, jc, nc)
	return bp
}
