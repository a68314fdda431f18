package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// TestGemmCols runs each variant's colsKernel and the Go twin for its MR
// at depths around the unrolling (none included) against float64 sums,
// from panels of exactly k steps; the scratch starts as NaN, so a row it
// leaves unwritten fails.
func TestGemmCols(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, v := range GemmVariants() {
		if v.cols == nil {
			continue
		}
		mr := v.mr
		for _, k := range []int{0, 1, 2, 3, 4, 7, 16, 33, 300} {
			t.Run(fmt.Sprintf("%s/k%d", v.Name, k), func(t *testing.T) {
				a := make([]float32, k*mr)
				b := make([]float32, k*16)
				for i := range a {
					a[i] = gemmRand(r)
				}
				for i := range b {
					b[i] = gemmRand(r)
				}
				got, twin := make([]float32, colsMax*16), make([]float32, colsMax*16)
				for i := range got {
					got[i], twin[i] = float32(math.NaN()), float32(math.NaN()) // every used lane is written
				}
				ap, bp := (*float32)(nil), (*float32)(nil)
				if k > 0 {
					ap, bp = &a[0], &b[0]
				}
				v.cols(k, ap, bp, &got[0])
				gemmColsGo(mr)(k, ap, bp, &twin[0])
				for j := range colsMax {
					for i := range mr {
						var s, g float64
						for p := range k {
							x := float64(a[p*mr+i]) * float64(b[p*16+j])
							s, g = s+x, g+math.Abs(x)
						}
						tol := gemmTol(k)*g + 1e-30
						if approx.Far(float64(got[j*16+i]), s, tol) || approx.Far(float64(twin[j*16+i]), s, tol) {
							t.Fatalf("column %d row %d = %v (twin %v), want %v", j, i, got[j*16+i], twin[j*16+i], s)
						}
					}
				}
			})
		}
	}
}
