package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// bf16Bound is the documented error bound of a BF16 product (see
// gemm_bf16.go) for one element: mag = Σ|a||b| (alpha and the residual's
// magnitude included), bsum = Σ|b| over the element's column of op(B)
// (what A's flushed denormals can lose), k the depth.
func bf16Bound(mag, bsum float64, k int) float64 {
	return mag*(0x1p-8+float64(k+k/256+4)*0x1p-24) + (bsum+float64(k)+2)*0x1p-126
}

// bf16Case is one randomised BF16 product: a gemmCase (no Accumulate)
// with an optional residual epilogue and a filler for A.
type bf16Case struct {
	gemmCase
	residual bool
	fillA    func(r *rand.Rand) float32
	fillB    func(r *rand.Rand) float32
}

// bf16Value returns a random bf16-exact float32 in [-1, 1): weights as
// SetParamTyped(…, BF16) leaves them.
func bf16Value(r *rand.Rand) float32 {
	return math.Float32frombits(uint32(bf16Round(gemmRand(r))) << 16)
}

// runBF16Case runs bc with v over par and checks C against the float64
// product of the original float32 A and the packed (bf16) B within
// bf16Bound, NaN for NaN and the same infinity, plus the guards around C
// and that A and B are unchanged.
func runBF16Case(t *testing.T, r *rand.Rand, bc bf16Case, v *GemmBF16Variant, par Par) {
	t.Helper()
	cfg := bc.cfg
	if err := cfg.normalise(); err != nil {
		t.Fatal(err)
	}
	fillA, fillB := bc.fillA, bc.fillB
	if fillA == nil {
		fillA = gemmRand
	}
	if fillB == nil {
		fillB = bf16Value
	}
	ar, ac := cfg.storedA()
	br, bcols := cfg.storedB()
	A := newGemmOperand(ar, ac, cfg.LDA, bc.offA, func(i, j int) float32 { return fillA(r) })
	B := newGemmOperand(br, bcols, cfg.LDB, bc.offB, func(i, j int) float32 { return fillB(r) })
	C := newGemmOperand(cfg.M, cfg.N, cfg.LDC, bc.offC, func(i, j int) float32 { return float32(math.NaN()) })
	if bc.poke != nil {
		bc.poke(A.data, B.data)
	}
	var ep *Epilogue
	if bc.residual {
		res := make([]float32, cfg.M*cfg.N)
		for i := range res {
			res[i] = gemmRand(r)
		}
		ep = &Epilogue{Residual: res, ResRowStride: cfg.N, ResColStride: 1, ResScale: 0.5}
	}
	// The reference: B as the kernel sees it (rounded to bf16, exact for
	// bf16 weights), A as given.
	bq := make([]float32, len(B.data))
	for i, x := range B.data {
		bq[i] = math.Float32frombits(uint32(bf16Round(x)) << 16)
	}
	ref, mag := refGemm(cfg, A.data, bq, nil, ep, 0)
	sa, sb, sc := A.snapshot(), B.snapshot(), C.snapshot()
	g, err := NewGemmBF16(bc.cfg, v, par)
	if err != nil {
		t.Fatal(err)
	}
	pb := new(PackedBF16)
	if err := g.PackB(pb, B.data); err != nil {
		t.Fatal(err)
	}
	args := &GemmBF16Args{A: A.data, C: C.data, B: pb, Epilogue: ep}
	for run := range 2 { // a second run reuses the plan's buffers
		if err := g.Run(args); err != nil {
			t.Fatalf("%v: %v", bc.gemmCase, err)
		}
		what := fmt.Sprintf("%s/%v/res=%v/run%d", v.Name, bc.gemmCase, bc.residual, run)
		for i := range cfg.M {
			for j := range cfg.N {
				var bsum float64
				for p := range cfg.K {
					if cfg.TransB {
						bsum += math.Abs(float64(bq[j*cfg.LDB+p]))
					} else {
						bsum += math.Abs(float64(bq[p*cfg.LDB+j]))
					}
				}
				got, want := float64(C.data[i*cfg.LDC+j]), ref[i*cfg.N+j]
				if tol := bf16Bound(mag[i*cfg.N+j], bsum, cfg.K); !close64(got, want, 1, tol) {
					t.Fatalf("%s: C[%d,%d] = %v, want %v (err %.3g, bound %.3g)", what, i, j, got, want, math.Abs(got-want), tol)
				}
			}
		}
	}
	C.checkOutside(t, sc, cfg.M, cfg.N, cfg.LDC)
	A.checkSame(t, sa, "A")
	B.checkSame(t, sb, "B")
}

// bf16Dims are sizes around the tile (12×16), a pair of steps, the
// conversion block (32) and the depth block (512).
var bf16Dims = []int{1, 2, 3, 7, 11, 12, 13, 16, 17, 24, 31, 32, 33, 47, 63, 64, 65}

// TestGemmBF16Accuracy runs random shapes and layouts (transposes,
// strides, offsets, alpha, a residual epilogue) on every BF16 variant,
// serially and shared among workers, against the bound.
func TestGemmBF16Accuracy(t *testing.T) {
	defer func(p int) { parMinFlops = p }(parMinFlops)
	big := [][3]int{{1, 384, 1536}, {128, 40, 384}, {13, 33, 1025}, {300, 17, 513}, {5, 1000, 511}, {25, 70, 2048}}
	for _, v := range GemmBF16Variants() {
		t.Run(v.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(len(v.Name))))
			var shapes [][3]int
			for range 150 {
				shapes = append(shapes, [3]int{bf16Dims[r.IntN(len(bf16Dims))], bf16Dims[r.IntN(len(bf16Dims))], bf16Dims[r.IntN(len(bf16Dims))]})
			}
			shapes = append(shapes, big...)
			for i, s := range shapes {
				parMinFlops = []int{1 << 19, 1}[i%2]
				gc := randomGemmCase(r, s[0], s[1], s[2])
				gc.cfg.Accumulate = false
				if i%3 != 0 {
					if gc.cfg.TransA {
						gc.cfg.TransA, gc.cfg.LDA = false, 0
					}
					gc.cfg.Alpha = 1 // mostly the assembly conversion's path
				}
				par := []Par{{}, gemmTestPar(2), gemmTestPar(3)}[i%3]
				runBF16Case(t, r, bf16Case{gemmCase: gc, residual: i%5 == 4}, v, par)
			}
		})
	}
}

// TestGemmBF16Special: NaN and ±Inf in A or B propagate as in the float64
// product (NaN rows and columns, infinities of the right sign, Inf·0 =
// NaN); A values that are float32 denormals read as zero; non-bf16 B
// values are rounded when packed; K = 0 writes zeros and applies the
// epilogue; an empty product is a no-op.
func TestGemmBF16Special(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, v := range GemmBF16Variants() {
		for _, s := range [][3]int{{13, 17, 33}, {1, 40, 64}, {25, 16, 7}} {
			m, n, k := s[0], s[1], s[2]
			for _, tb := range []bool{false, true} {
				cfg := GemmConfig{M: m, N: n, K: k, Alpha: 1, TransB: tb}
				pokes := []func(a, b []float32){
					func(a, b []float32) { a[min(3, m-1)*k+k/2] = float32(math.NaN()) },               // a NaN row
					func(a, b []float32) { a[(m-1)*k] = float32(math.Inf(1)) },                        // last row ±Inf (or NaN where a b is 0)
					func(a, b []float32) { a[0], a[1] = float32(math.Inf(1)), float32(math.Inf(-1)) }, // Inf - Inf where k > 1
					func(a, b []float32) { b[len(b)/2] = float32(math.NaN()) },                        // one B value
					func(a, b []float32) { b[0] = float32(math.Inf(-1)) },                             // one B infinity
					func(a, b []float32) { b[1] = 0; a[1] = float32(math.Inf(1)) },                    // Inf · 0
				}
				for _, poke := range pokes {
					runBF16Case(t, r, bf16Case{gemmCase: gemmCase{cfg: cfg, poke: poke}}, v, gemmTestPar(2))
				}
			}
			cfg := GemmConfig{M: m, N: n, K: k, Alpha: 1}
			denormal := func(r *rand.Rand) float32 { return math.Float32frombits(uint32(r.IntN(1 << 23))) }
			runBF16Case(t, r, bf16Case{gemmCase: gemmCase{cfg: cfg}, fillA: denormal}, v, Par{})
			runBF16Case(t, r, bf16Case{gemmCase: gemmCase{cfg: cfg}, fillB: gemmRand}, v, Par{}) // B rounded when packed
		}
		for _, s := range [][3]int{{0, 5, 3}, {5, 0, 3}, {4, 5, 0}, {1, 20, 0}} {
			cfg := GemmConfig{M: s[0], N: s[1], K: s[2], Alpha: 1}
			runBF16Case(t, r, bf16Case{gemmCase: gemmCase{cfg: cfg, offC: 3}, residual: true}, v, gemmTestPar(2))
		}
	}
}

// TestGemmBF16Variants: the assembly and the twin give the same bits
// through the whole plan (conversion, packing, tiles, edges) on random
// data, where the CPU follows VDPBF16PS's documented rounding (every
// AVX512_BF16 CPU tested so far); see TestBF16PanelKernel for the
// tolerant kernel check.
func TestGemmBF16Variants(t *testing.T) {
	vs := GemmBF16Variants()
	if len(vs) < 2 {
		t.Skip("no AVX512_BF16 here (or KILN_CPU rules it out)")
	}
	r := rand.New(rand.NewPCG(10, 11))
	for _, s := range [][3]int{{37, 45, 1100}, {1, 100, 77}, {12, 16, 64}} {
		cfg := GemmConfig{M: s[0], N: s[1], K: s[2], Alpha: 1}
		a, b := make([]float32, s[0]*s[2]), make([]float32, s[2]*s[1])
		for i := range a {
			a[i] = gemmRand(r)
		}
		for i := range b {
			b[i] = bf16Value(r)
		}
		var outs [2][]float32
		for vi, v := range vs {
			g, err := NewGemmBF16(cfg, v, gemmTestPar(2))
			if err != nil {
				t.Fatal(err)
			}
			pb := new(PackedBF16)
			if err := g.PackB(pb, b); err != nil {
				t.Fatal(err)
			}
			outs[vi] = make([]float32, s[0]*s[1])
			if err := g.Run(&GemmBF16Args{A: a, C: outs[vi], B: pb}); err != nil {
				t.Fatal(err)
			}
		}
		differ := 0
		for i := range outs[0] {
			if math.Float32bits(outs[0][i]) != math.Float32bits(outs[1][i]) {
				differ++
			}
		}
		if differ > 0 {
			t.Logf("%v: %d of %d elements differ from the twin in their bits (this CPU rounds VDPBF16PS otherwise)", s, differ, len(outs[0]))
		}
	}
}

// TestGemmBF16Errors: bad operands are errors, before anything runs.
func TestGemmBF16Errors(t *testing.T) {
	v := GemmBF16Variants()[0]
	g, err := NewGemmBF16(GemmConfig{M: 4, N: 5, K: 6, Alpha: 1}, v, Par{})
	if err != nil {
		t.Fatal(err)
	}
	pb := new(PackedBF16)
	if err := g.PackB(pb, make([]float32, 29)); err == nil {
		t.Error("short B packed")
	}
	if err := g.PackB(pb, make([]float32, 30)); err != nil {
		t.Fatal(err)
	}
	a, c := make([]float32, 24), make([]float32, 20)
	other := new(PackedBF16)
	g2, _ := NewGemmBF16(GemmConfig{M: 4, N: 5, K: 7, Alpha: 1}, v, Par{})
	_ = g2.PackB(other, make([]float32, 35))
	for name, args := range map[string]*GemmBF16Args{
		"no B":       {A: a, C: c},
		"other K":    {A: a, C: c, B: other},
		"short A":    {A: a[:23], C: c, B: pb},
		"short C":    {A: a, C: c[:19], B: pb},
		"C over A":   {A: a, C: a[:20], B: pb},
		"bad bias":   {A: a, C: c, B: pb, Epilogue: &Epilogue{Bias: []float32{1}}},
		"res over C": {A: a, C: c, B: pb, Epilogue: &Epilogue{Residual: c, ResRowStride: 5, ResColStride: 1}},
	} {
		if err := g.Run(args); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := NewGemmBF16(GemmConfig{M: 1, N: 1, K: 1, Alpha: 1, Accumulate: true}, v, Par{}); err == nil {
		t.Error("Accumulate accepted")
	}
}
