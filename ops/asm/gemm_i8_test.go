package asm

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// refU8S8 is the int8 product as the plain triple loop, independent of
// any packing: C[i][j] = Σ_p A[i][p]·B[p][j] in int32 with Go's
// wrapping arithmetic (B stored K×N, or N×K with transB).
func refU8S8(a []uint8, b []int8, m, n, k, lda, ldb int, transB bool) []int32 {
	c := make([]int32, m*n)
	for i := range m {
		for j := range n {
			var s int32
			for p := range k {
				var bv int8
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += int32(a[i*lda+p]) * int32(bv)
			}
			c[i*n+j] = s
		}
	}
	return c
}

// i8Case is one product: sizes, strides, threads and how its values are
// drawn.
type i8Case struct {
	m, n, k   int
	lda, ldc  int // extra elements past each row
	ldb       int
	transB    bool
	threads   int
	aOf       func(r *rand.Rand) uint8
	bOf       func(r *rand.Rand) int8
	wantExact bool // also check against the int64 sum (no wraparound)
}

func randU8(r *rand.Rand) uint8 { return uint8(r.Uint32()) }
func randS8(r *rand.Rand) int8  { return int8(r.Uint32()) }

// runI8Case runs c on variant v and compares C and the row sums with
// the references, bit for bit.
func runI8Case(t *testing.T, v *GemmU8S8Variant, c i8Case, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	lda, ldc := c.k+c.lda, c.n+c.ldc
	ldb := c.n + c.ldb
	brows := c.k
	if c.transB {
		ldb, brows = c.k+c.ldb, c.n
	}
	a := make([]uint8, max(0, (c.m-1)*lda+c.k))
	b := make([]int8, max(0, (brows-1)*ldb+ldb))
	for i := range a {
		a[i] = c.aOf(r)
	}
	for i := range b {
		b[i] = c.bOf(r)
	}
	var pb PackedU8S8
	if err := PackU8S8(&pb, b, c.k, c.n, max(ldb, 1), c.transB); err != nil {
		t.Fatal(err)
	}
	par := Par{}
	if c.threads > 1 {
		par = gemmTestPar(c.threads)
	}
	g, err := NewGemmU8S8(GemmU8S8Config{M: c.m, N: c.n, K: c.k, LDA: max(lda, 1), LDC: max(ldc, 1)}, v, par)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int32, max(0, (c.m-1)*ldc+c.n)+3) // 3 canaries past the end
	for i := range out {
		out[i] = -0x5a5a5a5a
	}
	rows := make([]int32, c.m)
	if err := g.Run(&GemmU8S8Args{A: a, B: &pb, C: out[:len(out)-3], RowSums: rows}); err != nil {
		t.Fatal(err)
	}
	want := refU8S8(a, b, c.m, c.n, c.k, max(lda, 1), max(ldb, 1), c.transB)
	got := make([]int32, c.m*c.n)
	for i := range c.m {
		copy(got[i*c.n:(i+1)*c.n], out[i*ldc:i*ldc+c.n])
		for j := c.n; j < ldc && i*ldc+j < len(out)-3; j++ {
			if out[i*ldc+j] != -0x5a5a5a5a {
				t.Fatalf("%s: wrote C[%d] past row %d's end", v.Name, i*ldc+j, i)
			}
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%s %+v: C differs from the reference (-want +got):\n%s", v.Name, c, d)
	}
	for _, x := range out[len(out)-3:] {
		if x != -0x5a5a5a5a {
			t.Fatalf("%s: wrote past the end of C", v.Name)
		}
	}
	wantRows := make([]int32, c.m)
	for i := range c.m {
		for p := range c.k {
			wantRows[i] += int32(a[i*lda+p])
		}
	}
	if d := cmp.Diff(wantRows, rows); d != "" {
		t.Fatalf("%s: row sums (-want +got):\n%s", v.Name, d)
	}
	if c.wantExact {
		exact := make([]int32, c.m*c.n)
		for i := range c.m {
			for j := range c.n {
				var s int64
				for p := range c.k {
					var bv int8
					if c.transB {
						bv = b[j*ldb+p]
					} else {
						bv = b[p*ldb+j]
					}
					s += int64(a[i*lda+p]) * int64(bv)
				}
				if s != int64(int32(s)) {
					t.Fatalf("case %+v leaves int32's range (%d): not an exactness check", c, s)
				}
				exact[i*c.n+j] = int32(s)
			}
		}
		if d := cmp.Diff(exact, got); d != "" {
			t.Fatalf("%s: C differs from the exact sums (-want +got):\n%s", v.Name, d)
		}
	}
}

// TestGemmU8S8Shapes runs every variant over odd sizes and tails of M
// (tile heights 3, 4, 6, 12), N (panels of 16) and K (quads, the padding
// to 16, depth blocks of 1024), strides past the row, B transposed, and
// one or three threads.
func TestGemmU8S8Shapes(t *testing.T) {
	defer func(p int) { parMinFlops = p }(parMinFlops)
	parMinFlops = 1 // threads split even the small products
	shapes := [][3]int{
		{1, 1, 1}, {1, 16, 16}, {1, 17, 5}, {1, 40, 1025}, {1, 300, 77},
		{2, 3, 4}, {3, 16, 17}, {4, 15, 3}, {5, 33, 15}, {6, 16, 64}, {7, 31, 65},
		{11, 47, 33}, {12, 16, 16}, {13, 17, 100}, {24, 48, 1024}, {25, 49, 1031},
		{37, 70, 2100}, {50, 1, 9}, {1, 7, 0}, {0, 5, 5}, {6, 0, 3},
	}
	if testing.Short() {
		shapes = shapes[:16]
	}
	for _, v := range GemmU8S8Variants() {
		for si, s := range shapes {
			c := i8Case{m: s[0], n: s[1], k: s[2], aOf: randU8, bOf: randS8, threads: 1 + 2*(si%2), transB: si%3 == 1}
			if si%4 == 3 {
				c.lda, c.ldc, c.ldb = 3, 5, 2
			}
			t.Run(fmt.Sprintf("%s/%dx%dx%d", v.Name, s[0], s[1], s[2]), func(t *testing.T) { runI8Case(t, v, c, uint64(si)) })
		}
	}
}

// TestGemmU8S8Extremes runs the products that break a saturating
// kernel: A at 255 against B at -128 and 127 (and alternating, so pairs
// of products mix signs), to the greatest depth whose sums stay in
// int32's range (65793 steps of 255·-128 = -2147450880) and past it,
// where every variant must wrap as the reference does.
func TestGemmU8S8Extremes(t *testing.T) {
	maxU8 := func(*rand.Rand) uint8 { return 255 }
	minS8 := func(*rand.Rand) int8 { return -128 }
	maxS8 := func(*rand.Rand) int8 { return 127 }
	edge := func(r *rand.Rand) int8 { return []int8{-128, 127, -127, 0}[r.IntN(4)] }
	edgeU8 := func(r *rand.Rand) uint8 { return []uint8{255, 254, 128, 127, 0}[r.IntN(5)] }
	cases := []i8Case{
		{m: 13, n: 17, k: 64, aOf: maxU8, bOf: minS8, wantExact: true},
		{m: 13, n: 17, k: 64, aOf: maxU8, bOf: maxS8, wantExact: true},
		{m: 13, n: 33, k: 130, aOf: edgeU8, bOf: edge, wantExact: true},
		{m: 3, n: 16, k: 65793, aOf: maxU8, bOf: minS8, wantExact: true},
		{m: 3, n: 16, k: 65793, aOf: maxU8, bOf: maxS8, wantExact: true},
		{m: 2, n: 17, k: 70001, aOf: maxU8, bOf: minS8}, // wraps
	}
	if testing.Short() {
		cases = cases[:3]
	}
	for _, v := range GemmU8S8Variants() {
		for ci, c := range cases {
			t.Run(fmt.Sprintf("%s/%d", v.Name, ci), func(t *testing.T) { runI8Case(t, v, c, uint64(ci)) })
		}
	}
}

// TestGemmU8S8ZeroPoints checks the zero-point identity the package
// documents, with the row and column sums Run and PackU8S8 give, against
// Σ (qa-za)(qb-zb) summed directly in int64.
func TestGemmU8S8ZeroPoints(t *testing.T) {
	const m, n, k = 9, 21, 70
	r := rand.New(rand.NewPCG(3, 4))
	a, b := make([]uint8, m*k), make([]int8, k*n)
	for i := range a {
		a[i] = randU8(r)
	}
	for i := range b {
		b[i] = randS8(r)
	}
	var pb PackedU8S8
	if err := PackU8S8(&pb, b, k, n, n, false); err != nil {
		t.Fatal(err)
	}
	for _, v := range GemmU8S8Variants() {
		g, err := NewGemmU8S8(GemmU8S8Config{M: m, N: n, K: k}, v, Par{})
		if err != nil {
			t.Fatal(err)
		}
		c, rows := make([]int32, m*n), make([]int32, m)
		if err := g.Run(&GemmU8S8Args{A: a, B: &pb, C: c, RowSums: rows}); err != nil {
			t.Fatal(err)
		}
		for _, zp := range [][2]int32{{0, 0}, {128, 0}, {7, -3}, {255, 127}, {0, -128}} {
			za, zb := zp[0], zp[1]
			got, want := make([]int64, m*n), make([]int64, m*n)
			for i := range m {
				for j := range n {
					got[i*n+j] = int64(c[i*n+j] - zb*rows[i] - za*pb.ColSums()[j] + k*za*zb)
					for p := range k {
						want[i*n+j] += (int64(a[i*k+p]) - int64(za)) * (int64(b[p*n+j]) - int64(zb))
					}
				}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s za=%d zb=%d (-direct +corrected):\n%s", v.Name, za, zb, d)
			}
		}
	}
}

// TestGemmU8S8Errors checks bad operands get errors, not panics.
func TestGemmU8S8Errors(t *testing.T) {
	var pb PackedU8S8
	if err := PackU8S8(&pb, make([]int8, 5), 2, 3, 3, false); err == nil {
		t.Error("PackU8S8 took a B too short")
	}
	if err := PackU8S8(&pb, make([]int8, 6), 2, 3, 2, false); err == nil {
		t.Error("PackU8S8 took ldb < N")
	}
	if _, err := NewGemmU8S8(GemmU8S8Config{M: 2, N: 3, K: 4, LDA: 3}, nil, Par{}); err == nil {
		t.Error("NewGemmU8S8 took LDA < K")
	}
	if _, err := NewGemmU8S8(GemmU8S8Config{M: -1, N: 3, K: 4}, nil, Par{}); err == nil {
		t.Error("NewGemmU8S8 took M < 0")
	}
	if err := PackU8S8(&pb, make([]int8, 12), 4, 3, 3, false); err != nil {
		t.Fatal(err)
	}
	g, err := NewGemmU8S8(GemmU8S8Config{M: 2, N: 3, K: 4}, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string]*GemmU8S8Args{
		"short A":    {A: make([]uint8, 7), B: &pb, C: make([]int32, 6)},
		"short C":    {A: make([]uint8, 8), B: &pb, C: make([]int32, 5)},
		"nil B":      {A: make([]uint8, 8), C: make([]int32, 6)},
		"short rows": {A: make([]uint8, 8), B: &pb, C: make([]int32, 6), RowSums: make([]int32, 1)},
	} {
		if err := g.Run(args); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	var other PackedU8S8
	if err := PackU8S8(&other, make([]int8, 15), 5, 3, 3, false); err != nil {
		t.Fatal(err)
	}
	if err := g.Run(&GemmU8S8Args{A: make([]uint8, 8), B: &other, C: make([]int32, 6)}); err == nil {
		t.Error("B packed for K=5 ran in a K=4 plan")
	}
}

// TestRowSumsU8 checks the word-at-a-time row sums against a plain loop
// at lengths around the 8-byte words and the 256-word folds.
func TestRowSumsU8(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{0, 1, 7, 8, 9, 2047, 2048, 2049, 4100} {
		a := make([]uint8, 2*k+3)
		for i := range a {
			a[i] = randU8(r)
		}
		a[0] = 255
		got, want := make([]int32, 2), make([]int32, 2)
		RowSumsU8(got, a, 2, k, k+3)
		for i := range 2 {
			for p := range k {
				want[i] += int32(a[i*(k+3)+p])
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("k=%d (-want +got):\n%s", k, d)
		}
	}
	all := make([]uint8, 4100)
	for i := range all {
		all[i] = 255
	}
	got := make([]int32, 1)
	RowSumsU8(got, all, 1, len(all), len(all))
	if got[0] != 255*4100 {
		t.Errorf("4100 bytes of 255 sum to %d, want %d", got[0], 255*4100)
	}
}

// TestGemmU8S8Finish checks the Finish hook sees every element of C
// exactly once, already final, serially and with three threads, and
// that a K=0 product still reports its (zeroed) C.
func TestGemmU8S8Finish(t *testing.T) {
	defer func(p int) { parMinFlops = p }(parMinFlops)
	parMinFlops = 1 // threads split even the small products
	for _, s := range [][3]int{{70, 100, 40}, {1, 50, 20}, {5, 7, 0}} {
		m, n, k := s[0], s[1], s[2]
		r := rand.New(rand.NewPCG(8, 9))
		a, b := make([]uint8, m*k), make([]int8, k*n)
		for i := range a {
			a[i] = randU8(r)
		}
		for i := range b {
			b[i] = randS8(r)
		}
		var pb PackedU8S8
		if err := PackU8S8(&pb, b, k, n, n, false); err != nil {
			t.Fatal(err)
		}
		want := refU8S8(a, b, m, n, k, max(k, 1), n, false)
		for _, v := range GemmU8S8Variants() {
			for _, threads := range []int{1, 3} {
				par := Par{}
				if threads > 1 {
					par = gemmTestPar(threads)
				}
				g, err := NewGemmU8S8(GemmU8S8Config{M: m, N: n, K: k}, v, par)
				if err != nil {
					t.Fatal(err)
				}
				c := make([]int32, m*n)
				seen := make([]int32, m*n) // C as each element's first Finish saw it, +1 per extra call
				calls := make([]int, m*n)
				var mu sync.Mutex
				err = g.Run(&GemmU8S8Args{A: a, B: &pb, C: c, Finish: func(m0, m1, n0, n1 int) {
					mu.Lock()
					defer mu.Unlock()
					for i := m0; i < m1; i++ {
						for j := n0; j < n1; j++ {
							calls[i*n+j]++
							seen[i*n+j] = c[i*n+j]
						}
					}
				}})
				if err != nil {
					t.Fatal(err)
				}
				for e, cnt := range calls {
					if cnt != 1 {
						t.Fatalf("%s t%d %v: C[%d] finished %d times", v.Name, threads, s, e, cnt)
					}
				}
				if d := cmp.Diff(want, seen); d != "" {
					t.Fatalf("%s t%d %v: C as Finish saw it (-want +got):\n%s", v.Name, threads, s, d)
				}
			}
		}
	}
}
