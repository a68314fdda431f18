package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmPanelKernels: a variant's panel kernels give, bit for bit, what
// calling its micro-kernels tile by tile gives (the rows of every tile,
// its A panel or rows and its C rows found at the right offsets), for
// 1-4 tiles, depths across the unrolled groups, both modes, with and
// without the prefetch hint, and write nothing outside the tiles' rows.
func TestGemmPanelKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	tested := 0
	for _, v := range GemmVariants() {
		if v.panel == nil && v.panelRowA == nil {
			continue
		}
		tested++
		mr, nr := v.mr, v.nr
		for tiles := 1; tiles <= 4; tiles++ {
			for _, k := range []int{1, 3, 4, 7, 16, 19} {
				for _, flags := range []uint{0, gemmAccumulate, gemmPrefetchNext, gemmAccumulate | gemmPrefetchNext, gemmPrefetchFar, gemmAccumulate | gemmPrefetchFar} {
					name := fmt.Sprintf("%s/tiles%d/k%d/flags%d", v.Name, tiles, k, flags)
					rows, ldc, lda := tiles*mr, nr+3, k+5
					a := make([]float32, rows*k) // packed: tile t's panel at t*mr*k
					arows := make([]float32, rows*lda)
					b := make([]float32, k*nr)
					for _, x := range [][]float32{a, arows, b} {
						for i := range x {
							x[i] = gemmRand(r)
						}
					}
					fill := func(i, j int) float32 { return float32(i*nr+j) / 7 }
					if v.panel != nil {
						c := newGemmOperand(rows, nr, ldc, 1+r.IntN(5), fill)
						want := newGemmOperand(rows, nr, ldc, 0, fill)
						snap := c.snapshot()
						v.panel(tiles, k, &a[0], &b[0], &c.data[0], ldc, flags)
						for tt := range tiles {
							v.micro(k, &a[tt*mr*k], &b[0], &want.data[tt*mr*ldc], ldc, flags&gemmAccumulate) // hints change no bits
						}
						c.checkOutside(t, snap, rows, nr, ldc)
						sameMatrixBits(t, name+"/packed", c.data, want.data, rows, nr, ldc)
					}
					if v.panelRowA != nil {
						c := newGemmOperand(rows, nr, ldc, 1+r.IntN(5), fill)
						want := newGemmOperand(rows, nr, ldc, 0, fill)
						snap := c.snapshot()
						v.panelRowA(tiles, k, &arows[0], lda, &b[0], &c.data[0], ldc, flags)
						for tt := range tiles {
							v.microRowA(k, &arows[tt*mr*lda], lda, &b[0], &want.data[tt*mr*ldc], ldc, flags)
						}
						c.checkOutside(t, snap, rows, nr, ldc)
						sameMatrixBits(t, name+"/rowA", c.data, want.data, rows, nr, ldc)
					}
				}
			}
		}
	}
	if tested == 0 {
		t.Skip("no variant here has panel kernels")
	}
}

// TestGemmPanelPath: whole products with a variant's panel kernels equal
// those of the same variant without them, bit for bit, over shapes with
// row and column tails, depth blocks, A packed and in place, and
// parallel plans.
func TestGemmPanelPath(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	tested := 0
	for _, v := range gemmTestVariants() {
		if v.panel == nil {
			continue
		}
		tested++
		plain := *v
		plain.panel, plain.panelRowA = nil, nil
		for _, par := range []Par{{}, gemmTestPar(2)} {
			for _, s := range [][3]int{{6, 16, 1}, {12, 64, 300}, {256, 512, 64}, {256, 64, 512}, {13, 40, 37}, {31, 17, 5}, {290, 33, 70}} {
				for _, inPlace := range []bool{false, true} {
					m, n, k := s[0], s[1], s[2]
					cfg := GemmConfig{M: m, N: n, K: k, LDA: k + 5, LDC: n + 3, Alpha: 1, Accumulate: true, InPlaceA: inPlace}
					a, b := make([]float32, m*cfg.LDA), make([]float32, k*n)
					c0 := make([]float32, m*cfg.LDC)
					for _, x := range [][]float32{a, b, c0} {
						for i := range x {
							x[i] = gemmRand(r)
						}
					}
					var got [2][]float32
					for i, vv := range []*GemmVariant{v, &plain} {
						g, err := NewGemm(cfg, vv, par)
						if err != nil {
							t.Fatal(err)
						}
						got[i] = append([]float32(nil), c0...)
						if err := g.Run(&GemmArgs{A: a, B: b, C: got[i]}); err != nil {
							t.Fatal(err)
						}
					}
					sameMatrixBits(t, fmt.Sprintf("%s/t%d/%v/inplace%v", v.Name, par.Threads, s, inPlace), got[0], got[1], m, n, cfg.LDC)
				}
			}
		}
	}
	if tested == 0 {
		t.Skip("no variant here has panel kernels")
	}
}

// sameMatrixBits fails unless the rows×cols matrices (stride ld) are equal bit
// for bit.
func sameMatrixBits(t *testing.T, name string, got, want []float32, rows, cols, ld int) {
	t.Helper()
	for i := range rows {
		for j := range cols {
			g, w := got[i*ld+j], want[i*ld+j]
			if math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("%s: [%d,%d] = %v, want %v", name, i, j, g, w)
			}
		}
	}
}

// TestPackBTransposed: a transposed B's panel, 8×8 blocks through the
// transpose primitive and the edges in Go, is exactly the naive
// transpose, zero-padded to NR columns, for every width and depth tail.
func TestPackBTransposed(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	const nr = 16
	for cols := 1; cols <= nr; cols++ {
		for _, kc := range []int{1, 3, 7, 8, 9, 16, 64, 67} {
			ldb := kc + r.IntN(3)
			b := make([]float32, (cols-1)*ldb+kc)
			for i := range b {
				b[i] = gemmRand(r)
			}
			pan := make([]float32, kc*nr+5)
			for i := range pan {
				pan[i] = 99 // stale: the padding must be cleared
			}
			packBTransposed(pan, b, ldb, kc, nr, cols)
			for p := range kc {
				for c := range nr {
					want := float32(0)
					if c < cols {
						want = b[c*ldb+p]
					}
					if got := pan[p*nr+c]; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("cols %d kc %d ldb %d: panel[%d][%d] = %v, want %v", cols, kc, ldb, p, c, got, want)
					}
				}
			}
			for _, x := range pan[kc*nr:] {
				if x != 99 {
					t.Fatalf("cols %d kc %d: written past the panel", cols, kc)
				}
			}
		}
	}
}
