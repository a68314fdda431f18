package asm

import (
	"errors"
	"fmt"
)

// GemmConfig is the shape and layout of a single-precision product
//
//	C[M×N] = Alpha · op(A)[M×K] · op(B)[K×N]        (C += … when Accumulate)
//
// followed by the run's Epilogue. All matrices are row-major with leading
// dimensions (row strides in elements); op(X) is X, or Xᵀ when TransX is
// set, in which case X is stored K×M (A) or N×K (B).
type GemmConfig struct {
	M, N, K        int
	TransA, TransB bool
	// LDA, LDB and LDC are the row strides of A, B and C as stored; 0
	// means tight (the stored row length).
	LDA, LDB, LDC int
	// Alpha scales the product: set 1 for a plain product. It multiplies
	// the accumulated sums (as ONNX's Gemm defines alpha), so a large
	// Alpha over small operands does not overflow where the product would
	// not.
	Alpha float32
	// Accumulate adds the product to C instead of overwriting it; it
	// needs Alpha 1 (C_old + Alpha·AB cannot be formed by scaling C after
	// accumulating into it).
	Accumulate bool
	// InPlaceA reads A's full MR-row panels where they are instead of
	// packing them, on variants with a kernel for it (others pack as
	// usual); same results either way. It needs TransA false and Alpha 1,
	// and pays when packing would cost a pass of its own: an A computed
	// just before the product and read by few column panels (the flash
	// attention's probabilities, N = head dim).
	InPlaceA bool
}

// Par is how a plan runs work in parallel: For has the contract of
// ops.Env.For, Threads is how many workers it may use. The zero Par runs
// serially.
type Par struct {
	For     func(n, grain int, body func(lo, hi int))
	Threads int
}

// GemmArgs are the operands of one run. Keep one per prepared kernel and
// fill it in place, so that running does not allocate.
type GemmArgs struct {
	A, B, C []float32
	// PackedB replaces B when set (see Gemm.PackB).
	PackedB *PackedB
	// Epilogue, if set, is applied to C as its tiles are finished.
	Epilogue *Epilogue
	// Batch is the number of independent products (0 means 1). With
	// Batch > 1, product e reads A at OffA[e], B at OffB[e] (ignored with
	// PackedB) and writes C at OffC[e]; each slice needs Batch entries.
	Batch            int
	OffA, OffB, OffC []int
	// N and K, when positive, run a smaller product than the plan's: its
	// first N columns and first K steps of depth (each at most the
	// plan's; 0 means the plan's), as a kernel whose sizes vary per run
	// (attention over the keys a mask leaves) reuses one plan. Operands
	// are checked against the smaller product; a PackedB must hold at
	// least N columns at depth exactly K (Gemm.PackBDims).
	N, K int
	// M, when positive, runs the first M rows only (at most the plan's):
	// a kernel whose row count varies per run (a mixture of experts'
	// tokens routed to one expert) reuses one plan made for the most.
	// A PackedB does not depend on M. A run of one row takes the GEMV
	// path, whose row buffer a plan made for more rows allocates on the
	// first such run.
	M int
	// Overwrite runs an Accumulate plan as if it had none: C is written,
	// never read (the first of several products summed into one C, which
	// then needs no zeroing).
	Overwrite bool
	// Zip, if set, stores the product into Zip.Out, rows in interleaved
	// pairs, instead of into C (see ZipStore).
	Zip *ZipStore
}

// rows and cols of a stored operand.
func (c *GemmConfig) storedA() (rows, cols int) {
	if c.TransA {
		return c.K, c.M
	}
	return c.M, c.K
}

func (c *GemmConfig) storedB() (rows, cols int) {
	if c.TransB {
		return c.N, c.K
	}
	return c.K, c.N
}

// span is the number of elements a rows×cols matrix with stride ld
// reaches (0 when empty).
func matSpan(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return (rows-1)*ld + cols
}

// normalise checks the config and fills in tight leading dimensions.
func (c *GemmConfig) normalise() error {
	if c.M < 0 || c.N < 0 || c.K < 0 {
		return fmt.Errorf("asm: gemm: negative dims M=%d N=%d K=%d", c.M, c.N, c.K)
	}
	const maxDim = 1 << 40 // keeps every index product below 2^63
	if c.M > maxDim || c.N > maxDim || c.K > maxDim {
		return fmt.Errorf("asm: gemm: dims M=%d N=%d K=%d too large", c.M, c.N, c.K)
	}
	ld := func(name string, v *int, cols int) error {
		if *v == 0 {
			*v = cols
		}
		if *v < cols || *v > maxDim {
			return fmt.Errorf("asm: gemm: %s=%d for rows of %d", name, *v, cols)
		}
		return nil
	}
	if c.Accumulate && c.Alpha != 1 {
		return fmt.Errorf("asm: gemm: Accumulate needs Alpha 1 (Alpha %v)", c.Alpha)
	}
	if c.InPlaceA && (c.TransA || c.Alpha != 1) {
		return fmt.Errorf("asm: gemm: InPlaceA needs TransA false and Alpha 1 (TransA %v, Alpha %v)", c.TransA, c.Alpha)
	}
	_, ac := c.storedA()
	_, bc := c.storedB()
	if err := ld("LDA", &c.LDA, ac); err != nil {
		return err
	}
	if err := ld("LDB", &c.LDB, bc); err != nil {
		return err
	}
	return ld("LDC", &c.LDC, c.N)
}

// Gemm is a prepared product: the config, a variant, the parallel split
// and per-worker scratch (packed panels). A plan runs one product (or
// batch) at a time; use one plan per concurrently running kernel.
type Gemm struct {
	gemmSizes
	v       *GemmVariant
	par     Par
	scratch []gemmScratch // one per task
	tasks   []gemmTask
	body    func(lo, hi int) // g.runTasks, bound once so For does not allocate
	run     GemmArgs         // the operands of the current run
	shared  gemmShared       // state of a product shared by all workers
}

// gemmSizes are a plan's config and the elements of A, B and C one
// product reaches: what a run with smaller N or K changes for its
// duration.
type gemmSizes struct {
	cfg                 GemmConfig
	needA, needB, needC int
}

func (s *gemmSizes) setNeeds() {
	c := &s.cfg
	ar, ac := c.storedA()
	br, bc := c.storedB()
	s.needA, s.needB, s.needC = matSpan(ar, ac, c.LDA), matSpan(br, bc, c.LDB), matSpan(c.M, c.N, c.LDC)
}

// shrink makes the plan compute its first m rows, n columns and k steps
// of depth (0: as planned) until the caller restores g.sizes.
func (g *Gemm) shrink(m, n, k int) error {
	c := &g.cfg
	if m < 0 || m > c.M || n < 0 || n > c.N || k < 0 || k > c.K {
		return fmt.Errorf("asm: gemm: run of M=%d N=%d K=%d for a plan of M=%d N=%d K=%d", m, n, k, c.M, c.N, c.K)
	}
	if m > 0 {
		c.M = m
	}
	if n > 0 {
		c.N = n
	}
	if k > 0 {
		c.K = k
	}
	g.setNeeds()
	return nil
}

// gemmTask is one worker's share: products [e0, e1), and within each the
// block [m0, m1) × [n0, n1) of C (n0 a multiple of NR).
type gemmTask struct {
	e0, e1, m0, m1, n0, n1 int
}

// gemmScratch is one worker's buffers.
type gemmScratch struct {
	a    []float32 // packed A block: ceil(mc/MR) panels of kc×MR
	b    []float32 // packed B block: ceil(nc/NR) panels of kc×NR (allocated on first unpacked run)
	tile []float32 // MR×NR, for edge tiles
	x    []float32 // the GEMV row of op(A), contiguous and scaled (allocated by NewGemm when M is 1, else on first use)
}

// NewGemm prepares a product for variant v (nil: BestGemm) run over par.
func NewGemm(cfg GemmConfig, v *GemmVariant, par Par) (*Gemm, error) {
	if err := cfg.normalise(); err != nil {
		return nil, err
	}
	if v == nil {
		v = BestGemm()
	}
	if par.For == nil || par.Threads < 1 {
		par = Par{For: serialFor, Threads: 1}
	}
	par.Threads = min(par.Threads, maxGemmThreads)
	g := &Gemm{gemmSizes: gemmSizes{cfg: cfg}, v: v, par: par}
	g.setNeeds()
	g.scratch = make([]gemmScratch, par.Threads)
	g.tasks = make([]gemmTask, par.Threads)
	kc := min(v.kc, max(cfg.K, 1))
	mc := min(v.mc, gemmRoundUp(max(cfg.M, 1), v.mr))
	for i := range g.scratch {
		s := &g.scratch[i]
		s.a = make([]float32, mc*kc)
		s.tile = make([]float32, v.mr*v.nr)
		if cfg.M == 1 {
			// The GEMV row at the planned K now: runs that shorten K
			// (GemmArgs.K: attention over a KV cache that grows a key
			// per step) would otherwise regrow it at each new high.
			s.x = make([]float32, cfg.K)
		}
	}
	g.body = g.runTasks
	g.shared.itemBody, g.shared.packBody = g.runItems, g.packJobs
	g.shared.claims = newWorkClaims(par.Threads)
	return g, nil
}

// maxGemmThreads bounds the per-worker scratch a plan allocates.
const maxGemmThreads = 1024

func serialFor(n, _ int, body func(lo, hi int)) {
	if n > 0 {
		body(0, n)
	}
}

// Variant is the variant the plan runs.
func (g *Gemm) Variant() *GemmVariant { return g.v }

// Config is the plan's config with leading dimensions filled in.
func (g *Gemm) Config() GemmConfig { return g.cfg }

func gemmRoundUp(x, m int) int { return (x + m - 1) / m * m }

// Sgemm computes one product serially with the best variant; it allocates
// a plan, so prepared kernels should use NewGemm instead.
func Sgemm(cfg GemmConfig, a, b, c []float32) error {
	g, err := NewGemm(cfg, nil, Par{})
	if err != nil {
		return err
	}
	return g.Run(&GemmArgs{A: a, B: b, C: c})
}

// Run computes the product (or batch of products) described by args.
func (g *Gemm) Run(args *GemmArgs) error {
	if args.M != 0 || args.N != 0 || args.K != 0 || (args.Overwrite && g.cfg.Accumulate) {
		full := g.gemmSizes
		defer func() { g.gemmSizes = full }()
		if err := g.shrink(args.M, args.N, args.K); err != nil {
			return err
		}
		g.cfg.Accumulate = g.cfg.Accumulate && !args.Overwrite
	}
	if err := g.check(args); err != nil {
		return err
	}
	g.run = *args
	defer func() { g.run = GemmArgs{} }() // drop references to the caller's memory
	cfg := &g.cfg
	nb := max(args.Batch, 1)
	if cfg.M == 0 || cfg.N == 0 {
		return nil
	}
	work := 2 * cfg.M * cfg.N * max(cfg.K, 1) // flops of one product
	if g.gemvRow() {
		// A one-row product streams its weights, which in a model come from
		// memory: ResNet-18's classifier (1×512×1000, 2 MB of weights) took
		// 89 µs a run on one or two threads (its 1 Mflop under 2^20), where
		// the weights read hot take 25-31 µs.
		work *= gemvWorkScale
	}
	threads := min(g.par.Threads, max(1, nb*work/parMinFlops))
	if threads <= 1 {
		g.tasks[0] = gemmTask{0, nb, 0, cfg.M, 0, cfg.N}
		g.runTasks(0, 1)
		return nil
	}
	if nb >= threads && (nb%threads == 0 || nb >= 4*threads || work < parMinFlops*threads) {
		// Many products, or small ones: each worker takes whole products.
		for t := range threads {
			g.tasks[t] = gemmTask{t * nb / threads, (t + 1) * nb / threads, 0, cfg.M, 0, cfg.N}
		}
		g.par.For(threads, 1, g.body)
		return nil
	}
	// Few products: all workers share each one.
	per := min(threads, max(1, work/parMinFlops))
	for e := range nb {
		g.runShared(e, per)
	}
	return nil
}

// parMinFlops is the least work (flops) worth handing to another worker:
// below it, waking a worker costs more than it saves. 2^19 flops is ~7 µs
// of compute; the pool's workers spin before parking, so a handoff
// between back-to-back steps costs ~0.1 µs, and one-row products (GEMV,
// memory-bound: a 1×384×1536 product is ~45 µs) now use both cores: it
// was 2^22, which kept them on one. (A variable so tests can send tiny
// products down the parallel paths.)
var parMinFlops = 1 << 19

// gemvWorkScale weighs a one-row product's flops against parMinFlops: a
// flop of one streams a weight where a GEMM's reuses it from registers,
// and runs at a fifth to a tenth of the rate.
const gemvWorkScale = 4

// gemvRow reports whether products take the one-row path: op(A) has one
// row and B is pre-packed or row-major (a transposed unpacked B would be
// read with stride K per element, so it goes through packing instead).
func (g *Gemm) gemvRow() bool {
	return g.cfg.M == 1 && (g.run.PackedB != nil || !g.cfg.TransB)
}

func (s *gemmScratch) ensureB(g *Gemm) {
	v := g.v
	want := min(v.kc, max(g.cfg.K, 1)) * min(v.nc, gemmRoundUp(g.cfg.N, v.nr))
	if len(s.b) < want {
		s.b = make([]float32, want)
	}
}

// check validates the operands against the plan before anything runs.
func (g *Gemm) check(args *GemmArgs) error {
	cfg := &g.cfg
	nb := max(args.Batch, 1)
	if args.Batch < 0 {
		return fmt.Errorf("asm: gemm: negative batch %d", args.Batch)
	}
	if pb := args.PackedB; pb != nil {
		if pb.v != g.v || pb.k != cfg.K || pb.n < cfg.N {
			return fmt.Errorf("asm: gemm: packed B is %d×%d for %v, run needs %d×%d for %s", pb.k, pb.n, pb.variantName(), cfg.K, cfg.N, g.v.Name)
		}
	}
	type operand struct {
		name string
		data []float32
		need int
		offs []int
	}
	ops := []operand{{"A", args.A, g.needA, args.OffA}, {"C", args.C, g.needC, args.OffC}, {"B", args.B, g.needB, args.OffB}}
	if args.PackedB != nil {
		ops = ops[:2] // B is not read
	}
	if args.Zip != nil {
		if err := g.checkZip(args, nb); err != nil {
			return err
		}
		ops = append(ops[:1], ops[2:]...) // C is not written
	}
	for _, o := range ops {
		if args.Batch <= 1 {
			if len(o.data) < o.need {
				return fmt.Errorf("asm: gemm: %s has %d elements, needs %d", o.name, len(o.data), o.need)
			}
			continue
		}
		if len(o.offs) < nb {
			return fmt.Errorf("asm: gemm: batch %d but %d offsets for %s", nb, len(o.offs), o.name)
		}
		for e, off := range o.offs[:nb] {
			if off < 0 || (o.need > 0 && off > len(o.data)-o.need) {
				return fmt.Errorf("asm: gemm: %s offset %d of product %d: %d elements from it, %d there", o.name, off, e, o.need, len(o.data))
			}
		}
	}
	if cfg.M > 0 && cfg.N > 0 && args.Zip == nil {
		if overlap32(args.C, args.A) || (args.PackedB == nil && overlap32(args.C, args.B)) {
			return errors.New("asm: gemm: C overlaps A or B")
		}
	}
	if ep := args.Epilogue; ep != nil {
		if err := ep.check(cfg.M, cfg.N, nb); err != nil {
			return err
		}
		if overlap32(ep.Residual, args.C) {
			return errors.New("asm: gemm epilogue: residual overlaps C")
		}
	}
	return nil
}

// offsets of product e's operands.
func (g *Gemm) offsets(e int) (a, b, c int) {
	if g.run.Batch <= 1 {
		return 0, 0, 0
	}
	if g.run.PackedB == nil {
		b = g.run.OffB[e]
	}
	if g.run.Zip == nil { // a zip run writes no C
		c = g.run.OffC[e]
	}
	return g.run.OffA[e], b, c
}

// runTasks runs tasks [lo, hi); it is the For body.
func (g *Gemm) runTasks(lo, hi int) {
	for t := lo; t < hi; t++ {
		task, s := g.tasks[t], &g.scratch[t]
		for e := task.e0; e < task.e1; e++ {
			g.product(s, e, task.m0, task.m1, task.n0, task.n1)
		}
	}
}

// product computes block [m0, m1) × [n0, n1) of product e's C.
func (g *Gemm) product(s *gemmScratch, e, m0, m1, n0, n1 int) {
	cfg := &g.cfg
	ao, bo, co := g.offsets(e)
	switch {
	case m0 >= m1 || n0 >= n1:
	case g.run.Zip != nil && cfg.K == 0:
		g.emptyKZip(e, m0, m1, n0, n1)
	case g.run.Zip != nil:
		g.blocksZip(s, e, ao, bo, m0, m1, n0, n1)
	case cfg.K == 0:
		g.emptyK(e, co, m0, m1, n0, n1)
	case g.gemvRow() && !g.fewGemv():
		g.gemv(s, e, ao, bo, co, n0, n1)
	default:
		g.blocks(s, e, ao, bo, co, m0, m1, n0, n1)
	}
}

// emptyK handles K = 0: the product is zero.
func (g *Gemm) emptyK(e, co, m0, m1, n0, n1 int) {
	ldc := g.cfg.LDC
	for i := m0; i < m1; i++ {
		row := g.run.C[co+i*ldc+n0 : co+i*ldc+n1]
		if !g.cfg.Accumulate {
			clear(row)
		}
	}
	g.epilogue(e, co, m0, m1-m0, n0, n1-n0)
}

// epilogue scales a finished block by Alpha, then applies the run's
// epilogue, if any.
func (g *Gemm) epilogue(e, co, i0, rows, j0, cols int) {
	if alpha := g.cfg.Alpha; alpha != 1 {
		ew, ldc := BestEw(), g.cfg.LDC
		for i := i0; i < i0+rows; i++ {
			seg := g.run.C[co+i*ldc+j0 : co+i*ldc+j0+cols]
			if ew.BinaryScalar(EwMul, seg, seg, alpha) != nil {
				for j := range seg {
					seg[j] *= alpha
				}
			}
		}
	}
	if ep := g.run.Epilogue; ep != nil {
		ep.apply(g.run.C, co, g.cfg.LDC, e, i0, rows, j0, cols)
	}
}
