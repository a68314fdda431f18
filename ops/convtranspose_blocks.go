package ops

import (
	"math/bits"

	"github.com/kilnml/kiln/ops/asm"
)

// A 1-D or 2-D ConvTranspose at stride 2 along its rows runs a block of
// input rows at a time instead of through one col matrix, where the
// output channels split evenly over the workers and the row kernels
// have a vector ZipSumRows. Each worker owns a share of the output
// channels, in chunks; for each chunk and each block of input rows it
// runs the product of the chunk's taps by the block's rows (a serial
// GEMM) into a scratch of its own (at most convTBlockBytes), then writes
// every output row those rows complete, once: each output pair of
// columns is the bias plus the taps landing there, the even and odd
// columns' taps summed and interleaved by ZipSumRows (no fill, no
// read-modify-write of the output). The last input rows of a block stay
// in front of the next block's (a halo) for the output rows that read
// both. The col matrix (taps times the input: 1.2 MB for a 64→32 channel
// 3×3 decoder step at 32², past the L2) was written by one pass and
// read back by strided adds of every tap, on two threads half of it by
// the other core; here it never leaves the core that made it.

// convTBlockBytes is the most a worker's product scratch holds (the
// block of input rows is cut to fit): 2 MiB measured best at two
// threads against 0.5 and 1 (×GEMM rate, AVX-512, 3 rounds: a 64→32
// channel 3×3 stride-2 step at 32² 0.93-1.17 against 0.79-1.11 and
// 0.81-1.18, a 128→64 channel 4×4 DCGAN step at 16² 0.99-1.06 against
// 0.72-0.88 and 0.88-1.00): fewer blocks cost fewer GEMM calls and halo
// copies, and the scratch stays in the last-level cache if not in L2.
// convTChunkRows is about the most product rows (channel taps) in one
// chunk. Variables so tests can force many blocks and chunks on small
// shapes.
var (
	convTBlockBytes = 2 << 20
	convTChunkRows  = 512
)

// convTChunk is a run of output channels [c0, c1) of one group.
type convTChunk struct{ group, c0, c1 int }

// convTWorker is one worker's share: its chunks, its serial GEMM plan
// (plans keep packing buffers, so each worker has its own) and scratch.
type convTWorker struct {
	chunks []convTChunk
	gemm   *asm.Gemm
	args   asm.GemmArgs
	col    []float32
	calls  []zipCall // a run's ZipSumRows calls
	err    error     // the first product that failed in this run
	_      [128]byte // written during runs: kept out of the next worker's cache lines (asm's workerPad)
}

type convTBlocks struct {
	f         *convTFast
	blockRows int // input rows per block
	halo      int // input rows of the block before that later output rows read
	ldc       int // row stride of the scratch: halo + blockRows input rows
	pad       int // cells before the scratch's first row and after its last
	workers   []convTWorker
	body      func(lo, hi int)
	x, w      []float32 // the current run's input and weights
}

// newConvTBlocks returns the blocked plan of f, or nil where it does not
// apply: a 3-D geometry, a stride other than 2 along the rows, no vector
// ZipSumRows, more than 16 taps landing on one output row, or output
// channels that do not split evenly over the workers (within 15%) or
// leave one of several idle: there the shared GEMM and col2im serve
// better. One worker runs blocks too: a 64→32 channel 3×3 stride-2 step
// at 64² ran at 0.78-0.82 of the GEMM's rate in blocks against 0.70-0.74
// as one whole-image block (AVX-512; AVX2 0.87-0.88 against 0.80-0.83),
// alike at 32², where one block holds it all.
func newConvTBlocks(f *convTFast, gv *asm.GemmVariant) (*convTBlocks, error) {
	g := &f.convTGeom
	if g.in[0] != 1 || g.k[0] != 1 || g.out[0] != 1 || g.pb[0] != 0 || g.s[2] != 2 || !f.rows.ZipSumVector() ||
		g.k[1] > 64 {
		return nil, nil
	}
	workers := min(max(f.env.Threads, 1), g.m)
	if per := (g.m + workers - 1) / workers; float64(per*workers) > 1.15*float64(g.m) || workers < f.env.Threads && workers < 2 {
		return nil, nil
	}
	p := &convTBlocks{f: f, workers: make([]convTWorker, workers)}
	for oy := range g.out[1] { // ZipSumRows sums at most 16 sources
		if bits.OnesCount64(p.rowTaps(oy))*g.k[2] > 16 {
			return nil, nil
		}
	}
	// Chunks of about convTChunkRows product rows, even within a share.
	most := 0
	for w := range p.workers {
		lo, hi := g.m*w/workers, g.m*(w+1)/workers
		for lo < hi {
			gi := lo / g.mpg
			end := min(hi, (gi+1)*g.mpg)
			parts := max(((end-lo)*g.kSz+convTChunkRows-1)/convTChunkRows, 1)
			for q := range parts {
				c0, c1 := lo+(end-lo)*q/parts, lo+(end-lo)*(q+1)/parts
				if c1 > c0 {
					p.workers[w].chunks = append(p.workers[w].chunks, convTChunk{gi, c0, c1})
					most = max(most, c1-c0)
				}
			}
			lo = end
		}
	}
	rows := most * g.kSz
	p.halo = min(((g.k[1]-1)*g.d[1]+g.s[1]-1)/g.s[1], g.in[1])
	p.blockRows = min(max(convTBlockBytes/(4*rows*g.in[2])-p.halo, 1), g.in[1])
	p.ldc = (p.halo + p.blockRows) * g.in[2]
	// Room for the reads of the main ZipSumRows calls past either end.
	pairs, shift := (g.out[2]+1)/2, 0
	for kx := range g.k[2] {
		for px := range 2 {
			if sh, ok := p.colShift(kx, px); ok {
				shift = max(shift, sh, -sh)
			}
		}
	}
	p.pad = max(pairs-g.in[2], 0) + shift
	for w := range p.workers {
		gm, err := asm.NewGemm(asm.GemmConfig{M: rows, N: p.blockRows * g.in[2], K: g.cpg, TransA: true, Alpha: 1,
			LDA: g.mpg * g.kSz, LDB: g.inSz, LDC: p.ldc}, gv, asm.Par{})
		if err != nil {
			return nil, err
		}
		p.workers[w].gemm, p.workers[w].col = gm, make([]float32, p.pad+rows*p.ldc+p.pad)
	}
	p.body = p.runWorkers
	return p, nil
}

// run computes every image of x through weights w into y.
func (p *convTBlocks) run(x, w, y []float32) error {
	p.x, p.w, p.f.dst = x, w, y
	p.f.env.For(len(p.workers), 1, p.body)
	p.x, p.w, p.f.dst = nil, nil, nil
	for i := range p.workers {
		if err := p.workers[i].err; err != nil {
			p.workers[i].err = nil
			return err
		}
	}
	return nil
}

func (p *convTBlocks) runWorkers(lo, hi int) {
	for w := lo; w < hi; w++ {
		p.runWorker(&p.workers[w])
	}
}

// runWorker runs worker wk's channels of every image, chunk by chunk,
// block by block.
func (p *convTBlocks) runWorker(wk *convTWorker) {
	g := &p.f.convTGeom
	wk.err = nil
	for b := range g.n {
		x := p.x[b*g.c*g.inSz : (b+1)*g.c*g.inSz]
		y := p.f.dst[b*g.m*g.outSz : (b+1)*g.m*g.outSz]
		for _, ch := range wk.chunks {
			done := 0 // output rows written
			for iy0 := 0; iy0 < g.in[1]; iy0 += p.blockRows {
				iy1 := min(iy0+p.blockRows, g.in[1])
				if iy0 > 0 { // the halo: the last rows of the block before
					for r := range (ch.c1 - ch.c0) * g.kSz {
						row := wk.col[p.pad+r*p.ldc:][:p.ldc]
						copy(row[:p.halo*g.in[2]], row[p.blockRows*g.in[2]:])
					}
				}
				if wk.err = p.product(wk, ch, x, iy0, iy1); wk.err != nil {
					return
				}
				// Rows above the first that the next block's first input
				// row reaches read this block's rows only.
				end := g.out[1]
				if iy1 < g.in[1] {
					end = min(max(iy1*g.s[1]-g.pb[1], done), end)
				}
				p.writeRows(wk, y, ch, iy0-p.halo, done, end)
				done = end
			}
		}
	}
}

// product runs chunk ch's rows of the product (its channels' taps) by
// input rows [iy0, iy1) of image x into the worker's scratch, after the
// halo.
func (p *convTBlocks) product(wk *convTWorker, ch convTChunk, x []float32, iy0, iy1 int) error {
	g := &p.f.convTGeom
	a := &wk.args
	a.A = p.w[ch.group*g.cpg*g.mpg*g.kSz+(ch.c0-ch.group*g.mpg)*g.kSz:]
	a.B = x[ch.group*g.cpg*g.inSz+iy0*g.in[2]:]
	a.C = wk.col[p.pad+p.halo*g.in[2]:]
	a.M, a.N = (ch.c1-ch.c0)*g.kSz, (iy1-iy0)*g.in[2]
	err := wk.gemm.Run(a)
	a.A, a.B, a.C = nil, nil, nil
	return err
}

// writeRows writes output rows [r0, r1) of chunk ch's channels from the
// scratch, whose first row is input row base. Rows of one phase (row
// mod stride) whose taps all land inside the input go as one run, the
// run's ZipSumRows calls worked out once for all the chunk's channels
// (a channel's sources are its first tap's product row on).
func (p *convTBlocks) writeRows(wk *convTWorker, y []float32, ch convTChunk, base, r0, r1 int) {
	g, f := &p.f.convTGeom, p.f
	s, od := g.s[1], g.out
	for py := range s {
		oy := r0 + ((py-r0)%s+s)%s // the first row of phase py
		for oy < r1 {
			// A run: rows oy, oy+s, … reading the same taps.
			taps := p.rowTaps(oy)
			n := 1
			for next := oy + s; next < r1 && p.rowTaps(next) == taps; next += s {
				n++
			}
			wk.calls = p.runCalls(wk.calls[:0], base, oy, taps)
			for c := ch.c0; c < ch.c1; c++ {
				var bv float32
				if f.bias != nil {
					bv = f.bias[c]
				}
				plane := y[c*g.outSz+oy*od[2]:]
				src := wk.col[(c-ch.c0)*g.kSz*p.ldc:]
				for i := range wk.calls {
					cl := &wk.calls[i]
					f.rows.ZipSumRows(plane[cl.at:], s*od[2], src, cl.offs[:cl.nt], cl.ne, g.in[2], n, cl.w, bv)
				}
			}
			oy += n * s
		}
	}
}

// zipCall is one ZipSumRows call of a run: the output column it starts
// at, how many outputs a row, and its sources (the first ne the even
// columns').
type zipCall struct {
	at, w, ne, nt int
	offs          [16]int
}

// runCalls appends to calls those of the run of rows from oy whose
// kernel rows are the set taps, for the first channel of a chunk whose
// scratch starts at input row base: every column pair with every tap in
// one call (at the ends of a row a tap reads past its input row, into
// the row beside or the scratch's pad), then each pair at the ends
// where a tap lands outside the input again, with the taps that land
// inside, over what the first call wrote there.
func (p *convTBlocks) runCalls(calls []zipCall, base, oy int, taps uint64) []zipCall {
	g := &p.f.convTGeom
	pairs := (g.out[2] + 1) / 2
	lo, hi := 0, pairs // the pairs where every tap lands inside
	for kx := range g.k[2] {
		for px := range 2 {
			if sh, ok := p.colShift(kx, px); ok {
				lo, hi = max(lo, -sh), min(hi, g.in[2]-sh)
			}
		}
	}
	add := func(j0, j1 int, all bool) {
		c := zipCall{at: 2 * j0, w: min(2*(j1-j0), g.out[2]-2*j0)}
		for px := range 2 {
			for ky := range g.k[1] {
				if taps&(1<<ky) == 0 {
					continue
				}
				iy := (oy + g.pb[1] - ky*g.d[1]) / g.s[1]
				for kx := range g.k[2] {
					sh, ok := p.colShift(kx, px)
					if !ok || !all && (j0+sh < 0 || j0+sh >= g.in[2]) {
						continue
					}
					c.offs[c.nt] = p.pad + (ky*g.k[2]+kx)*p.ldc + (iy-base)*g.in[2] + j0 + sh
					c.nt++
				}
			}
			if px == 0 {
				c.ne = c.nt
			}
		}
		calls = append(calls, c)
	}
	if lo < hi { // every pair, those at the ends rewritten below
		add(0, pairs, true)
	} else {
		lo, hi = 0, 0
	}
	for j := range lo {
		add(j, j+1, false)
	}
	for j := hi; j < pairs; j++ {
		add(j, j+1, false)
	}
	return calls
}

// colShift returns, for tap column kx and output column parity px, the
// shift sh such that output column 2j+px reads input column j+sh, or
// false if the tap never lands on that parity.
func (p *convTBlocks) colShift(kx, px int) (int, bool) {
	g := &p.f.convTGeom
	v := px + g.pb[2] - kx*g.d[2]
	if v%2 != 0 {
		return 0, false
	}
	return v / 2, true
}

// rowTaps is the set of kernel rows (bit ky) whose taps land on output
// row oy from a row of the input.
func (p *convTBlocks) rowTaps(oy int) uint64 {
	g := &p.f.convTGeom
	var set uint64
	for ky := range g.k[1] {
		if v := oy + g.pb[1] - ky*g.d[1]; v >= 0 && v%g.s[1] == 0 && v/g.s[1] < g.in[1] {
			set |= 1 << ky
		}
	}
	return set
}
