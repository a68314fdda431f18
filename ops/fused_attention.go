package ops

import (
	"math"
	"sync/atomic"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// The fast F32 Attention kernel is flash-style: for a block of queries it
// walks the keys in blocks, computing the block's scores with one GEMM,
// folding them into a running (online) softmax — per query row the
// largest score m and the sum l of exp(score - m) so far, the output rows
// rescaled whenever m grows — and accumulating P·V with a second GEMM
// straight into the output rows. Memory is one bq×bk score block per
// worker, never the [Sq, Sk] score matrix, plus one head's keys and
// values packed for the GEMMs, which each worker packs once per head it
// computes. Causal key blocks that no query of the block can see are
// skipped, and so are the keys a padding mask provably zeroes
// (fused_attention_keys.go). Work is split over the workers by (batch, head) when there are
// heads enough, else by (batch, head, query block).

func init() {
	RegisterFast(graph.OpAttention, prepareAttentionFlash)
}

// Block sizes: a 252×512 score block (~512 KiB) stays in a 1 MiB L2 next
// to the packed panels. Longer key blocks mean fewer passes of the row
// kernels and fewer packings of the query block: 4% faster than 256×256
// on Zen 5 at sequence 1024 (BenchmarkAttention in fuse, CPU time). 252
// query rows, a multiple of the GEMM's 6-row tile, leave no 4-row tail
// tile to each key panel: 1.5-2.3% faster than 256 at one thread, 0-1.5%
// at two, at sequence 1024 (interleaved runs), though the last of its
// five query blocks has 16 rows. Variables so benchmarks and tests can
// change them.
var (
	flashBQ = 252
	flashBK = 512
	// flashInPlaceA: the value product reads the probabilities where the
	// softmax leaves them (asm.GemmConfig.InPlaceA) instead of packing
	// them first.
	flashInPlaceA = true
	// flashPad is how far the score block's rows run past bk: 16 keeps
	// them 64-byte aligned (no stores split across lines; 1-2.5% faster
	// than the 1 that only broke the power-of-two stride) while 2112-byte
	// strides still spread a tile's six rows over distinct L1 sets.
	flashPad = 16
)

type flashPlan struct {
	b, h, hk, sq, sk, d, dv int
	group                   int
	scale                   float32
	causal                  bool
	// rawScale: no mask and no causality, and a positive finite scale, so
	// the block's raw scores go straight to the exponential, which scales
	// them (the max of the scaled scores is the scaled max). A head whose
	// kept keys all have mask 0 runs so too (flashWorker.raw).
	rawScale bool
	scaleOK  bool // a positive finite scale
	// padding: the mask is the same for every head and query row and
	// there is no causality, so keys the mask removes for certain can be
	// left out of both products (fused_attention_keys.go).
	padding  bool
	kvLen    bool // the last input is I64 [B]: the keys in use per batch
	mask     int
	mst      []int
	bq, bk   int
	ld       int // row stride of the score block: bk + flashPad
	nqb, nkb int
	tasks    int
	whole    int // tasks of a whole head (nqb blocks), handed out first; the rest are single blocks
	rk       *asm.RowKernels
}

// flashWorker is one worker's scratch: a score block, per query row the
// running max m and the running sum l of the weights (the output rows
// hold the unnormalised output until the end), and GEMM plans
// indexed by [last query block][last key block] (edge blocks have other
// shapes).
type flashWorker struct {
	s, m, l []float32
	mx      []float32 // per query row, the max of the block's masked scores
	// GEMM plans by whether the query block is the last (edge) one;
	// shorter key blocks run them with GemmArgs.N (scores) and K (values).
	qk, pv [2]*asm.Gemm
	// kvh is the key/value head whose blocks pk (Kᵀ) and pvb (V) hold
	// packed, -1 for none: a worker packs a head's keys and values once
	// for all the query blocks it computes of it, not once per block.
	kvh     int
	pk, pvb []asm.PackedB
	qkArgs  asm.GemmArgs
	pvArgs  asm.GemmArgs
	err     error // the first GEMM failure of a run
	// The keys of head kvh the blocks run over (fused_attention_keys.go):
	// all sk in place, or the nkeys a padding mask leaves gathered into
	// kg and vg with their mask values in maskc; poison marks the output
	// columns a removed key's non-finite value turns to NaN.
	nkeys         int
	sk            int // the keys head kvh has in use: p.sk, or its batch's KVLen
	gathered      bool
	kg, vg, maskc []float32
	keyHi         []float32 // per key, the bound chooseKeys compares
	poison        []bool
	// raw: the head's scores need no mask (none, or 0 for every key the
	// blocks run over) and go to the exponential as rawScale says.
	raw bool
}

func prepareAttentionFlash(nd *graph.Node, env Env) (Kernel, string, error) {
	if nd.DType != tensor.F32 {
		return nil, "", nil
	}
	if _, err := prepareAttention(nd); err != nil {
		return nil, "", nil // the reference kernel reports it
	}
	p := newFlashPlan(nd, env.Threads)
	workers := max(1, min(env.Threads, p.tasks))
	ws := make([]*flashWorker, workers)
	for i := range ws {
		w, err := p.newWorker()
		if err != nil {
			return nil, "", nil
		}
		ws[i] = w
	}
	var ins []tensor.Tensor
	var out tensor.Tensor
	var next atomic.Int64
	body := func(lo, hi int) {
		for c := lo; c < hi; c++ {
			// Workers take tasks as they free up, so a worker the OS
			// delays holds up no fixed share; the costliest causal blocks
			// (the last queries) go first.
			for t := int(next.Add(1)) - 1; t < p.tasks; t = int(next.Add(1)) - 1 {
				hi, n := p.taskBlocks(t)
				for i := 1; i <= n; i++ {
					p.block(ws[c], ins, out, hi-i)
				}
			}
		}
	}
	variant := "flash-" + asm.BestGemm().Name
	return sizeChecked(nd, func(in []tensor.Tensor, o tensor.Tensor) error {
		if p.sq == 0 || p.dv == 0 || p.b == 0 || p.h == 0 {
			return nil
		}
		ins, out = in, o
		next.Store(0)
		for _, w := range ws {
			w.kvh = -1 // new inputs: nothing packed yet
		}
		env.For(workers, 1, body)
		ins, out = nil, tensor.Tensor{}
		for _, w := range ws {
			if err := w.err; err != nil {
				w.err = nil
				return err
			}
		}
		return nil
	}), variant, nil
}

// newFlashPlan plans the kernel of a checked Attention node for threads
// workers.
func newFlashPlan(nd *graph.Node, threads int) *flashPlan {
	q, k, v := nd.Inputs[0].Shape, nd.Inputs[1].Shape, nd.Inputs[2].Shape
	p := &flashPlan{b: q[0], h: q[1], hk: k[1], sq: q[2], sk: k[2], d: q[3], dv: v[3],
		group: q[1] / k[1], causal: nd.Attrs.Causal, scale: nd.Attrs.Scale, kvLen: nd.Attrs.KVLen, rk: asm.BestRows()}
	if p.scale == 0 && p.d > 0 {
		p.scale = float32(1 / math.Sqrt(float64(p.d)))
	}
	masked := len(nd.Inputs) == 4
	if p.kvLen {
		masked = len(nd.Inputs) == 5
	}
	if masked {
		p.mask = maskAdd
		if nd.Inputs[3].DType == tensor.Bool {
			p.mask = maskBool
		}
		p.mst = tensor.BroadcastStrides(nd.Inputs[3].Shape, tensor.Shape{p.b, p.h, p.sq, p.sk})
	}
	p.scaleOK = p.scale > 0 && p.scale <= math.MaxFloat32
	p.rawScale = p.mask == maskNone && !p.causal && p.scaleOK
	// A KVLen input already cuts the keys short; the padding search
	// works over all sk keys, so it is left to graphs without one.
	p.padding = p.mask != maskNone && !p.causal && !p.kvLen && p.mst[1] == 0 && p.mst[2] == 0
	p.bq, p.bk = min(flashBQ, max(p.sq, 1)), min(flashBK, max(p.sk, 1))
	p.ld = p.bk + flashPad
	p.nqb, p.nkb = (p.sq+p.bq-1)/p.bq, (p.sk+p.bk-1)/p.bk
	// With heads enough to go round, a task is a whole head: its worker
	// then packs the head's keys and values once for all its queries.
	// But the last heads handed out, one per worker, go block by block,
	// so the workers finish together: with whole heads alone, one
	// stood idle for a median 1.3-1.8 ms of a 24 ms run (12 heads of
	// 1024 queries, two workers on this VM); splitting costs a packing
	// of those heads' keys per extra worker that takes part.
	p.setTasks(threads)
	return p
}

// setTasks splits the blocks into tasks for threads workers.
func (p *flashPlan) setTasks(threads int) {
	heads := p.b * p.h
	p.whole = 0
	if heads >= 4*threads {
		p.whole = heads - threads
	}
	p.tasks = p.whole + (heads-p.whole)*p.nqb
}

// taskBlocks returns task t's blocks: hi-1 down to hi-n. Tasks go out
// from the last block back (the costliest causal blocks first): whole
// heads, then single blocks.
func (p *flashPlan) taskBlocks(t int) (hi, n int) {
	all := p.b * p.h * p.nqb
	if t < p.whole {
		return all - t*p.nqb, p.nqb
	}
	return all - p.whole*p.nqb - (t - p.whole), 1
}

func (p *flashPlan) newWorker() (*flashWorker, error) {
	w := &flashWorker{s: make([]float32, p.bq*p.ld), m: make([]float32, p.bq), l: make([]float32, p.bq), mx: make([]float32, p.bq),
		kvh: -1, pk: make([]asm.PackedB, p.nkb), pvb: make([]asm.PackedB, p.nkb)}
	if p.sk == 0 {
		return w, nil
	}
	if p.padding {
		w.kg, w.vg, w.maskc = make([]float32, p.sk*p.d), make([]float32, p.sk*p.dv), make([]float32, p.sk)
		w.keyHi, w.poison = make([]float32, p.sk), make([]bool, p.dv)
	}
	for i, mq := range [2]int{p.bq, p.sq - (p.nqb-1)*p.bq} {
		var err error
		// The query rows are read in place (packing them again for each
		// key block cost ~1% of the kernel at 1024 tokens), so Alpha is
		// 1 and the scale is applied to the scores after (maskBlock,
		// softmaxBlock). That is also what the spelled-out form computes:
		// scaling q first underflows a subnormal q, turning q·Inf into
		// 0·Inf = NaN.
		w.qk[i], err = asm.NewGemm(asm.GemmConfig{M: mq, N: p.bk, K: p.d, TransB: true,
			LDA: p.d, LDB: p.d, LDC: p.ld, Alpha: 1, InPlaceA: true}, nil, asm.Par{})
		if err != nil {
			return nil, err
		}
		w.pv[i], err = asm.NewGemm(asm.GemmConfig{M: mq, N: p.dv, K: p.bk,
			LDA: p.ld, LDB: p.dv, LDC: p.dv, Alpha: 1, Accumulate: true, InPlaceA: flashInPlaceA}, nil, asm.Par{})
		if err != nil {
			return nil, err
		}
	}
	return w, nil
}

// block computes query block qb of head h of batch b (t = (b·H + h)·nqb + qb).
func (p *flashPlan) block(w *flashWorker, ins []tensor.Tensor, out tensor.Tensor, t int) {
	qb := t % p.nqb
	bh := t / p.nqb
	b, h := bh/p.h, bh%p.h
	i0 := qb * p.bq
	mq := min(p.bq, p.sq-i0)
	qe := 0
	if mq != p.bq {
		qe = 1
	}
	qs, ys := ins[0].F32(), out.F32()
	kvh := b*p.hk + h/p.group
	qrow := (bh*p.sq + i0) * p.d
	yrows := ys[(bh*p.sq+i0)*p.dv:][:mq*p.dv]
	m, l := w.m[:mq], w.l[:mq]
	for i := range m {
		m[i], l[i] = float32(math.Inf(-1)), 0
	}
	if w.kvh != kvh {
		p.packKV(w, ins, kvh)
	}
	_, vs := p.keysOf(w, ins, kvh)
	// The last key any query of the block may see.
	lastKey := w.nkeys - 1
	if p.causal {
		lastKey = min(lastKey, i0+mq-1+w.sk-p.sq)
	}
	end := 0 // keys [end, sk) are skipped: no query of the block sees them
	for kb := 0; kb < p.nkb && kb*p.bk <= lastKey; kb++ {
		j0 := kb * p.bk
		nk := min(p.bk, w.nkeys-j0)
		w.qkArgs = asm.GemmArgs{A: qs[qrow:], PackedB: &w.pk[kb], C: w.s, N: shorter(nk, p.bk)}
		if err := w.qk[qe].Run(&w.qkArgs); err != nil && w.err == nil {
			w.err = err
		}
		if !w.raw {
			p.maskBlock(w, ins, b, h, i0, mq, j0, nk)
		}
		p.softmaxBlock(w, yrows, mq, nk)
		// The first block's product overwrites the output rows, so they
		// need no zeroing (softmaxBlock leaves them alone until then).
		w.pvArgs = asm.GemmArgs{A: w.s, B: vs[j0*p.dv:], C: yrows, K: shorter(nk, p.bk), Overwrite: kb == 0}
		if p.bq > 1 {
			w.pvArgs.PackedB = &w.pvb[kb]
		}
		if err := w.pv[qe].Run(&w.pvArgs); err != nil && w.err == nil {
			w.err = err
		}
		end = j0 + nk
	}
	w.qkArgs, w.pvArgs = asm.GemmArgs{}, asm.GemmArgs{}
	if end == 0 {
		clear(yrows) // no block ran: rows of no keys (NaN below when keys were removed)
	}
	nan := float32(math.NaN())
	for i := range mq {
		row := yrows[i*p.dv : (i+1)*p.dv]
		if l[i] == 0 { // every key removed: softmax's 0/0; no keys: an empty sum
			if w.sk > 0 {
				for c := range row {
					row[c] = nan
				}
			}
			continue
		}
		// l is at least 1 (the row's largest weight) and at most sk, so
		// its reciprocal is exact to half an ulp and never subnormal.
		p.rk.Scale(row, 1/l[i])
	}
	if w.gathered {
		p.poisonColumns(w, yrows, mq)
	} else {
		p.skippedValues(vs, end, w.sk, yrows, mq)
	}
}

// shorter is n for a GemmArgs size when it is short of the planned full,
// else 0 (as planned).
func shorter(n, full int) int {
	if n == full {
		return 0
	}
	return n
}

// packKV packs every key block of head kvh, as Kᵀ for the score product
// and (unless products have one row) V for the value product, after
// choosing the keys the blocks run over (all, or those a padding mask
// leaves). A worker packs all blocks even if causality then skips some:
// its next query block of the head may need them.
func (p *flashPlan) packKV(w *flashWorker, ins []tensor.Tensor, kvh int) {
	p.chooseKeys(w, ins, kvh)
	ks, vs := p.keysOf(w, ins, kvh)
	for kb := 0; kb*p.bk < w.nkeys; kb++ {
		j0 := kb * p.bk
		nk := shorter(min(p.bk, w.nkeys-j0), p.bk)
		if err := w.qk[0].PackBDims(&w.pk[kb], ks[j0*p.d:], 0, nk); err != nil && w.err == nil {
			w.err = err
		}
		if p.bq == 1 {
			continue // one-row products read V in place, unpacked
		}
		if err := w.pv[0].PackBDims(&w.pvb[kb], vs[j0*p.dv:], nk, 0); err != nil && w.err == nil {
			w.err = err
		}
	}
	w.kvh = kvh
}

// skippedValues gives the output columns NaN where a value row the block
// skipped (keys from end on, all removed by causality) holds a NaN or Inf:
// the weight 0 of a removed key still multiplies its value, and 0·Inf is
// NaN, in the reference as in the spelled-out product. v is the head's
// values, sk the keys in use.
func (p *flashPlan) skippedValues(v []float32, end, sk int, y []float32, mq int) {
	if end >= sk {
		return
	}
	nan := float32(math.NaN())
	for _, x := range v[end*p.dv : sk*p.dv] {
		if x-x == 0 { // finite
			continue
		}
		// Rare: find the columns and poison them.
		for c := range p.dv {
			bad := false
			for j := end; j < sk && !bad; j++ {
				x := v[j*p.dv+c]
				bad = x-x != 0
			}
			if bad {
				for i := range mq {
					y[i*p.dv+c] = nan
				}
			}
		}
		return
	}
}
