package ops

// sgemmGo is the portable fast path for float32 matrix products, used
// until (and wherever) no assembly kernel applies. It accumulates in
// float32 in k order, four rows of C at a time so that each loaded row of
// B feeds four rows, over column blocks that keep a strip of B and C in
// cache.

// gemmArgs is one product C[m×n] (+)= A[m×k]·B[k×n], row-major with
// leading dimensions; set per call by the prepared kernel.
type gemmArgs struct {
	a, b, c       []float32
	m, n, k       int
	lda, ldb, ldc int
	accumulate    bool // add to C instead of overwriting it
}

const gemmColBlock = 256 // columns of B/C per block: 1 KiB rows stay in L1

// rows computes rows [lo, hi) of C.
func (g *gemmArgs) rows(lo, hi int) {
	for j0 := 0; j0 < g.n; j0 += gemmColBlock {
		j1 := min(j0+gemmColBlock, g.n)
		i := lo
		for ; i+4 <= hi; i += 4 {
			g.block4(i, j0, j1)
		}
		for ; i < hi; i++ {
			g.block1(i, j0, j1)
		}
	}
}

func (g *gemmArgs) clear(c []float32) {
	if !g.accumulate {
		clear(c)
	}
}

// block4 computes C[i:i+4, j0:j1].
func (g *gemmArgs) block4(i, j0, j1 int) {
	w := j1 - j0
	c0 := g.c[i*g.ldc+j0:][:w]
	c1 := g.c[(i+1)*g.ldc+j0:][:w]
	c2 := g.c[(i+2)*g.ldc+j0:][:w]
	c3 := g.c[(i+3)*g.ldc+j0:][:w]
	g.clear(c0)
	g.clear(c1)
	g.clear(c2)
	g.clear(c3)
	a0, a1, a2, a3 := g.a[i*g.lda:][:g.k], g.a[(i+1)*g.lda:][:g.k], g.a[(i+2)*g.lda:][:g.k], g.a[(i+3)*g.lda:][:g.k]
	for p := 0; p < g.k; p++ {
		b := g.b[p*g.ldb+j0:][:w]
		x0, x1, x2, x3 := a0[p], a1[p], a2[p], a3[p]
		for j, bv := range b {
			c0[j] += x0 * bv
			c1[j] += x1 * bv
			c2[j] += x2 * bv
			c3[j] += x3 * bv
		}
	}
}

// block1 computes C[i, j0:j1].
func (g *gemmArgs) block1(i, j0, j1 int) {
	w := j1 - j0
	c := g.c[i*g.ldc+j0:][:w]
	g.clear(c)
	a := g.a[i*g.lda:][:g.k]
	for p, x := range a {
		b := g.b[p*g.ldb+j0:][:w]
		for j, bv := range b {
			c[j] += x * bv
		}
	}
}

// run splits the rows of C over the environment's workers.
func (g *gemmArgs) run(env Env, body func(lo, hi int)) {
	if g.m == 0 || g.n == 0 {
		return
	}
	// Enough rows per chunk that each worker streams B once per 4-row group.
	grain := max(4, (g.m+env.Threads-1)/env.Threads)
	grain = (grain + 3) &^ 3
	if g.m*g.n*g.k < 1<<15 {
		grain = g.m // too small to be worth waking workers
	}
	env.For(g.m, grain, body)
}
