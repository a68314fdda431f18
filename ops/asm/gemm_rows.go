package asm

import "unsafe"

// Products of a few rows (an LSTM's step, h [2×48] times its recurrent
// weights [48×192]; a small batch through a dense layer). The micro-tile
// path packs A into an MR-row panel mostly of zeros, runs a 4-row kernel
// per 16-column panel, through scratch where its rows are not the
// block's, and merges the rows back: on that LSTM step the packing and
// the per-panel calls were most of the time. A block of at most
// fewRowsMax rows instead runs the variant's fewRows kernel over groups
// of fewRowsPanels column panels, reading A where it is (either way
// round: the kernel takes a row and a step stride) and storing straight
// into C; only the columns past the last whole group take the tile path.

const (
	fewRowsMax    = 4 // the most rows a block may have for the fewRows kernel
	fewRowsPanels = 4 // column panels a fewRows call computes
)

// fewCols is how many of a block's nc columns (mc rows) go through the
// fewRows kernel: whole groups of its panels, or none.
func (g *Gemm) fewCols(mc, nc int) int {
	v := g.v
	if v.fewRows == nil || mc > fewRowsMax {
		return 0
	}
	w := fewRowsPanels * v.nr
	return nc / w * w
}

// fewGemv reports whether a one-row product by a prepacked B runs
// through blocks and the fewRows kernel rather than the GEMV kernel: B's
// columns are whole groups of the kernel's panels, or enough of them that
// the rest, on the tile path, weigh little (1×1024×1024: 55-57 → 49-52 µs;
// 1×192×48: 0.41-0.47 → 0.21-0.34 µs; 1×100×256 took 2.4 µs through blocks
// against 1.0 on the GEMV kernel, most of it the tail). The choice
// depends on the plan's N only, never on how a run splits the columns
// over workers: the two paths' sums differ in their last bits (the GEMV
// kernel keeps four partial sums a column).
func (g *Gemm) fewGemv() bool {
	w := fewRowsPanels * g.v.nr
	return g.run.PackedB != nil && g.v.fewRows != nil && g.cfg.N >= w && (g.cfg.N%w == 0 || g.cfg.N >= fewGemvTailFree)
}

// fewGemvTailFree is the least N whose one-row products take the fewRows
// kernel with a tail of columns on the tile path.
const fewGemvTailFree = 1024

// fewRowsGroup computes rows [ic, ic+mc) of the fewRowsPanels·NR columns
// of C from offset ci, depth block [pc, pc+kc) of product e's A (offset
// ao) by the packed panels bp.
func (g *Gemm) fewRowsGroup(kc, mc, ao, ic, pc int, bp []float32, ci int, flags uint) {
	cfg, v, a, c := &g.cfg, g.v, g.run.A, g.run.C
	start, rs, ps := ao+ic*cfg.LDA+pc, cfg.LDA, 1 // row-major A
	if cfg.TransA {
		start, rs, ps = ao+pc*cfg.LDA+ic, 1, cfg.LDA
	}
	w := fewRowsPanels * v.nr
	_ = a[start+(mc-1)*rs+(kc-1)*ps] // the rows' steps are inside A
	b := bp[:w*kc]
	_ = c[ci+(mc-1)*cfg.LDC+w-1] // the rows are inside C
	v.fewRows(mc, kc, &a[start], 4*rs, 4*ps, &b[0], &c[ci], cfg.LDC, flags&gemmAccumulate)
}

// gemmRowsGo is the pure-Go twin of the fewRows kernels (16-column
// panels): each sum over p in order, as gemmKernelRowsx16Go takes it.
func gemmRowsGo(rows, k int, a *float32, rs, ps int, b, c *float32, ldc int, flags uint) {
	acc := flags&gemmAccumulate != 0
	for r := range rows {
		for q := range fewRowsPanels {
			for j := range 16 {
				var s float32
				for p := range k {
					x := *(*float32)(unsafe.Add(unsafe.Pointer(a), r*rs+p*ps))
					y := *(*float32)(unsafe.Add(unsafe.Pointer(b), 4*((q*k+p)*16+j)))
					s += x * y
				}
				at := (*float32)(unsafe.Add(unsafe.Pointer(c), 4*(r*ldc+q*16+j)))
				if acc {
					s += *at
				}
				*at = s
			}
		}
	}
}
