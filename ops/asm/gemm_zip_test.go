package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// zipCase is one zip-stored product: config, segments, bias, batch.
type zipCase struct {
	cfg           GemmConfig
	width, extra  int // segment width; Stride = 2·width + extra
	batch         int
	bias, threads int // bias: 0 none, 1 set
}

func (c zipCase) String() string {
	return fmt.Sprintf("M=%d N=%d K=%d transA=%v acc=%v width=%d stride+%d batch=%d bias=%d threads=%d",
		c.cfg.M, c.cfg.N, c.cfg.K, c.cfg.TransA, c.cfg.Accumulate, c.width, c.extra, c.batch, c.bias, c.threads)
}

// runZipCase checks a zip run of variant v against the same variant's
// plain product into C, placed by the ZipStore formula by hand, bit for
// bit (the zip kernels promise the plain kernels' sums, then the old
// value, then the bias, added in that order), and that every element of
// Out that no pair reaches keeps its value.
func runZipCase(t *testing.T, v *GemmVariant, c zipCase, vals []float32) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(c.cfg.M*1000+c.cfg.N), uint64(c.cfg.K*7+c.width)))
	p := 0
	value := func() float32 { // vals in turn, else normal samples
		if vals == nil {
			return float32(r.NormFloat64())
		}
		p++
		return vals[p%len(vals)]
	}
	m, n, k, nb := c.cfg.M, c.cfg.N, c.cfg.K, c.batch
	ar, ac := c.cfg.storedA()
	a, b := make([]float32, nb*ar*ac), make([]float32, nb*k*n)
	for i := range a {
		a[i] = value()
	}
	for i := range b {
		b[i] = value()
	}
	z := &ZipStore{Width: c.width, Stride: 2*c.width + c.extra}
	span := z.zipOff(n-1) + 2
	// Pairs in reverse order, a gap of 3 between them: no pair is where
	// its index alone would put it.
	z.Pairs = make([]int, nb*m/2)
	for q := range z.Pairs {
		z.Pairs[q] = 5 + (len(z.Pairs)-1-q)*(span+3)
	}
	z.Out = make([]float32, 5+len(z.Pairs)*(span+3))
	for i := range z.Out {
		z.Out[i] = value()
	}
	if c.bias == 1 {
		z.Bias = make([]float32, nb*m/2)
		for i := range z.Bias {
			z.Bias[i] = value()
		}
	}
	old := append([]float32(nil), z.Out...)
	at := func(e, i, j int) int { return z.Pairs[e*m/2+i/2] + z.zipOff(j) + i%2 }

	// The plain product, C starting from Out's old values if accumulating.
	cc := make([]float32, nb*m*n)
	args := &GemmArgs{A: a, B: b, C: cc, Batch: nb}
	for e := range nb {
		args.OffA, args.OffB, args.OffC = append(args.OffA, e*ar*ac), append(args.OffB, e*k*n), append(args.OffC, e*m*n)
		for i := range m {
			for j := range n {
				cc[e*m*n+i*n+j] = old[at(e, i, j)]
			}
		}
	}
	plain, err := NewGemm(c.cfg, v, Par{})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Run(args); err != nil {
		t.Fatal(err)
	}
	g, err := NewGemm(c.cfg, v, gemmTestPar(c.threads))
	if err != nil {
		t.Fatal(err)
	}
	zargs := &GemmArgs{A: a, B: b, Batch: nb, OffA: args.OffA, OffB: args.OffB, Zip: z}
	if err := g.Run(zargs); err != nil {
		t.Fatalf("%s %v: %v", v.Name, c, err)
	}
	want := append([]float32(nil), old...)
	for e := range nb {
		for i := range m {
			for j := range n {
				x := cc[e*m*n+i*n+j]
				if z.Bias != nil {
					x += z.Bias[e*m/2+i/2]
				}
				want[at(e, i, j)] = x
			}
		}
	}
	for i := range want {
		if !bitsEq(z.Out[i], want[i]) {
			t.Fatalf("%s %v: Out[%d] = %v, want %v", v.Name, c, i, z.Out[i], want[i])
		}
	}
	// The plain product itself against float64 sums (a few elements, of
	// finite normal samples).
	checks := 8
	if vals != nil {
		checks = 0 // specials: the bit-for-bit comparison above is the check
	}
	for range checks {
		e, i, j := r.IntN(nb), r.IntN(m), r.IntN(n)
		var s float64
		for p := range k {
			ai := e*ar*ac + i*ac + p
			if c.cfg.TransA {
				ai = e*ar*ac + p*ac + i
			}
			av := a[ai]
			s += float64(av) * float64(b[e*k*n+p*n+j])
		}
		base := 0.0
		if c.cfg.Accumulate {
			base = float64(old[at(e, i, j)])
		}
		if got := float64(cc[e*m*n+i*n+j]); math.Abs(got-base-s) > 1e-4*float64(k+1) {
			t.Fatalf("%s %v: C[%d,%d,%d] = %v, want %v", v.Name, c, e, i, j, got, base+s)
		}
	}
}

// TestGemmZip runs zip-stored products on every variant: rows around the
// tiles (12 and 6) and their 4- and 8-row edges, columns around the
// 16-column panels and the 32-column pairs, segments that panels cross
// (widths not a multiple of 16) or not, depth past one 256-step block,
// batches, bias, accumulation, A transposed (as ConvTranspose runs it),
// one and three workers, every variant also with tiny cache blocks
// (several depth and row blocks: the accumulating and the later
// stores).
func TestGemmZip(t *testing.T) {
	var cases []zipCase
	for _, mnk := range [][3]int{{2, 16, 1}, {12, 32, 5}, {24, 64, 64}, {26, 48, 3}, {16, 32, 300}, {36, 100, 17}, {256, 96, 24}, {4, 17, 2}, {8, 32, 7}, {20, 64, 9}} {
		for _, width := range []int{16, 32, 8, 5, mnk[1]} {
			for _, v := range [][4]int{{1, 0, 0, 1}, {2, 1, 1, 3}, {1, 1, 0, 1}, {1, 0, 1, 3}} { // batch, bias, acc, threads
				cases = append(cases, zipCase{
					cfg:   GemmConfig{M: mnk[0], N: mnk[1], K: mnk[2], TransA: v[1] == 1, Alpha: 1, Accumulate: v[2] == 1},
					width: width, extra: width % 3 * 4, batch: v[0], bias: v[1], threads: v[3]})
			}
		}
	}
	for _, v := range gemmTestVariants() {
		for _, c := range cases {
			runZipCase(t, v, c, nil)
		}
	}
}

// TestGemmZipErrors checks that zip runs the store cannot take, or whose
// outputs would leave Out, are refused.
func TestGemmZipErrors(t *testing.T) {
	a, b := make([]float32, 4*3), make([]float32, 3*8)
	ok := func() *ZipStore {
		return &ZipStore{Out: make([]float32, 64), Pairs: []int{0, 32}, Width: 8, Stride: 16}
	}
	for _, c := range []struct {
		name string
		cfg  GemmConfig
		edit func(*ZipStore, *GemmArgs)
	}{
		{"odd M", GemmConfig{M: 3, N: 8, K: 3, Alpha: 1}, nil},
		{"alpha", GemmConfig{M: 4, N: 8, K: 3, Alpha: 2}, nil},
		{"width", GemmConfig{M: 4, N: 8, K: 3, Alpha: 1}, func(z *ZipStore, _ *GemmArgs) { z.Width = 0 }},
		{"stride", GemmConfig{M: 4, N: 8, K: 3, Alpha: 1}, func(z *ZipStore, _ *GemmArgs) { z.Stride = 15 }},
		{"pairs", GemmConfig{M: 4, N: 8, K: 3, Alpha: 1}, func(z *ZipStore, _ *GemmArgs) { z.Pairs = z.Pairs[:1] }},
		{"past Out", GemmConfig{M: 4, N: 8, K: 3, Alpha: 1}, func(z *ZipStore, _ *GemmArgs) { z.Pairs[1] = 49 }},
		{"negative", GemmConfig{M: 4, N: 8, K: 3, Alpha: 1}, func(z *ZipStore, _ *GemmArgs) { z.Pairs[0] = -1 }},
		{"bias", GemmConfig{M: 4, N: 8, K: 3, Alpha: 1}, func(z *ZipStore, _ *GemmArgs) { z.Bias = []float32{1} }},
		{"epilogue", GemmConfig{M: 4, N: 8, K: 3, Alpha: 1}, func(_ *ZipStore, g *GemmArgs) { g.Epilogue = &Epilogue{} }},
		{"overlap", GemmConfig{M: 4, N: 8, K: 3, Alpha: 1}, func(z *ZipStore, g *GemmArgs) { g.B = z.Out[:24] }},
	} {
		g, err := NewGemm(c.cfg, nil, Par{})
		if err != nil {
			t.Fatal(err)
		}
		z := ok()
		args := &GemmArgs{A: a, B: b, Zip: z}
		if c.edit != nil {
			c.edit(z, args)
		}
		if err := g.Run(args); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
