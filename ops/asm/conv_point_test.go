package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// pointCases are 1×1 convolutions the pointwise path takes: every last
// panel height (M mod 12 of 0 to 11, one channel to a hundred), planes of
// 32 to 784 segments (odd counts: the last tile's segment twice) and
// planes that end mid-segment, depth from two channels to 144 (blocks of
// one tile), two images.
var pointCases = []tgeom{
	{N: 1, C: 2, H: 16, W: 32, M: 1, KH: 1, KW: 1},
	{N: 1, C: 3, H: 23, W: 23, M: 14, KH: 1, KW: 1}, // 529 positions: 33 segments and one ending at 529
	{N: 2, C: 9, H: 19, W: 28, M: 8, KH: 1, KW: 1},  // 532: 33 and one
	{N: 1, C: 3, H: 16, W: 33, M: 5, KH: 1, KW: 1},  // 528: 33, an odd count
	{N: 2, C: 7, H: 17, W: 31, M: 12, KH: 1, KW: 1}, // 527: 32 and one, an odd count of tiles
	{N: 1, C: 16, H: 20, W: 32, M: 13, KH: 1, KW: 1},
	{N: 1, C: 32, H: 28, W: 28, M: 16, KH: 1, KW: 1},
	{N: 2, C: 24, H: 24, W: 25, M: 22, KH: 1, KW: 1},
	{N: 1, C: 144, H: 18, W: 32, M: 36, KH: 1, KW: 1},
	{N: 1, C: 5, H: 112, W: 112, M: 3, KH: 1, KW: 1},
	{N: 1, C: 96, H: 24, W: 24, M: 100, KH: 1, KW: 1},
}

// TestConvPointwise checks the pointwise path against the float64
// definition (checkPhasePaths).
func TestConvPointwise(t *testing.T) { checkPhasePaths(t, pointCases, false) }

// stridedCases are convolutions the strided path takes: stems (3×3 at
// stride 2), 4×4 and 5×5 at stride 2, stride-1 kernels Winograd does not
// take (5×5, dilated 3×3), dilation at stride 2, strides that differ,
// padding on one side only, output rows that end mid-segment (113, 31)
// or are whole segments, depth 27 to 75, two images; and on the phase
// grid, rows of 28 (3×3 and 5×5), 40, 10 and 14 (a plane below
// pointMinPositions with small weights).
var stridedCases = []tgeom{
	{N: 1, C: 3, H: 64, W: 64, M: 32, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1},
	{N: 1, C: 2, H: 40, W: 64, M: 16, KH: 4, KW: 4, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1},
	{N: 2, C: 2, H: 66, W: 66, M: 24, KH: 5, KW: 5, SH: 2, SW: 2, PT: 1, PL: 2},
	{N: 1, C: 2, H: 5, W: 113, M: 13, KH: 5, KW: 5, PT: 2, PL: 2, PB: 2, PR: 2}, // rows of 113
	{N: 1, C: 5, H: 22, W: 48, M: 8, KH: 3, KW: 3, DH: 2, DW: 2, PT: 2, PL: 2, PB: 2, PR: 2},
	{N: 1, C: 6, H: 45, W: 63, M: 7, KH: 3, KW: 3, SH: 2, SW: 2, DH: 2, DW: 2, PT: 2, PL: 2, PB: 2, PR: 2},
	{N: 1, C: 3, H: 33, W: 64, M: 12, KH: 3, KW: 3, SH: 1, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1},
	{N: 1, C: 7, H: 35, W: 63, M: 20, KH: 3, KW: 3, SH: 2, SW: 2, PB: 1, PR: 1}, // TF "same", rows of 31
	{N: 2, C: 4, H: 36, W: 64, M: 14, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1},
	{N: 1, C: 5, H: 56, W: 56, M: 13, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1},  // grid: rows of 28
	{N: 1, C: 3, H: 112, W: 56, M: 16, KH: 5, KW: 5, SH: 2, SW: 2, PT: 2, PL: 2, PB: 2, PR: 2}, // grid, 5×5: rows of 28
	{N: 1, C: 4, H: 64, W: 80, M: 9, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1},   // grid: rows of 40
	{N: 2, C: 3, H: 128, W: 20, M: 6, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1},  // grid: rows of 10
	{N: 1, C: 4, H: 40, W: 30, M: 4, KH: 3, KW: 3, SH: 2, SW: 2},                               // grid: 19 rows of 14, small weights
}

// TestConvStrided checks the strided path against the float64
// definition (checkPhasePaths).
func TestConvStrided(t *testing.T) { checkPhasePaths(t, stridedCases, true) }

// checkPhasePaths runs cases on every variant with a vector phase
// product, and on the pure-Go variant given the Go twin of the phase
// kernel (so the paths' own logic is tested on every machine), with and
// without bias, with the epilogue (activation, residual, post-residual
// activation) and NaN, ±Inf in the input and weights; serially and on
// three workers, whose bits must agree; the output's guards untouched,
// the inputs unchanged. Every case must take the phase-product path,
// strided or not as strided says; variants without a phase product
// must decline it.
func checkPhasePaths(t *testing.T, cases []tgeom, strided bool) {
	convKernelsGo.phase = convPhaseGo
	defer func() { convKernelsGo.phase = nil }()
	for _, pair := range convPairs() {
		k, gv := rowVariantNamed(pair[0]), GemmVariantNamed(pair[1])
		if convKernelsFor(gv.Feature).phase == nil {
			c, err := NewConv2D(cases[0].normalised(), true, k, gv, Par{})
			if err != nil || c.Pointwise() {
				t.Errorf("%s, with no phase product, took a phase-product path (%v)", gv.Name, err)
			}
			continue
		}
		for i, tg := range cases {
			g := tg.normalised()
			for mode := range 4 {
				bias, epi := mode&1 != 0, mode&2 != 0
				t.Run(fmt.Sprintf("%s/%d/mode=%d", gv.Name, i, mode), func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(i), uint64(mode)))
					x, w, b := convOperands(r, g, bias)
					if mode == 3 {
						x[r.IntN(len(x))] = float32(math.NaN())
						x[r.IntN(len(x))] = float32(math.Inf(1))
						w[r.IntN(len(w))] = float32(math.Inf(-1))
					}
					ny := g.N * g.M * g.OH * g.OW
					var res []float32
					if epi {
						res = randFloats(r, ny)
					}
					ins := [][]float32{slices.Clone(x), slices.Clone(w), slices.Clone(b), slices.Clone(res)}
					var first []float32
					for _, threads := range []int{1, 3} {
						c, err := NewConv2D(g, bias, k, gv, goPar(threads))
						if err != nil {
							t.Fatal(err)
						}
						if !c.Pointwise() || c.Strided() != strided {
							t.Fatalf("%+v on %s: phase-product path %v, strided %v", g, gv.Name, c.Pointwise(), c.Strided())
						}
						out := newGuarded(ny, 1)
						args := &ConvArgs{X: x, W: w, B: b, Y: out.Data, Residual: res}
						if epi {
							args.Act, args.PostAct = ActRelu, ActTanh
						}
						for range 2 { // a second run must not depend on the first
							if err := c.RunArgs(args); err != nil {
								t.Fatal(err)
							}
						}
						out.check(t, "phase-product conv")
						if first == nil {
							first = out.Data
						} else if !slices.EqualFunc(out.Data, first, dwSameBits) {
							t.Fatalf("%d threads differ from one", threads)
						}
					}
					for j, s := range [][]float32{x, w, b, res} {
						if !slices.EqualFunc(s, ins[j], dwSameBits) {
							t.Fatalf("input %d changed", j)
						}
					}
					want, mag := convRef(g, x, w, b)
					for j, got := range first {
						wv, m := want[j], mag[j]
						if epi {
							wv = math.Tanh(max(wv, 0) + float64(res[j]))
							m += math.Abs(float64(res[j]))
						}
						if approx.Far(float64(got), wv, 1e-5*m+1e-30) {
							t.Fatalf("%+v: element %d = %v, want %v", g, j, got, wv)
						}
					}
				})
			}
		}
	}
}

// TestConvPointwiseDeclines: convolutions the path does not fit take the
// GEMM path (and still compute right: checkConv), and the path's choice
// does not depend on the workers.
func TestConvPointwiseDeclines(t *testing.T) {
	for i, tg := range []tgeom{
		{N: 1, C: 64, H: 14, W: 14, M: 64, KH: 1, KW: 1},                              // a small plane
		{N: 1, C: 300, H: 24, W: 24, M: 64, KH: 1, KW: 1},                             // deeper than half the plane
		{N: 1, C: 4, H: 8, W: 8, M: 4, KH: 1, KW: 1, SH: 2, SW: 2},                    // stride
		{N: 1, C: 4, H: 8, W: 8, M: 4, KH: 1, KW: 1, PT: 1, PL: 1, PB: 1, PR: 1},      // padding
		{N: 1, C: 4, H: 8, W: 8, M: 4, KH: 1, KW: 1, Groups: 2},                       // groups
		{N: 1, C: 4, H: 8, W: 8, M: 4, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1},      // 3×3 (Winograd's)
		{N: 1, C: 32, H: 16, W: 40, M: 128, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1}, // 160 positions, 144 KiB of weights
		{N: 1, C: 4, H: 48, W: 48, M: 4, KH: 3, KW: 3, SH: 3, SW: 3},                  // stride 3
		{N: 1, C: 40, H: 48, W: 48, M: 4, KH: 3, KW: 3, SH: 2, SW: 2},                 // depth 360
		// Rows of 17: 32 computed on rows, 20 a row on the grid.
		{N: 1, C: 3, H: 64, W: 34, M: 4, KH: 7, KW: 7, SH: 2, SW: 2, PT: 3, PL: 3, PB: 3, PR: 3},
		{N: 1, C: 16, H: 48, W: 48, M: 4, KH: 1, KW: 1, SH: 2, SW: 2}, // 1×1 at stride 2
	} {
		g := tg.normalised()
		c, err := NewConv2D(g, true, nil, nil, goPar(2))
		if err != nil {
			t.Fatal(err)
		}
		if c.Pointwise() {
			t.Errorf("case %d %+v took the pointwise path", i, g)
		}
		checkConv(t, BestRows(), BestGemm(), goPar(2), g, true, rand.New(rand.NewPCG(uint64(i), 5)))
	}
	g := pointCases[6].normalised()
	for _, threads := range []int{1, 2, 5} {
		c, err := NewConv2D(g, true, nil, nil, goPar(threads))
		if err != nil {
			t.Fatal(err)
		}
		if c.Pointwise() != HasPhaseProduct() {
			t.Errorf("%d threads: pointwise %v, phase product %v", threads, c.Pointwise(), HasPhaseProduct())
		}
	}
}

// TestConvPointwiseAgainstGemm: the pointwise path and the GEMM path
// (convPointOn off) agree to rounding on MobileNetV2's 1×1 shapes, with
// ReLU6's clamp as the activation.
func TestConvPointwiseAgainstGemm(t *testing.T) {
	if !HasPhaseProduct() {
		t.Skip("no vector phase product on this CPU")
	}
	for _, tg := range []tgeom{
		{N: 1, C: 32, H: 112, W: 112, M: 16, KH: 1, KW: 1},
		{N: 1, C: 96, H: 56, W: 56, M: 24, KH: 1, KW: 1},
		{N: 1, C: 144, H: 28, W: 28, M: 32, KH: 1, KW: 1},
	} {
		g := tg.normalised()
		r := rand.New(rand.NewPCG(uint64(g.C), 9))
		x, w, b := convOperands(r, g, true)
		var outs [2][]float32
		for i, on := range []bool{true, false} {
			convPointOn = on
			c, err := NewConv2D(g, true, nil, nil, goPar(2))
			convPointOn = true
			if err != nil {
				t.Fatal(err)
			}
			if c.Pointwise() != on {
				t.Fatalf("%+v: pointwise %v with the path on = %v", g, c.Pointwise(), on)
			}
			outs[i] = make([]float32, g.N*g.M*g.OH*g.OW)
			clamp := func(seg []float32) {
				for j, v := range seg {
					seg[j] = min(max(v, 0), 6)
				}
			}
			if err := c.RunArgs(&ConvArgs{X: x, W: w, B: b, Y: outs[i], ActFunc: clamp}); err != nil {
				t.Fatal(err)
			}
		}
		for j := range outs[0] {
			if approx.Far(float64(outs[0][j]), float64(outs[1][j]), 1e-5*(1+math.Abs(float64(outs[1][j])))) {
				t.Fatalf("%+v: element %d: pointwise %v, GEMM %v", g, j, outs[0][j], outs[1][j])
			}
		}
	}
}

// TestConvPointwiseNoAllocs: a run with packed weights allocates
// nothing, on either phase-product path (the strided one's phase copy
// comes from the free list).
func TestConvPointwiseNoAllocs(t *testing.T) {
	for _, tg := range []tgeom{pointCases[5], stridedCases[2]} {
		g := tg.normalised()
		c, err := NewConv2D(g, true, nil, nil, Par{})
		if err != nil {
			t.Fatal(err)
		}
		if n := convRunAllocs(t, c, g); n != 0 {
			t.Errorf("%+v: %v allocations a run", g, n)
		}
	}
}

// TestPointTiles: the tiles cover a plane's positions in order, every
// position in exactly one segment but where the plane ends mid-segment
// (then the last segment, ending at the plane's end, overlaps only the
// one it shares its tile with), each segment inside the plane.
func TestPointTiles(t *testing.T) {
	for p := 16; p <= 200; p++ {
		tiles := pointTiles(p)
		covered := make([]int, p)
		prev := -1
		for i, tl := range tiles {
			for u, s := range tl {
				if s < 0 || s+16 > p {
					t.Fatalf("p %d: tile %d segment at %d", p, i, s)
				}
				if s < prev && !(u == 1 && i == len(tiles)-1) {
					t.Fatalf("p %d: tile %d segment at %d after %d", p, i, s, prev)
				}
				if u == 1 && s == tl[0] {
					continue // a lone segment, computed twice
				}
				for j := s; j < s+16; j++ {
					covered[j]++
				}
				prev = s
			}
		}
		for j, n := range covered {
			overlap := p%16 != 0 && j >= p-16 && j < (p/16)*16
			if n != 1 && !(overlap && n == 2) {
				t.Fatalf("p %d: position %d in %d segments (tiles %v)", p, j, n, tiles)
			}
		}
	}
}

// TestConvStridedRandom runs random convolutions the strided path takes
// (channels, kernel, strides, dilations and each side's padding drawn,
// those it declines skipped) on the best variant against the float64
// definition: every tap's read of the phase copy, up to the last row's
// last segment, must land on the padded input's cell (run panics where a
// read leaves the copy).
func TestConvStridedRandom(t *testing.T) {
	if !HasPhaseProduct() {
		t.Skip("no vector phase product on this CPU")
	}
	r := rand.New(rand.NewPCG(41, 42))
	taken := 0
	for trial := 0; trial < 400 && taken < 120; trial++ {
		g := tgeom{
			N: 1 + r.IntN(2), C: 2 + r.IntN(5), H: 8 + r.IntN(60), W: 16 + r.IntN(80), M: 1 + r.IntN(30),
			KH: 1 + r.IntN(5), KW: 1 + r.IntN(5), SH: 1 + r.IntN(2), SW: 1 + r.IntN(2),
			DH: 1 + r.IntN(2), DW: 1 + r.IntN(2), PT: r.IntN(4), PL: r.IntN(4), PB: r.IntN(4), PR: r.IntN(4),
		}.normalised()
		if g.OH == 0 || g.OW == 0 {
			continue
		}
		par := goPar(1 + r.IntN(3))
		c, err := NewConv2D(g, true, nil, nil, par)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Strided() {
			continue
		}
		taken++
		checkConv(t, BestRows(), BestGemm(), par, g, true, r)
	}
	if taken < 30 {
		t.Errorf("only %d random convolutions took the strided path", taken)
	}
}

// TestRowTiles: the tiles of a block of output rows cover every
// position of each row once, but a row's overlapping last segment (its
// overlap twice, in the tile of the segment it overlaps) and one lone
// segment at the block's end (computed twice in its own tile); segments
// lie inside their rows and pair across rows where a row's whole
// segments are odd in number.
func TestRowTiles(t *testing.T) {
	for w := 16; w <= 130; w++ {
		for rows := 1; rows <= 4; rows++ {
			tiles := rowTiles(w, rows)
			covered := make([]int, rows*w)
			lone := 0
			for i, tl := range tiles {
				for u, sg := range tl {
					r, s := sg[0], sg[1]
					if r < 0 || r >= rows || s < 0 || s+16 > w {
						t.Fatalf("w %d rows %d: tile %d segment %v outside", w, rows, i, sg)
					}
					if u == 1 && sg == tl[0] {
						lone++
						continue
					}
					for j := s; j < s+16; j++ {
						covered[r*w+j]++
					}
				}
				if w%16 == 0 {
					continue
				}
				// A row's overlapping last segment and the one it overlaps: one tile.
				for u, sg := range tl {
					if sg[1] == w-16 && tl[1-u] != [2]int{sg[0], (w/16 - 1) * 16} {
						t.Fatalf("w %d rows %d: tile %d holds the overlapping segment %v without the one it overlaps", w, rows, i, sg)
					}
				}
			}
			if last := tiles[len(tiles)-1]; lone > 1 || lone == 1 && last[0] != last[1] {
				t.Fatalf("w %d rows %d: %d lone segments (tiles %v)", w, rows, lone, tiles)
			}
			for j, n := range covered {
				c := j % w
				overlap := w%16 != 0 && c >= w-16 && c < w/16*16
				if n != 1 && !(overlap && n == 2) {
					t.Fatalf("w %d rows %d: position %d in %d segments (tiles %v)", w, rows, j, n, tiles)
				}
			}
			segs, whole := len(rowSegments(w)), w/16
			want := (rows*whole + 1) / 2
			if w%16 != 0 {
				want = (rows*(whole-1)+1)/2 + rows // the overlapping pairs, one tile a row
			}
			if len(tiles) != want {
				t.Errorf("w %d (%d segments) rows %d: %d tiles, want %d", w, segs, rows, len(tiles), want)
			}
		}
	}
}

// TestConvStridedGrid: the strided cases whose rows end mid-segment take
// the phase grid where it wastes less than segments ending at each row's
// end (rows of 28, 40, 10 and 14), and keep those where they waste little
// (113, 31); gridRows picks the fewest rows that waste at most 5%.
func TestConvStridedGrid(t *testing.T) {
	if !HasPhaseProduct() {
		t.Skip("no vector phase product on this CPU")
	}
	for i, tg := range stridedCases {
		g := tg.normalised()
		c, err := NewConv2D(g, true, nil, nil, Par{})
		if err != nil {
			t.Fatal(err)
		}
		wantGrid := g.OW == 28 || g.OW == 40 || g.OW == 10 || g.OW == 14
		if got := c.Strided() && c.point.gridRows > 0; got != wantGrid {
			t.Errorf("case %d %+v: on the grid %v, want %v", i, g, got, wantGrid)
		}
	}
	for _, c := range []struct {
		oh, ow, wq, r0, rows int
	}{
		{28, 28, 29, 1, 6},  // 174 cells in 176: 4.5%
		{32, 40, 41, 1, 5},  // 205 in 208: 3.8%
		{28, 28, 29, 7, 7},  // 203 in 208: 6.1%, but a quarter of the rows
		{64, 10, 11, 1, 16}, // never within 5%: the least waste, 176 for 160
	} {
		rows, waste := gridRows(c.oh, c.ow, c.wq, c.r0)
		if rows != c.rows {
			t.Errorf("gridRows(%d, %d, %d, %d) = %d rows (waste %.3f), want %d", c.oh, c.ow, c.wq, c.r0, rows, waste, c.rows)
		}
	}
}
