package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// TestGemmShrink: a run with GemmArgs.N and K smaller than the plan's
// gives, bit for bit, what a plan made for the smaller product gives
// (same variant and blocking), with B row-major, pre-packed at the
// smaller depth, or pre-packed with more columns than the run uses; it
// writes nothing past the smaller C, and the plan is whole again after.
func TestGemmShrink(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, v := range gemmTestVariants() {
		for _, par := range []Par{{}, gemmTestPar(3)} {
			for _, s := range [][5]int{{13, 40, 37, 17, 9}, {64, 512, 64, 384, 0}, {256, 64, 512, 0, 300}, {1, 70, 50, 33, 21}, {7, 16, 600, 16, 599}} {
				m, n, k, n2, k2 := s[0], s[1], s[2], s[3], s[4]
				for _, transB := range []bool{false, true} {
					for _, packed := range []int{0, 1, 2} { // row-major, packed at the run's dims, packed with all N columns
						t.Run(fmt.Sprintf("%s/t%d/%v/tB%v/p%d", v.Name, par.Threads, s, transB, packed), func(t *testing.T) {
							shrinkCase(t, r, v, par, m, n, k, n2, k2, transB, packed)
						})
					}
				}
			}
		}
	}
}

func shrinkCase(t *testing.T, r *rand.Rand, v *GemmVariant, par Par, m, n, k, n2, k2 int, transB bool, packed int) {
	rn, rk := n, k // the run's dims
	if n2 > 0 {
		rn = n2
	}
	if k2 > 0 {
		rk = k2
	}
	big := GemmConfig{M: m, N: n, K: k, TransB: transB, LDA: k + 3, LDB: max(n, k) + 2, LDC: n + 1, Alpha: 1, Accumulate: true}
	small := big
	small.N, small.K = rn, rk
	fill := func(size int) []float32 {
		x := make([]float32, size)
		for i := range x {
			x[i] = gemmRand(r)
		}
		return x
	}
	a, b := fill(m*big.LDA), fill(max(n, k)*big.LDB)
	c0 := fill(m * big.LDC)
	want := append([]float32(nil), c0...)
	ref, err := NewGemm(small, v, par)
	if err != nil {
		t.Fatal(err)
	}
	refArgs := &GemmArgs{A: a, B: b, C: want}
	if packed > 0 { // one-row products sum a packed B in another order
		refArgs.PackedB = new(PackedB)
		if err := ref.PackB(refArgs.PackedB, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := ref.Run(refArgs); err != nil {
		t.Fatal(err)
	}
	g, err := NewGemm(big, v, par)
	if err != nil {
		t.Fatal(err)
	}
	args := &GemmArgs{A: a, B: b, C: append([]float32(nil), c0...), N: n2, K: k2}
	if packed > 0 {
		pn := rn
		if packed == 2 {
			pn = n
		}
		args.PackedB, args.B = new(PackedB), nil
		if err := g.PackBDims(args.PackedB, b, rk, pn); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Run(args); err != nil {
		t.Fatal(err)
	}
	for i, x := range args.C {
		if math.Float32bits(x) != math.Float32bits(want[i]) {
			t.Fatalf("C[%d] (row %d col %d) = %v, want %v", i, i/big.LDC, i%big.LDC, x, want[i])
		}
	}
	if g.cfg != func() GemmConfig { c := big; _ = c.normalise(); return c }() {
		t.Fatalf("plan left at %+v", g.cfg)
	}
	// The full product still runs as planned after a smaller one.
	full, err := NewGemm(big, v, par)
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := append([]float32(nil), c0...), append([]float32(nil), c0...)
	if err := full.Run(&GemmArgs{A: a, B: b, C: c1}); err != nil {
		t.Fatal(err)
	}
	if err := g.Run(&GemmArgs{A: a, B: b, C: c2}); err != nil {
		t.Fatal(err)
	}
	for i := range c1 {
		if math.Float32bits(c1[i]) != math.Float32bits(c2[i]) {
			t.Fatalf("after the smaller run, full C[%d] = %v, want %v", i, c2[i], c1[i])
		}
	}
}

// TestGemmShrinkErrors: sizes past the plan's, negative sizes and a
// packed B of the wrong depth are errors that name the sizes.
func TestGemmShrinkErrors(t *testing.T) {
	g, err := NewGemm(GemmConfig{M: 4, N: 32, K: 20, Alpha: 1}, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := make([]float32, 80), make([]float32, 640), make([]float32, 128)
	for _, tc := range []struct {
		n, k int
		want string
	}{{33, 0, "N=33"}, {0, 21, "K=21"}, {-1, 0, "N=-1"}, {0, -2, "K=-2"}} {
		if err := g.Run(&GemmArgs{A: a, B: b, C: c, N: tc.n, K: tc.k}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("N=%d K=%d: error %v, want one naming %s", tc.n, tc.k, err, tc.want)
		}
		if err := g.PackBDims(new(PackedB), b, tc.k, tc.n); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PackBDims N=%d K=%d: error %v, want one naming %s", tc.n, tc.k, err, tc.want)
		}
	}
	pb := new(PackedB)
	if err := g.PackBDims(pb, b, 10, 0); err != nil {
		t.Fatal(err)
	}
	if err := g.Run(&GemmArgs{A: a, C: c, PackedB: pb, K: 12}); err == nil || !strings.Contains(err.Error(), "packed B is 10×32") {
		t.Errorf("depth 12 from B packed 10 deep: error %v", err)
	}
	if err := g.Run(&GemmArgs{A: a, C: c, PackedB: pb}); err == nil {
		t.Error("full depth from B packed 10 deep: no error")
	}
	if err := g.Run(&GemmArgs{A: a, C: c, PackedB: pb, K: 10}); err != nil {
		t.Errorf("depth 10 from B packed 10 deep: %v", err)
	}
	if err := g.Run(&GemmArgs{A: a[:3*20+10], B: b, C: c, K: 10}); err != nil {
		t.Errorf("A sized for depth 10: %v", err) // rows 0-2 stride 20, row 3 needs 10
	}
	if err := g.Run(&GemmArgs{A: a[:3*20+9], B: b, C: c, K: 10}); err == nil || !strings.Contains(err.Error(), "needs 70") {
		t.Errorf("A one short for depth 10: error %v", err)
	}
}

// TestGemmOverwrite: Overwrite runs an Accumulate plan as a plain one
// (C full of NaN is never read), bit for bit, on every path (one row,
// edges, depth blocks, parallel), and the next run accumulates again.
func TestGemmOverwrite(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	for _, v := range gemmTestVariants() {
		for _, par := range []Par{{}, gemmTestPar(2)} {
			for _, s := range [][3]int{{1, 40, 30}, {13, 40, 300}, {64, 64, 64}} {
				m, n, k := s[0], s[1], s[2]
				a, b := make([]float32, m*k), make([]float32, k*n)
				for _, x := range [][]float32{a, b} {
					for i := range x {
						x[i] = gemmRand(r)
					}
				}
				plain, err := NewGemm(GemmConfig{M: m, N: n, K: k, Alpha: 1}, v, par)
				if err != nil {
					t.Fatal(err)
				}
				acc, err := NewGemm(GemmConfig{M: m, N: n, K: k, Alpha: 1, Accumulate: true}, v, par)
				if err != nil {
					t.Fatal(err)
				}
				want, got := make([]float32, m*n), make([]float32, m*n)
				for i := range got {
					got[i] = float32(math.NaN())
				}
				if err := plain.Run(&GemmArgs{A: a, B: b, C: want}); err != nil {
					t.Fatal(err)
				}
				if err := acc.Run(&GemmArgs{A: a, B: b, C: got, Overwrite: true}); err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s %v: C[%d] = %v, want %v", v.Name, s, i, got[i], want[i])
					}
				}
				if err := acc.Run(&GemmArgs{A: a, B: b, C: got}); err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if approx.Far(float64(got[i]), float64(2*want[i]), 1e-5*float64(k)) {
						t.Fatalf("%s %v: second run C[%d] = %v, want %v", v.Name, s, i, got[i], 2*want[i])
					}
				}
			}
		}
	}
}

// TestGemmShrinkRows: a run with GemmArgs.M smaller than the plan's
// gives, bit for bit, what a plan made for that many rows gives, from
// the same packed B (packing does not depend on M), on the GEMV, edge
// and parallel paths; rows past M are not written; M past the plan's or
// negative is an error naming it.
func TestGemmShrinkRows(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 17))
	const m, n, k = 70, 96, 130
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = gemmRand(r)
	}
	for i := range b {
		b[i] = gemmRand(r)
	}
	for _, v := range gemmTestVariants() {
		for _, par := range []Par{{}, gemmTestPar(3)} {
			g, err := NewGemm(GemmConfig{M: m, N: n, K: k, Alpha: 1}, v, par)
			if err != nil {
				t.Fatal(err)
			}
			pb := new(PackedB)
			if err := g.PackB(pb, b); err != nil {
				t.Fatal(err)
			}
			for _, rows := range []int{1, 2, 5, 37, m} {
				ref, err := NewGemm(GemmConfig{M: rows, N: n, K: k, Alpha: 1}, v, par)
				if err != nil {
					t.Fatal(err)
				}
				want := make([]float32, rows*n)
				if err := ref.Run(&GemmArgs{A: a, C: want, PackedB: pb}); err != nil {
					t.Fatal(err)
				}
				got := make([]float32, m*n)
				for i := range got {
					got[i] = -7
				}
				if err := g.Run(&GemmArgs{A: a[:rows*k], C: got, PackedB: pb, M: rows}); err != nil {
					t.Fatal(err)
				}
				for i, x := range got {
					w := float32(-7)
					if i < rows*n {
						w = want[i]
					}
					if math.Float32bits(x) != math.Float32bits(w) {
						t.Fatalf("%s/t%d M=%d: C[%d] = %v, want %v", v.Name, par.Threads, rows, i, x, w)
					}
				}
			}
			for _, bad := range []int{m + 1, -1} {
				if err := g.Run(&GemmArgs{A: a, C: make([]float32, m*n), PackedB: pb, M: bad}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("M=%d", bad)) {
					t.Errorf("M=%d: error %v, want one naming it", bad, err)
				}
			}
		}
	}
}
