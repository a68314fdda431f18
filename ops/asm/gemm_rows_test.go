package asm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// TestGemmFewRowsKernels runs each variant's fewRows kernel straight: 1
// to fewRowsMax rows, every k from 1 to 19, A stored by rows and by
// columns (in place, wider than its rows), C strides wider than 64, both
// modes, guards around C and its row gaps. Each value must match float64
// and the pure-Go twin, and have the bits of the variant's micro-kernel
// over the same A packed into an MR-row panel (the claim that lets a
// block of few rows take either path).
func TestGemmFewRowsKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const w = fewRowsPanels * 16
	for _, v := range GemmVariants() {
		if v.fewRows == nil {
			continue
		}
		for rows := 1; rows <= fewRowsMax; rows++ {
			for k := 1; k <= 19; k++ {
				for _, trans := range []bool{false, true} {
					for _, ldc := range []int{w, w + 3} {
						for _, acc := range []bool{false, true} {
							checkFewRows(t, v, r, rows, k, trans, ldc, acc)
						}
					}
				}
			}
		}
	}
}

func checkFewRows(t *testing.T, v *GemmVariant, r *rand.Rand, rows, k int, trans bool, ldc int, acc bool) {
	t.Helper()
	const w = fewRowsPanels * 16
	lda := k + 5 // A stored rows×k (or k×rows with trans), rows lda apart
	if trans {
		lda = rows + 3
	}
	stored := make([]float32, (max(rows, k)+1)*lda)
	for i := range stored {
		stored[i] = gemmRand(r)
	}
	at := func(i, p int) float32 {
		if trans {
			return stored[p*lda+i]
		}
		return stored[i*lda+p]
	}
	rs, ps := 4*lda, 4
	if trans {
		rs, ps = 4, 4*lda
	}
	b := make([]float32, fewRowsPanels*16*k)
	for i := range b {
		b[i] = gemmRand(r)
	}
	bv := func(p, j int) float32 { return b[(j/16*k+p)*16+j%16] }
	old := func(i, j int) float32 { return float32(i*w+j) / 7 }
	c, twin := newGemmOperand(rows, w, ldc, 1+r.IntN(7), old), newGemmOperand(rows, w, ldc, 0, old)
	snap := c.snapshot()
	flags := uint(0)
	if acc {
		flags = gemmAccumulate
	}
	v.fewRows(rows, k, &stored[0], rs, ps, &b[0], &c.data[0], ldc, flags)
	gemmRowsGo(rows, k, &stored[0], rs, ps, &b[0], &twin.data[0], ldc, flags)
	c.checkOutside(t, snap, rows, w, ldc)
	// The micro-kernel's bits: A packed into an MR-row panel (zero rows
	// past rows), one call per 16-column panel.
	pan := make([]float32, v.mr*k)
	for p := range k {
		for i := range rows {
			pan[p*v.mr+i] = at(i, p)
		}
	}
	tile := make([]float32, v.mr*16)
	for q := range fewRowsPanels {
		for i := range rows {
			for j := range 16 {
				tile[i*16+j] = old(i, q*16+j)
			}
		}
		v.micro(k, &pan[0], &b[q*16*k], &tile[0], 16, flags)
		for i := range rows {
			for j := range 16 {
				if got, want := c.data[i*ldc+q*16+j], tile[i*16+j]; math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%s rows=%d k=%d trans=%v acc=%v: [%d,%d] = %v, the micro-kernel's %v", v.Name, rows, k, trans, acc, i, q*16+j, got, want)
				}
			}
		}
	}
	for i := range rows {
		for j := range w {
			var s, g float64
			for p := range k {
				x := float64(at(i, p)) * float64(bv(p, j))
				s, g = s+x, g+math.Abs(x)
			}
			if acc {
				s += float64(old(i, j))
				g += math.Abs(float64(old(i, j)))
			}
			tol := gemmTol(k)*g + 1e-30
			got, tw := float64(c.data[i*ldc+j]), float64(twin.data[i*ldc+j])
			if approx.Far(got, s, tol) || approx.Far(tw, s, tol) {
				t.Fatalf("%s rows=%d k=%d trans=%v ldc=%d acc=%v: [%d,%d] = %v (twin %v), want %v", v.Name, rows, k, trans, ldc, acc, i, j, got, tw, s)
			}
		}
	}
}
