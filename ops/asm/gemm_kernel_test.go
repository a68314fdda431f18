package asm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// TestGemmMicroKernels runs each variant's micro-kernel straight, for
// every k from 1 to past four unrolled groups, strides wider than the
// tile, both modes, with guards around the tile and its row gaps; the
// result must match float64 and the pure-Go twin.
func TestGemmMicroKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, v := range GemmVariants() {
		mr, nr := v.mr, v.nr
		for k := 1; k <= 4*4+3; k++ {
			for _, ldc := range []int{nr, nr + 1, 3*nr + 5} {
				for _, acc := range []bool{false, true} {
					a := make([]float32, k*mr)
					b := make([]float32, k*nr)
					for i := range a {
						a[i] = gemmRand(r)
					}
					for i := range b {
						b[i] = gemmRand(r)
					}
					mk := func() *gemmOperand {
						return newGemmOperand(mr, nr, ldc, 1+r.IntN(7), func(i, j int) float32 { return float32(i*nr + j) })
					}
					c, twin := mk(), newGemmOperand(mr, nr, ldc, 0, func(i, j int) float32 { return float32(i*nr + j) })
					snap := c.snapshot()
					flags := uint(0)
					if acc {
						flags = gemmAccumulate
					}
					v.micro(k, &a[0], &b[0], &c.data[0], ldc, flags)
					gemmMicroGo(mr)(k, &a[0], &b[0], &twin.data[0], ldc, flags)
					c.checkOutside(t, snap, mr, nr, ldc)
					for i := range mr {
						for j := range nr {
							var s, g float64
							for p := range k {
								x := float64(a[p*mr+i]) * float64(b[p*nr+j])
								s, g = s+x, g+math.Abs(x)
							}
							if acc {
								s += float64(i*nr + j)
								g += float64(i*nr + j)
							}
							tol := gemmTol(k)*g + 1e-30
							got, tw := float64(c.data[i*ldc+j]), float64(twin.data[i*ldc+j])
							if approx.Far(got, s, tol) || approx.Far(tw, s, tol) {
								t.Fatalf("%s k=%d ldc=%d acc=%v: [%d,%d] = %v (twin %v), want %v", v.Name, k, ldc, acc, i, j, got, tw, s)
							}
						}
					}
				}
			}
		}
	}
}

// TestGemvKernels does the same for the one-row kernel, with B rows
// packed (ldb = NR) and strided.
func TestGemvKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, v := range GemmVariants() {
		nr := v.nr
		for k := 1; k <= 4*4+3; k++ {
			for _, ldb := range []int{nr, nr + 3, 5 * nr} {
				for _, acc := range []bool{false, true} {
					x := make([]float32, k)
					for i := range x {
						x[i] = gemmRand(r)
					}
					b := newGemmOperand(k, nr, ldb, r.IntN(8), func(i, j int) float32 { return gemmRand(r) })
					y := newGemmOperand(1, nr, nr, 1+r.IntN(7), func(i, j int) float32 { return float32(j) - 3 })
					twin := make([]float32, nr)
					for j := range twin {
						twin[j] = float32(j) - 3
					}
					snap := y.snapshot()
					flags := uint(0)
					if acc {
						flags = gemmAccumulate
					}
					v.gemv(k, &x[0], &b.data[0], ldb, &y.data[0], flags)
					gemmGo.gemv(k, &x[0], &b.data[0], ldb, &twin[0], flags)
					y.checkOutside(t, snap, 1, nr, nr)
					for j := range nr {
						var s, g float64
						for p := range k {
							e := float64(x[p]) * float64(b.data[p*ldb+j])
							s, g = s+e, g+math.Abs(e)
						}
						if acc {
							s += float64(j) - 3
							g += math.Abs(float64(j) - 3)
						}
						tol := gemmTol(k)*g + 1e-30
						if got := float64(y.data[j]); approx.Far(got, s, tol) || approx.Far(float64(twin[j]), s, tol) {
							t.Fatalf("%s k=%d ldb=%d acc=%v: y[%d] = %v (twin %v), want %v", v.Name, k, ldb, acc, j, got, twin[j], s)
						}
					}
				}
			}
		}
	}
}

// TestGemmVariantTable checks the dispatch: "go" is always last and
// always there, names are unique, and BestGemm is one of the list.
func TestGemmVariantTable(t *testing.T) {
	vs := GemmVariants()
	if len(vs) == 0 || vs[len(vs)-1].Name != "go" {
		t.Fatalf("variants %v must end with go", vs)
	}
	seen := map[string]bool{}
	for _, v := range vs {
		if seen[v.Name] {
			t.Fatalf("variant %s twice", v.Name)
		}
		seen[v.Name] = true
		if GemmVariantNamed(v.Name) != v {
			t.Fatalf("GemmVariantNamed(%s) is not the listed variant", v.Name)
		}
		kc, mc, nc := v.Blocking()
		if mr, nr := v.Tile(); mc%mr != 0 || nc%nr != 0 || kc < 1 || nr > 16*4 {
			t.Fatalf("%s: blocks %d,%d,%d do not fit tile %d×%d", v.Name, kc, mc, nc, mr, nr)
		}
	}
	if !seen[BestGemm().Name] {
		t.Fatalf("BestGemm %s not among %v", BestGemm().Name, vs)
	}
	if GemmVariantNamed("sse9") != nil {
		t.Fatal("unknown variant found")
	}
}

// TestGemmPackKernels: each variant's B-panel packer copies exactly the
// strip (bit for bit, NaN payloads included) and nothing past the panel.
func TestGemmPackKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, v := range GemmVariants() {
		for k := 1; k <= 4*4+3; k++ {
			for _, ld := range []int{16, 17, 40} {
				src := newGemmOperand(k, 16, ld, r.IntN(8), func(i, j int) float32 { return math.Float32frombits(r.Uint32()) })
				dst := newGemmOperand(k, 16, 16, r.IntN(8), func(i, j int) float32 { return 0 })
				snap, ssnap := dst.snapshot(), src.snapshot()
				v.packB16(k, &src.data[0], ld, &dst.data[0])
				dst.checkOutside(t, snap, k, 16, 16)
				src.checkSame(t, ssnap, "src")
				for p := range k {
					for j := range 16 {
						if math.Float32bits(dst.data[p*16+j]) != math.Float32bits(src.data[p*ld+j]) {
							t.Fatalf("%s k=%d ld=%d: [%d,%d] not copied", v.Name, k, ld, p, j)
						}
					}
				}
			}
		}
	}
}

// TestGemvRows4Kernels: the four-row GEMV kernel for every n from 0 past
// two 32-column blocks plus tails, both modes, strided rows, guards
// around y.
func TestGemvRows4Kernels(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, v := range GemmVariants() {
		for n := 0; n <= 2*32+8+7; n++ {
			for _, acc := range []bool{false, true} {
				ldb := n + r.IntN(5)
				x := []float32{gemmRand(r), gemmRand(r), gemmRand(r), gemmRand(r)}
				b := newGemmOperand(4, max(n, 1), max(ldb, 1), r.IntN(8), func(i, j int) float32 { return gemmRand(r) })
				mk := func(off int) *gemmOperand {
					return newGemmOperand(1, max(n, 1), max(n, 1), off, func(i, j int) float32 {
						if acc {
							return float32(j%7) - 3
						}
						return float32(math.NaN()) // overwrite mode must not read y
					})
				}
				y, twin := mk(1+r.IntN(7)), mk(0)
				snap := y.snapshot()
				flags := uint(0)
				if acc {
					flags = gemmAccumulate
				}
				v.gemvRows4(n, &x[0], &b.data[0], ldb, &y.data[0], flags)
				gemmGo.gemvRows4(n, &x[0], &b.data[0], ldb, &twin.data[0], flags)
				y.checkOutside(t, snap, 1, n, max(n, 1))
				for j := range n {
					var s, g float64
					if acc {
						s = float64(j%7) - 3
						g = math.Abs(s)
					}
					for p := range 4 {
						e := float64(x[p]) * float64(b.data[p*ldb+j])
						s, g = s+e, g+math.Abs(e)
					}
					tol := gemmTol(4)*g + 1e-30
					if got := float64(y.data[j]); approx.Far(got, s, tol) || approx.Far(float64(twin.data[j]), s, tol) {
						t.Fatalf("%s n=%d acc=%v: y[%d] = %v (twin %v), want %v", v.Name, n, acc, j, got, twin.data[j], s)
					}
				}
			}
		}
	}
}

// TestGemmPackAKernels: each variant's A-panel packer interleaves its MR
// rows exactly (bits, NaN payloads included) and writes nothing outside
// the panel, for one to three groups of eight steps and strided rows.
func TestGemmPackAKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 25))
	twin12 := &GemmVariant{Name: "go (12 rows)", mr: 12, packA: gemmPackA12Go} // the AVX-512 variant's packer's twin
	for _, v := range append(GemmVariants(), twin12) {
		mr := v.mr
		for k8 := 1; k8 <= 3; k8++ {
			for _, lda := range []int{8 * k8, 8*k8 + 3, 64} {
				src := newGemmOperand(mr, 8*k8, lda, r.IntN(8), func(i, j int) float32 { return math.Float32frombits(r.Uint32()) })
				dst := newGemmOperand(1, 8*mr*k8, 8*mr*k8, r.IntN(8), func(i, j int) float32 { return 0 })
				snap, ssnap := dst.snapshot(), src.snapshot()
				v.packA(k8, &src.data[0], lda, &dst.data[0])
				dst.checkOutside(t, snap, 1, 8*mr*k8, 8*mr*k8)
				src.checkSame(t, ssnap, "src")
				for p := range 8 * k8 {
					for i := range mr {
						if math.Float32bits(dst.data[p*mr+i]) != math.Float32bits(src.data[i*lda+p]) {
							t.Fatalf("%s k8=%d lda=%d: step %d row %d not packed", v.Name, k8, lda, p, i)
						}
					}
				}
			}
		}
	}
}

// TestGemmPackB64Kernels: the four-strip packer against plain copies, bit
// for bit, with guards around the four panels' span.
func TestGemmPackB64Kernels(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 27))
	for _, v := range GemmVariants() {
		for k := 1; k <= 9; k++ {
			for _, ld := range []int{64, 65, 100} {
				ps := 16*k + r.IntN(3)*16
				src := newGemmOperand(k, 64, ld, r.IntN(8), func(i, j int) float32 { return math.Float32frombits(r.Uint32()) })
				dst := newGemmOperand(4, 16*k, ps, r.IntN(8), func(i, j int) float32 { return 0 })
				snap, ssnap := dst.snapshot(), src.snapshot()
				v.packB64(k, &src.data[0], ld, &dst.data[0], ps)
				dst.checkOutside(t, snap, 4, 16*k, ps)
				src.checkSame(t, ssnap, "src")
				for q := range 4 {
					for p := range k {
						for j := range 16 {
							if math.Float32bits(dst.data[q*ps+p*16+j]) != math.Float32bits(src.data[p*ld+16*q+j]) {
								t.Fatalf("%s k=%d ld=%d: panel %d [%d,%d] not copied", v.Name, k, ld, q, p, j)
							}
						}
					}
				}
			}
		}
	}
}
