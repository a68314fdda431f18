package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmMicro4 runs each variant's partial kernels (four and eight
// rows, where it has them) against its full kernel on the same panels,
// with and without the next-panel prefetch flag: their rows must be the
// same bits (the blocked product relies on it to mix them, so a row's
// result does not depend on M), nothing outside their rows may be
// written, and the prefetch bit must change nothing.
func TestGemmMicro4(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, v := range GemmVariants() {
		for _, pk := range []struct {
			rows  int
			micro microKernel
		}{{4, v.micro4}, {8, v.micro8}} {
			if pk.micro != nil {
				partialKernelCase(t, r, v, pk.rows, pk.micro)
			}
		}
	}
}

// partialKernelCase checks one partial kernel of v (see TestGemmMicro4).
func partialKernelCase(t *testing.T, r *rand.Rand, v *GemmVariant, rows int, micro microKernel) {
	mr, nr := v.mr, v.nr
	for k := 1; k <= 4*4+3; k++ {
		for _, ldc := range []int{nr, nr + 1, 3*nr + 5} {
			for _, flags := range []uint{0, gemmAccumulate, gemmPrefetchNext, gemmAccumulate | gemmPrefetchNext} {
				a, b := make([]float32, k*mr), make([]float32, k*nr)
				for i := range a {
					a[i] = gemmRand(r)
				}
				for i := range b {
					b[i] = gemmRand(r)
				}
				init := func(i, j int) float32 { return float32(i*nr+j) / 7 }
				c4 := newGemmOperand(rows, nr, ldc, 1+r.IntN(7), init)
				c6, c6p := newGemmOperand(mr, nr, ldc, 0, init), newGemmOperand(mr, nr, ldc, 0, init)
				snap := c4.snapshot()
				micro(k, &a[0], &b[0], &c4.data[0], ldc, flags)
				v.micro(k, &a[0], &b[0], &c6.data[0], ldc, flags&gemmAccumulate)
				v.micro(k, &a[0], &b[0], &c6p.data[0], ldc, flags)
				for i, x := range c6p.data {
					if math.Float32bits(x) != math.Float32bits(c6.data[i]) {
						t.Fatalf("%s k=%d ldc=%d flags=%d: six-row kernel's element %d is %v, %v without prefetch", v.Name, k, ldc, flags, i, x, c6.data[i])
					}
				}
				c4.checkOutside(t, snap, rows, nr, ldc)
				for i := range rows {
					for j := range nr {
						got, want := c4.data[i*ldc+j], c6.data[i*ldc+j]
						if math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("%s %d rows k=%d ldc=%d flags=%d: [%d,%d] = %v, full kernel %v", v.Name, rows, k, ldc, flags, i, j, got, want)
						}
					}
				}
			}
		}
	}
}

// TestGemmMicro4Blocked runs whole products whose last row panel is
// partial (M ≡ 1-11 mod 12, 4 mod 6), B pre-packed and not, overwriting
// and accumulating, with and without the partial kernels: C must be the
// same bits.
func TestGemmMicro4Blocked(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, v := range GemmVariants() {
		if v.micro4 == nil && v.micro8 == nil {
			continue
		}
		plain := *v
		plain.micro4, plain.micro8 = nil, nil
		for _, s := range [][3]int{{16, 300, 40}, {4, 19, 33}, {10, 257, 17}, {20, 40, 48}, {8, 9, 16}, {29, 33, 20}, {3, 17, 16}, {7, 8, 31}} {
			m, k, n := s[0], s[1], s[2]
			a, b, c0 := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
			for _, x := range [][]float32{a, b, c0} {
				for i := range x {
					x[i] = gemmRand(r)
				}
			}
			for _, packed := range []bool{false, true} {
				for _, acc := range []bool{false, true} {
					var outs [2][]float32
					for i, w := range []*GemmVariant{v, &plain} {
						g, err := NewGemm(GemmConfig{M: m, N: n, K: k, Alpha: 1, Accumulate: acc}, w, Par{})
						if err != nil {
							t.Fatal(err)
						}
						args := &GemmArgs{A: a, B: b, C: append([]float32(nil), c0...)}
						if packed {
							args.PackedB, args.B = new(PackedB), nil
							if err := g.PackB(args.PackedB, b); err != nil {
								t.Fatal(err)
							}
						}
						if err := g.Run(args); err != nil {
							t.Fatal(err)
						}
						outs[i] = args.C
					}
					for i, x := range outs[0] {
						if math.Float32bits(x) != math.Float32bits(outs[1][i]) {
							t.Fatalf("%s %v packed=%v acc=%v: C[%d] = %v, %v without the partial kernels", v.Name, s, packed, acc, i, x, outs[1][i])
						}
					}
				}
			}
		}
	}
}
