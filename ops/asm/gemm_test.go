package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// Tolerance of every GEMM result against float64 arithmetic on the same
// float32 inputs:
//
//	|got − ref| <= gemmTol(K) · mag,   gemmTol(K) = 1e-6 · (√K + 1)
//
// where mag is what the rounding errors scale with: |alpha|·Σ|a·b| plus the
// magnitudes of the old C, bias and residual terms. Each of the K
// additions rounds with relative error 2⁻²⁴ ≈ 6e-8 of at most mag, and
// with random signs they add up like a random walk (≈ √K·6e-8·mag, with a
// wide margin here). A tile computed wrongly is off by at least one term,
// about mag/K, which is far outside it for every K tested.
func gemmTol(k int) float64 { return 1e-6 * (math.Sqrt(float64(k)) + 1) }

// gemmSentinel marks memory nothing may write: a NaN with a payload no
// arithmetic produces.
var gemmSentinel = math.Float32frombits(0x7fa0dead)

// gemmOperand is a matrix placed at a misaligned offset inside a buffer with
// gemmGuard regions on both sides.
type gemmOperand struct {
	buf  []float32 // whole buffer, guards included
	off  int       // where the matrix starts
	data []float32 // buf[off : off+span]
}

const gemmGuard = 37

// newGemmOperand makes rows×cols with stride ld at offset off, filled by fill
// (row, col); the gaps between rows and the guards hold the gemmSentinel.
func newGemmOperand(rows, cols, ld, off int, fill func(i, j int) float32) *gemmOperand {
	n := matSpan(rows, cols, ld)
	buf := make([]float32, off+n+gemmGuard)
	for i := range buf {
		buf[i] = gemmSentinel
	}
	o := &gemmOperand{buf: buf, off: off, data: buf[off : off+n]}
	for i := range rows {
		for j := range cols {
			o.data[i*ld+j] = fill(i, j)
		}
	}
	return o
}

// snapshot copies the whole buffer's bits.
func (o *gemmOperand) snapshot() []uint32 {
	s := make([]uint32, len(o.buf))
	for i, x := range o.buf {
		s[i] = math.Float32bits(x)
	}
	return s
}

// checkOutside fails if anything but the rows×cols (stride ld) matrix
// changed since snap.
func (o *gemmOperand) checkOutside(t *testing.T, snap []uint32, rows, cols, ld int) {
	t.Helper()
	inside := func(k int) bool {
		k -= o.off
		if k < 0 || rows == 0 || cols == 0 {
			return false
		}
		i, j := k/ld, k%ld
		return i < rows && j < cols
	}
	for k, x := range o.buf {
		if !inside(k) && math.Float32bits(x) != snap[k] {
			t.Fatalf("element %d outside the matrix (offset %d, %d×%d ld %d) was written: %v", k, o.off, rows, cols, ld, x)
		}
	}
}

// checkSame fails if the buffer changed at all (inputs stay untouched).
func (o *gemmOperand) checkSame(t *testing.T, snap []uint32, name string) {
	t.Helper()
	for k, x := range o.buf {
		if math.Float32bits(x) != snap[k] {
			t.Fatalf("input %s changed at %d", name, k)
		}
	}
}

func gemmRand(r *rand.Rand) float32 { return float32(2*r.Float64() - 1) }

// gemmActRef is each activation's formula in float64, written out here.
func gemmActRef(a Activation, x float64) float64 {
	switch a {
	case ActRelu:
		if x < 0 {
			return 0
		}
		return x
	case ActGelu:
		return 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
	case ActGeluTanh:
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	case ActSilu:
		return x / (1 + math.Exp(-x))
	case ActSigmoid:
		return 1 / (1 + math.Exp(-x))
	case ActTanh:
		return math.Tanh(x)
	}
	return x
}

// refGemm computes product e in float64 straight from the definition,
// returning the expected C and the error scale of each element.
func refGemm(cfg GemmConfig, a, b, c0 []float32, ep *Epilogue, e int) (ref, mag []float64) {
	m, n, k := cfg.M, cfg.N, cfg.K
	opA := func(i, p int) float64 {
		if cfg.TransA {
			return float64(a[p*cfg.LDA+i])
		}
		return float64(a[i*cfg.LDA+p])
	}
	opB := func(p, j int) float64 {
		if cfg.TransB {
			return float64(b[j*cfg.LDB+p])
		}
		return float64(b[p*cfg.LDB+j])
	}
	ref, mag = make([]float64, m*n), make([]float64, m*n)
	alpha := float64(cfg.Alpha)
	for i := range m {
		for j := range n {
			var s, g float64
			for p := range k {
				x := opA(i, p) * opB(p, j)
				s += x
				g += math.Abs(x)
			}
			// Float32 products and sums below the normal range round to
			// multiples of 2^-149: up to k·2^-149 absolute, which Alpha
			// scales with the rest (it multiplies the finished sum).
			g += float64(k) * 0x1p-149 / gemmTol(k)
			s, g = alpha*s, math.Abs(alpha)*g
			if cfg.Accumulate {
				s += float64(c0[i*cfg.LDC+j])
				g += math.Abs(float64(c0[i*cfg.LDC+j]))
			}
			if ep != nil {
				if ep.Bias != nil {
					s += float64(ep.Bias[j])
					g += math.Abs(float64(ep.Bias[j]))
				}
				if ep.Act != ActNone {
					s, g = gemmActRef(ep.Act, s), 1.2*g+math.Abs(gemmActRef(ep.Act, s))
				}
				if ep.Residual != nil {
					r := float64(ep.ResScale) * float64(ep.Residual[e*ep.ResBatchStride+i*ep.ResRowStride+j*ep.ResColStride])
					s += r
					g += math.Abs(r)
				}
			}
			ref[i*n+j], mag[i*n+j] = s, g
		}
	}
	return ref, mag
}

// checkGemmC compares C (stride ldc) with the reference: NaN for NaN, the same
// infinity for an infinity, else within tolerance.
func checkGemmC(t *testing.T, c []float32, ldc int, ref, mag []float64, m, n, k int, what string) {
	t.Helper()
	tol := gemmTol(k)
	for i := range m {
		for j := range n {
			got, want := float64(c[i*ldc+j]), ref[i*n+j]
			switch {
			case math.IsNaN(want):
				if !math.IsNaN(got) {
					t.Fatalf("%s: C[%d,%d] = %v, want NaN", what, i, j, got)
				}
			case math.IsInf(want, 0):
				if got != want {
					t.Fatalf("%s: C[%d,%d] = %v, want %v", what, i, j, got, want)
				}
			case approx.Far(got, want, tol*mag[i*n+j]+1e-7*math.Abs(want)+1e-30):
				t.Fatalf("%s: C[%d,%d] = %v, want %v (err %.3g, allowed %.3g)", what, i, j, got, want,
					math.Abs(got-want), tol*mag[i*n+j]+1e-7*math.Abs(want))
			}
		}
	}
}

// gemmTestPar is a parallel For on fresh goroutines, chunked like the
// executor's runner.
func gemmTestPar(threads int) Par {
	return Par{Threads: threads, For: func(n, grain int, body func(lo, hi int)) {
		if n <= 0 {
			return
		}
		chunks := min(threads, (n+max(grain, 1)-1)/max(grain, 1))
		size := (n + chunks - 1) / chunks
		var wg sync.WaitGroup
		for lo := size; lo < n; lo += size {
			wg.Go(func() { body(lo, min(lo+size, n)) })
		}
		body(0, min(size, n))
		wg.Wait()
	}}
}

// gemmCase is one randomised product.
type gemmCase struct {
	cfg              GemmConfig
	offA, offB, offC int
	poke             func(a, b []float32) // if set, edits the stored A and B after filling
}

func (gc gemmCase) String() string {
	c := gc.cfg
	return fmt.Sprintf("M%d_N%d_K%d_tA%v_tB%v_ld%d,%d,%d_acc%v_alpha%v_off%d,%d,%d",
		c.M, c.N, c.K, c.TransA, c.TransB, c.LDA, c.LDB, c.LDC, c.Accumulate, c.Alpha, gc.offA, gc.offB, gc.offC)
}

// randomGemmCase picks layouts for an M×N×K product: transposes, leading
// dimensions past the row length, accumulate, alpha, offsets 0-7.
func randomGemmCase(r *rand.Rand, m, n, k int) gemmCase {
	cfg := GemmConfig{M: m, N: n, K: k, TransA: r.IntN(2) == 0, TransB: r.IntN(2) == 0,
		Accumulate: r.IntN(3) == 0, Alpha: []float32{1, 1, 0.5, -2}[r.IntN(4)]}
	if cfg.Accumulate {
		cfg.Alpha = 1 // Accumulate needs Alpha 1
	}
	ar, ac := cfg.storedA()
	br, bc := cfg.storedB()
	_, _ = ar, br
	if r.IntN(2) == 0 {
		cfg.LDA = ac + 1 + r.IntN(9)
	}
	if r.IntN(2) == 0 {
		cfg.LDB = bc + 1 + r.IntN(9)
	}
	if r.IntN(2) == 0 {
		cfg.LDC = n + 1 + r.IntN(9)
	}
	return gemmCase{cfg: cfg, offA: r.IntN(8), offB: r.IntN(8), offC: r.IntN(8)}
}

// runGemmCase builds the operands of gc, runs it with v over par (with B
// pre-packed when packed is set) and checks the result, the guards and
// that A and B are unchanged.
func runGemmCase(t *testing.T, r *rand.Rand, gc gemmCase, v *GemmVariant, par Par, packed bool, ep *Epilogue) {
	t.Helper()
	cfg := gc.cfg
	if err := cfg.normalise(); err != nil {
		t.Fatal(err)
	}
	ar, ac := cfg.storedA()
	br, bc := cfg.storedB()
	A := newGemmOperand(ar, ac, cfg.LDA, gc.offA, func(i, j int) float32 { return gemmRand(r) })
	B := newGemmOperand(br, bc, cfg.LDB, gc.offB, func(i, j int) float32 { return gemmRand(r) })
	C := newGemmOperand(cfg.M, cfg.N, cfg.LDC, gc.offC, func(i, j int) float32 {
		if cfg.Accumulate {
			return gemmRand(r)
		}
		return float32(math.NaN()) // overwrite mode must never read C
	})
	if gc.poke != nil {
		gc.poke(A.data, B.data)
	}
	ref, mag := refGemm(cfg, A.data, B.data, C.data, ep, 0)
	sa, sb, sc := A.snapshot(), B.snapshot(), C.snapshot()
	g, err := NewGemm(gc.cfg, v, par)
	if err != nil {
		t.Fatal(err)
	}
	args := &GemmArgs{A: A.data, B: B.data, C: C.data, Epilogue: ep}
	if packed {
		args.PackedB, args.B = new(PackedB), nil
		if err := g.PackB(args.PackedB, B.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Run(args); err != nil {
		t.Fatalf("%v: %v", gc, err)
	}
	what := fmt.Sprintf("%s/%v/packed=%v", v.Name, gc, packed)
	checkGemmC(t, C.data, cfg.LDC, ref, mag, cfg.M, cfg.N, cfg.K, what)
	C.checkOutside(t, sc, cfg.M, cfg.N, cfg.LDC)
	A.checkSame(t, sa, "A")
	B.checkSame(t, sb, "B")
}

// gemmTailDims are sizes around the vector width, the tile shape and the
// cache blocks.
var gemmTailDims = []int{1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 63, 65, 127}

// gemmTestVariants is every variant this machine runs, each also with tiny
// cache blocks so that small shapes cross every block boundary.
func gemmTestVariants() []*GemmVariant {
	var vs []*GemmVariant
	for _, v := range GemmVariants() {
		tiny := v.withBlocking(5, 2*v.mr, 2*v.nr)
		tiny.Name = v.Name + "-tiny"
		vs = append(vs, v, tiny)
	}
	return vs
}

func TestGemmShapes(t *testing.T) {
	big := [][3]int{{1000, 17, 33}, {7, 65, 1000}, {3, 1000, 31}, {1, 1000, 127}, {1000, 1, 65}, {130, 300, 257}, {2, 33, 1000}}
	for _, v := range gemmTestVariants() {
		t.Run(v.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(v.Name))))
			var shapes [][3]int
			for range 120 {
				shapes = append(shapes, [3]int{gemmTailDims[r.IntN(len(gemmTailDims))], gemmTailDims[r.IntN(len(gemmTailDims))], gemmTailDims[r.IntN(len(gemmTailDims))]})
			}
			shapes = append(shapes, big...)
			for i, s := range shapes {
				gc := randomGemmCase(r, s[0], s[1], s[2])
				par := Par{}
				if i%3 == 1 {
					par = gemmTestPar(2)
				} else if i%3 == 2 {
					par = gemmTestPar(3)
				}
				runGemmCase(t, r, gc, v, par, i%4 == 3, nil)
			}
		})
	}
}

// TestGemmEveryTail runs every pair of tail sizes in M and N (K too, with
// N fixed), each variant, so no edge-tile combination is left to chance.
func TestGemmEveryTail(t *testing.T) {
	for _, v := range gemmTestVariants() {
		t.Run(v.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(2, 3))
			for _, m := range gemmTailDims[:10] {
				for _, n := range gemmTailDims[:10] {
					runGemmCase(t, r, randomGemmCase(r, m, n, 9), v, Par{}, false, nil)
				}
				for _, k := range gemmTailDims {
					runGemmCase(t, r, randomGemmCase(r, m, 19, k), v, gemmTestPar(2), m%2 == 0, nil)
				}
			}
		})
	}
}

// TestGemmZeroDims: an empty product leaves C alone; K = 0 makes it zero
// (or leaves it, accumulating) and still applies the epilogue.
func TestGemmZeroDims(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	for _, v := range GemmVariants() {
		for _, s := range [][3]int{{0, 5, 3}, {5, 0, 3}, {0, 0, 0}, {4, 5, 0}, {1, 20, 0}, {0, 3, 0}} {
			for _, acc := range []bool{false, true} {
				gc := gemmCase{cfg: GemmConfig{M: s[0], N: s[1], K: s[2], Alpha: 1, Accumulate: acc}, offC: 3}
				runGemmCase(t, r, gc, v, gemmTestPar(2), false, nil)
				runGemmCase(t, r, gc, v, Par{}, true, &Epilogue{Bias: []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, Act: ActSilu})
			}
		}
	}
}
