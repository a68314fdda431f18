package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnml/kiln/internal/approx"
)

// TestGemmNaNInf puts NaN and ±Inf into A and B: they must reach exactly
// the elements of C whose float64 sums they reach, through tiles, edges,
// the GEMV path and pre-packed B.
func TestGemmNaNInf(t *testing.T) {
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	for _, v := range gemmTestVariants() {
		r := rand.New(rand.NewPCG(11, 12))
		for i, s := range [][3]int{{13, 37, 29}, {1, 40, 17}, {7, 5, 3}, {1, 3, 9}, {20, 33, 1}} {
			gc := randomGemmCase(r, s[0], s[1], s[2])
			gc.poke = func(a, b []float32) {
				for range 3 {
					a[r.IntN(len(a))] = specials[r.IntN(3)]
					b[r.IntN(len(b))] = specials[r.IntN(3)]
				}
			}
			runGemmCase(t, r, gc, v, gemmTestPar(2), i%2 == 1, nil)
		}
	}
}

// TestGemmLargeAlpha: Alpha multiplies the finished sums (as ONNX's Gemm
// defines it), so Alpha = 1e38 over small products gives the
// finite float64 result on every path (tiles, edges, GEMV, pre-packed B,
// parallel) where A·Alpha alone overflows: scaling A before the sums gave
// ±Inf.
func TestGemmLargeAlpha(t *testing.T) {
	for _, v := range gemmTestVariants() {
		r := rand.New(rand.NewPCG(15, 16))
		for i, s := range [][3]int{{13, 37, 29}, {1, 40, 17}, {30, 16, 64}, {1, 3, 9}} {
			for _, alpha := range []float32{1e38, -3e38, 1e-30} {
				gc := randomGemmCase(r, s[0], s[1], s[2])
				gc.cfg.Alpha, gc.cfg.Accumulate = alpha, false
				gc.poke = func(a, b []float32) {
					for j := range a {
						a[j] *= 10 // |a·Alpha| past float32's range
					}
					for j := range b {
						b[j] *= 1e-3 // |Σ a·b| < 1
					}
				}
				runGemmCase(t, r, gc, v, gemmTestPar(2), i%2 == 1, nil)
			}
		}
	}
}

// TestGemmEpilogue checks every activation, bias and residual layout two
// ways: against float64 (via runGemmCase) and against running the plain
// product and applying the same steps afterwards by hand.
func TestGemmEpilogue(t *testing.T) {
	double := func(seg []float32) {
		for i := range seg {
			seg[i] *= 2
		}
	}
	for _, v := range gemmTestVariants() {
		r := rand.New(rand.NewPCG(13, 14))
		for act := ActNone; act < numActs; act++ {
			for i, s := range [][3]int{{17, 33, 40}, {1, 50, 19}, {6, 16, 300}, {5, 3, 1}, {20, 300, 45}} {
				m, n, k := s[0], s[1], s[2]
				ep := &Epilogue{Act: act}
				if i != 1 || act != ActNone {
					ep.Bias = make([]float32, n+i)
					for j := range ep.Bias {
						ep.Bias[j] = gemmRand(r)
					}
				}
				if i%2 == 0 || act == ActTanh {
					// Full residual, a row broadcast, or a column broadcast.
					st := [][2]int{{n + 2, 1}, {0, 1}, {1, 0}}[int(act)%3]
					rs, cs := st[0], st[1]
					ep.Residual = make([]float32, m*(n+2)+n)
					for j := range ep.Residual {
						ep.Residual[j] = gemmRand(r)
					}
					ep.ResRowStride, ep.ResColStride, ep.ResScale = rs, cs, []float32{1, 0.5, -1}[i%3]
				}
				gc := randomGemmCase(r, m, n, k)
				runGemmCase(t, r, gc, v, gemmTestPar(2), i == 3, ep)
				epilogueBySteps(t, r, gc.cfg, v, ep)
				if act == ActRelu {
					// A custom function replaces the built-in activation.
					ep2 := *ep
					ep2.ActFunc = double
					epilogueBySteps(t, r, gc.cfg, v, &ep2)
				}
			}
		}
	}
}

// epilogueBySteps runs cfg with and without ep on the same data and
// applies ep's steps by hand to the plain result.
func epilogueBySteps(t *testing.T, r *rand.Rand, cfg GemmConfig, v *GemmVariant, ep *Epilogue) {
	t.Helper()
	if err := cfg.normalise(); err != nil {
		t.Fatal(err)
	}
	ar, ac := cfg.storedA()
	br, bc := cfg.storedB()
	a := newGemmOperand(ar, ac, cfg.LDA, 0, func(i, j int) float32 { return gemmRand(r) }).data
	b := newGemmOperand(br, bc, cfg.LDB, 0, func(i, j int) float32 { return gemmRand(r) }).data
	c0 := newGemmOperand(cfg.M, cfg.N, cfg.LDC, 0, func(i, j int) float32 { return gemmRand(r) }).data
	g, err := NewGemm(cfg, v, Par{})
	if err != nil {
		t.Fatal(err)
	}
	plain, fused := slices.Clone(c0), slices.Clone(c0)
	if err := g.Run(&GemmArgs{A: a, B: b, C: plain}); err != nil {
		t.Fatal(err)
	}
	if err := g.Run(&GemmArgs{A: a, B: b, C: fused, Epilogue: ep}); err != nil {
		t.Fatal(err)
	}
	for i := range cfg.M {
		for j := range cfg.N {
			x := plain[i*cfg.LDC+j]
			if ep.Bias != nil {
				x += ep.Bias[j]
			}
			switch {
			case ep.ActFunc != nil:
				seg := []float32{x}
				ep.ActFunc(seg)
				x = seg[0]
			case ep.Act != ActNone:
				x = float32(gemmActRef(ep.Act, float64(x)))
			}
			if ep.Residual != nil {
				x += float32(ep.ResScale * ep.Residual[i*ep.ResRowStride+j*ep.ResColStride])
			}
			if got := fused[i*cfg.LDC+j]; approx.Far(float64(got), float64(x), 1e-6*(math.Abs(float64(x))+1)) {
				t.Fatalf("%s %v %+v: fused C[%d,%d] = %v, by steps %v", v.Name, cfg, ep.Act, i, j, got, x)
			}
		}
	}
}

// TestGemmPackedRepack: a packed B is used as packed (changing B alone
// does not change the result) until it is packed again, into the same
// buffer.
func TestGemmPackedRepack(t *testing.T) {
	for _, v := range GemmVariants() {
		for _, s := range [][3]int{{9, 70, 300}, {1, 70, 300}, {130, 17, 5}} {
			r := rand.New(rand.NewPCG(15, 16))
			cfg := GemmConfig{M: s[0], N: s[1], K: s[2], Alpha: 1, TransB: s[0] == 130}
			if err := cfg.normalise(); err != nil {
				t.Fatal(err)
			}
			br, bc := cfg.storedB()
			a := newGemmOperand(cfg.M, cfg.K, cfg.K, 0, func(i, j int) float32 { return gemmRand(r) }).data
			b := newGemmOperand(br, bc, cfg.LDB, 0, func(i, j int) float32 { return gemmRand(r) }).data
			c := make([]float32, cfg.M*cfg.N)
			g, err := NewGemm(cfg, v, gemmTestPar(2))
			if err != nil {
				t.Fatal(err)
			}
			var pb PackedB
			if err := g.PackB(&pb, b); err != nil {
				t.Fatal(err)
			}
			first := &pb.data[0]
			args := &GemmArgs{A: a, PackedB: &pb, C: c}
			ref1, mag1 := refGemm(cfg, a, b, nil, nil, 0)
			if err := g.Run(args); err != nil {
				t.Fatal(err)
			}
			checkGemmC(t, c, cfg.N, ref1, mag1, cfg.M, cfg.N, cfg.K, v.Name+"/first pack")
			for i := range b {
				b[i] = gemmRand(r)
			}
			if err := g.Run(args); err != nil {
				t.Fatal(err)
			}
			checkGemmC(t, c, cfg.N, ref1, mag1, cfg.M, cfg.N, cfg.K, v.Name+"/stale pack")
			if err := g.PackB(&pb, b); err != nil {
				t.Fatal(err)
			}
			if &pb.data[0] != first {
				t.Fatalf("%s: repacking reallocated the buffer", v.Name)
			}
			if err := g.Run(args); err != nil {
				t.Fatal(err)
			}
			ref2, mag2 := refGemm(cfg, a, b, nil, nil, 0)
			checkGemmC(t, c, cfg.N, ref2, mag2, cfg.M, cfg.N, cfg.K, v.Name+"/repacked")
		}
	}
}

// TestGemmBatch runs batches with per-product offsets, a broadcast B
// (every offset the same), pre-packed B and a batched residual, over
// several thread counts.
func TestGemmBatch(t *testing.T) {
	for _, v := range gemmTestVariants() {
		r := rand.New(rand.NewPCG(17, 18))
		for _, nb := range []int{2, 3, 5, 8} {
			for _, s := range [][3]int{{7, 19, 23}, {1, 33, 17}, {40, 40, 40}} {
				for _, threads := range []int{1, 2, 3} {
					m, n, k := s[0], s[1], s[2]
					cfg := GemmConfig{M: m, N: n, K: k, Alpha: 1, TransA: nb == 3, TransB: threads == 3, Accumulate: nb == 5}
					if err := cfg.normalise(); err != nil {
						t.Fatal(err)
					}
					g, err := NewGemm(cfg, v, gemmTestPar(threads))
					if err != nil {
						t.Fatal(err)
					}
					broadcast, packed := threads == 2, nb == 8
					A := make([]float32, nb*m*k+3)
					B := make([]float32, nb*k*n+5)
					C := make([]float32, nb*m*n+7)
					for _, x := range [][]float32{A, B, C} {
						for i := range x {
							x[i] = gemmRand(r)
						}
					}
					c0 := slices.Clone(C)
					args := &GemmArgs{A: A, B: B, C: C, Batch: nb}
					for e := range nb {
						args.OffA = append(args.OffA, 3+e*m*k)
						args.OffB = append(args.OffB, 5+e*k*n)
						args.OffC = append(args.OffC, 7+(nb-1-e)*m*n) // reversed: C order need not follow A
						if broadcast || packed {
							args.OffB[e] = 5
						}
					}
					ep := &Epilogue{Residual: make([]float32, nb*m*n), ResRowStride: n, ResColStride: 1, ResBatchStride: m * n, ResScale: 1}
					for i := range ep.Residual {
						ep.Residual[i] = gemmRand(r)
					}
					args.Epilogue = ep
					if packed {
						args.PackedB = new(PackedB)
						if err := g.PackB(args.PackedB, B[5:]); err != nil {
							t.Fatal(err)
						}
					}
					if err := g.Run(args); err != nil {
						t.Fatal(err)
					}
					for e := range nb {
						ref, mag := refGemm(cfg, A[args.OffA[e]:], B[args.OffB[e]:], c0[args.OffC[e]:], ep, e)
						checkGemmC(t, C[args.OffC[e]:], n, ref, mag, m, n, k, fmt.Sprintf("%s batch %d/%d %v threads %d", v.Name, e, nb, s, threads))
					}
					for i := range 7 {
						if C[i] != c0[i] {
							t.Fatalf("C[%d] before the batch written", i)
						}
					}
				}
			}
		}
	}
}

// TestGemmErrors: bad configs and operands are errors, never panics, and
// nothing is written.
func TestGemmErrors(t *testing.T) {
	bad := []GemmConfig{
		{M: -1, N: 2, K: 2, Alpha: 1},
		{M: 2, N: 2, K: 3, LDA: 2, Alpha: 1},
		{M: 2, N: 3, K: 2, LDB: 2, Alpha: 1},
		{M: 2, N: 3, K: 2, LDC: 1, Alpha: 1},
		{M: 3, N: 2, K: 2, TransA: true, LDA: 2, Alpha: 1},
		{M: 1 << 50, N: 1, K: 1, Alpha: 1},
		{M: 2, N: 2, K: 2, Alpha: 2, Accumulate: true},
	}
	for _, cfg := range bad {
		if _, err := NewGemm(cfg, nil, Par{}); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	cfg := GemmConfig{M: 4, N: 5, K: 3, Alpha: 1}
	g, err := NewGemm(cfg, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := make([]float32, 12), make([]float32, 15), make([]float32, 20)
	other, err := NewGemm(GemmConfig{M: 4, N: 5, K: 4, Alpha: 1}, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	var wrongPack PackedB
	if err := other.PackB(&wrongPack, make([]float32, 20)); err != nil {
		t.Fatal(err)
	}
	if err := g.PackB(new(PackedB), b[:14]); err == nil {
		t.Error("short B packed")
	}
	shared := make([]float32, 40)
	cases := map[string]*GemmArgs{
		"short A":          {A: a[:11], B: b, C: c},
		"short B":          {A: a, B: b[:14], C: c},
		"short C":          {A: a, B: b, C: c[:19]},
		"C overlaps A":     {A: shared[:12], B: b, C: shared[10:30]},
		"C overlaps B":     {A: a, B: shared[5:20], C: shared[19:39]},
		"wrong pack":       {A: a, PackedB: &wrongPack, C: c},
		"empty pack":       {A: a, PackedB: new(PackedB), C: c},
		"negative batch":   {A: a, B: b, C: c, Batch: -2},
		"few offsets":      {A: a, B: b, C: c, Batch: 2, OffA: []int{0, 0}, OffB: []int{0}, OffC: []int{0, 0}},
		"offset past end":  {A: a, B: b, C: make([]float32, 40), Batch: 2, OffA: []int{0, 0}, OffB: []int{0, 0}, OffC: []int{0, 21}},
		"negative offset":  {A: a, B: b, C: make([]float32, 40), Batch: 2, OffA: []int{0, -1}, OffB: []int{0, 0}, OffC: []int{0, 20}},
		"short bias":       {A: a, B: b, C: c, Epilogue: &Epilogue{Bias: make([]float32, 4)}},
		"bad activation":   {A: a, B: b, C: c, Epilogue: &Epilogue{Act: numActs}},
		"short residual":   {A: a, B: b, C: c, Epilogue: &Epilogue{Residual: make([]float32, 19), ResRowStride: 5, ResColStride: 1}},
		"negative stride":  {A: a, B: b, C: c, Epilogue: &Epilogue{Residual: make([]float32, 40), ResRowStride: -5, ResColStride: 1}},
		"residual aliases": {A: a, B: b, C: c, Epilogue: &Epilogue{Residual: c, ResRowStride: 5, ResColStride: 1}},
	}
	for name, args := range cases {
		before := slices.Clone(args.C)
		if err := g.Run(args); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if !slices.Equal(before, args.C) {
			t.Errorf("%s: C written", name)
		}
	}
}

// gemmPool is a persistent worker pool like the executor's, so that
// benchmarks and allocation tests see no goroutine start-up. Like the
// executor's, an idle worker polls for its next chunk for a while before
// it blocks: a worker woken through a channel, while the caller runs the
// first chunk, ran only once the caller waited (the runtime puts the
// woken goroutine next on the caller's own P), so loops of tens of µs ran
// their chunks one after the other and two-thread benchmarks measured
// one thread.
type gemmPool struct {
	n       int
	slots   []gemmSlot
	pending atomic.Int32 // chunks posted and not finished
	quit    chan struct{}
}

// gemmSlot is one worker's next chunk, alone in its cache lines.
type gemmSlot struct {
	body   func(lo, hi int)
	lo, hi int
	ready  atomic.Int32 // 1: body, lo, hi are the worker's to run
	parked atomic.Int32 // 1: the worker may be blocked on wake
	wake   chan struct{}
	_      [64]byte
}

// gemmPoolSpin bounds a worker's polling before it blocks.
const gemmPoolSpin = time.Millisecond

func newGemmPool(n int) *gemmPool {
	p := &gemmPool{n: n, slots: make([]gemmSlot, max(n-1, 0)), quit: make(chan struct{})}
	for i := range p.slots {
		p.slots[i].wake = make(chan struct{}, 1)
		go p.work(&p.slots[i])
	}
	return p
}

// work runs s's chunks as they come, polling for gemmPoolSpin before
// blocking.
func (p *gemmPool) work(s *gemmSlot) {
	for {
		start := time.Now()
		for i := 0; s.ready.Load() == 0; i++ {
			if i%64 == 63 && time.Since(start) > gemmPoolSpin {
				s.parked.Store(1)
				if s.ready.Load() == 0 {
					select {
					case <-s.wake:
					case <-p.quit:
						return
					}
				}
				s.parked.Store(0)
				start = time.Now()
			}
		}
		s.body(s.lo, s.hi)
		s.body = nil
		s.ready.Store(0)
		p.pending.Add(-1)
	}
}

func (p *gemmPool) par() Par {
	return Par{Threads: p.n, For: func(n, grain int, body func(lo, hi int)) {
		if n <= 0 {
			return
		}
		chunks := min(p.n, (n+max(grain, 1)-1)/max(grain, 1))
		size := (n + chunks - 1) / chunks
		w := 0
		for lo := size; lo < n; lo += size {
			s := &p.slots[w]
			w++
			s.body, s.lo, s.hi = body, lo, min(lo+size, n)
			p.pending.Add(1)
			s.ready.Store(1)
			if s.parked.Load() == 1 {
				select {
				case s.wake <- struct{}{}:
				default:
				}
			}
		}
		body(0, min(size, n))
		for p.pending.Load() != 0 {
			runtime.Gosched()
		}
	}}
}

func (p *gemmPool) close() { close(p.quit) }

// TestGemmNoAllocs: a prepared plan runs without allocating, serially
// and in parallel, with and without pre-packed B, epilogue and batches.
func TestGemmNoAllocs(t *testing.T) {
	pool := newGemmPool(2)
	defer pool.close()
	for _, par := range []Par{{}, pool.par()} {
		for _, s := range [][3]int{{64, 64, 64}, {1, 256, 300}, {200, 100, 50}} {
			cfg := GemmConfig{M: s[0], N: s[1], K: s[2], Alpha: 1}
			g, err := NewGemm(cfg, nil, par)
			if err != nil {
				t.Fatal(err)
			}
			a, b, c := make([]float32, 2*s[0]*s[2]), make([]float32, s[2]*s[1]), make([]float32, 2*s[0]*s[1])
			var pb PackedB
			if err := g.PackB(&pb, b); err != nil {
				t.Fatal(err)
			}
			ep := &Epilogue{Bias: make([]float32, s[1]), Act: ActRelu}
			for _, args := range []*GemmArgs{
				{A: a, B: b, C: c},
				{A: a, PackedB: &pb, C: c, Epilogue: ep},
				{A: a, B: b, C: c, Batch: 2, OffA: []int{0, s[0] * s[2]}, OffB: []int{0, 0}, OffC: []int{0, s[0] * s[1]}},
			} {
				if n := testing.AllocsPerRun(5, func() {
					if err := g.Run(args); err != nil {
						t.Fatal(err)
					}
				}); n != 0 {
					t.Errorf("%v threads %d: %v allocations per run", s, par.Threads, n)
				}
			}
		}
	}
}

// TestGemmParallelPaths sends small products down every parallel path by
// lowering the thresholds: blocks shared through the counter (B packed
// whole, pre-packed, or one-row), the static split with per-worker B
// packing, and batches split by product or within products.
func TestGemmParallelPaths(t *testing.T) {
	defer func(p, s int) { parMinFlops, sharedPackMax = p, s }(parMinFlops, sharedPackMax)
	for _, packMax := range []int{1 << 22, 0} {
		parMinFlops, sharedPackMax = 1, packMax
		for _, v := range gemmTestVariants() {
			r := rand.New(rand.NewPCG(23, uint64(packMax)))
			for i := range 60 {
				s := [3]int{gemmTailDims[r.IntN(len(gemmTailDims))], gemmTailDims[r.IntN(len(gemmTailDims))], gemmTailDims[r.IntN(len(gemmTailDims))]}
				if i%5 == 0 {
					s[0] = 1
				}
				runGemmCase(t, r, randomGemmCase(r, s[0], s[1], s[2]), v, gemmTestPar(2+i%4), i%3 == 0, nil)
			}
		}
	}
	parMinFlops = 1
	TestGemmBatch(t)
	TestGemmEpilogue(t)
}
