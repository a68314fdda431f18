package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// newDepthwise prepares a depthwise convolution (pooled when pool) of
// geometry g on variant v.
func newDepthwise(t testing.TB, g ConvGeom, bias, pool bool, v *depthwiseKernels, par Par) *Conv2D {
	t.Helper()
	return newDepthwisePath(t, g, bias, pool, v, par, dwAuto)
}

// newDepthwisePath is newDepthwise on path (dwAuto, dwPlane, dwChans).
func newDepthwisePath(t testing.TB, g ConvGeom, bias, pool bool, v *depthwiseKernels, par Par, path int) *Conv2D {
	t.Helper()
	c, err := newConv2D(g, bias, pool, nil, nil, par)
	if err != nil {
		t.Fatal(err)
	}
	if !c.depthwise {
		t.Fatalf("%+v did not take the depthwise path", g)
	}
	c.prepareDepthwisePath(par, v, path)
	if path != dwAuto && c.dw.ch.on != (path == dwChans) {
		t.Fatalf("%+v: asked for path %d, interleaved = %v", g, path, c.dw.ch.on)
	}
	return c
}

// dwPaths are the paths the tests force, and their names.
var dwPaths = []struct {
	name string
	path int
}{{"plane", dwPlane}, {"chan", dwChans}}

// dwClose reports whether got matches the float64 want to within tol of
// its magnitude mag, NaN-aware: a non-finite want needs the same
// non-finite value (any NaN for NaN).
func dwClose(got float32, want, mag, tol float64) bool {
	if math.IsNaN(want) || math.IsInf(want, 0) {
		return sameFloat(got, float32(want))
	}
	return math.Abs(float64(got)-want) <= tol*mag+1e-30
}

// dwSpecials sets a few elements of s to NaN and ±Inf.
func dwSpecials(r *rand.Rand, s []float32) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		s[r.IntN(len(s))] = float32(v)
	}
}

// TestDepthwiseTaps checks every variant's taps kernel (through run)
// against the float64 sum: one to three blocks, 1 to 49 taps at random
// offsets (the last reaching the end of x), with and without NaN and
// ±Inf in x and w, guards around y, x and w unchanged.
func TestDepthwiseTaps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 14))
	for _, v := range depthwiseVariants() {
		for blocks := 1; blocks <= 3; blocks++ {
			for _, taps := range []int{1, 2, 3, 9, 25, 49} {
				for trial := range 3 {
					t.Run(fmt.Sprintf("%s/%d/%d/%d", v.name, blocks, taps, trial), func(t *testing.T) {
						n := blocks * v.block
						x := randFloats(r, n+200)
						w := randFloats(r, taps)
						if trial == 2 {
							dwSpecials(r, x)
							dwSpecials(r, w)
						}
						off := make([]int, taps)
						for i := range off {
							off[i] = r.IntN(len(x) - n + 1)
						}
						off[taps-1] = len(x) - n
						xs, ws := slices.Clone(x), slices.Clone(w)
						bias := r.Float32()
						y := newGuarded(n, 1)
						tp := newDwTaps(off)
						v.run(y.Data, x, &tp, w, bias)
						y.check(t, "taps")
						if !slices.EqualFunc(x, xs, sameFloat) || !slices.EqualFunc(w, ws, sameFloat) {
							t.Fatal("an input changed")
						}
						for i, got := range y.Data {
							want, mag := float64(bias), math.Abs(float64(bias))
							for k, o := range off {
								p := float64(w[k]) * float64(x[o+i])
								want, mag = want+p, mag+math.Abs(p)
							}
							if !dwClose(got, want, mag, 1e-6) {
								t.Fatalf("y[%d] = %v, want %v", i, got, want)
							}
						}
					})
				}
			}
		}
	}
}

// TestDepthwiseSplitCopy checks every variant's split and copy kernels
// against their definitions: every row length from 1 to past two full
// vector steps (tails of every size, odd ones), one to three rows,
// strides wider than the rows; cells outside the mapping (and guards
// around the buffers) keep their values, the source is unchanged.
func TestDepthwiseSplitCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 9))
	const mark = -7.5 // what the destinations hold before
	for _, v := range depthwiseVariants() {
		for m := 1; m <= 70; m++ {
			for rows := 1; rows <= 3; rows++ {
				lds, ldd := m+r.IntN(3), (m+1)/2+r.IntN(3)
				src := randFloats(r, (rows-1)*lds+m)
				src0 := slices.Clone(src)
				size := (rows-1)*ldd + (m+1)/2
				e, o := newGuarded(size, 1), newGuarded(size, 3)
				fill(e.Data, mark)
				fill(o.Data, mark)
				v.splitRows(e.Data, o.Data, ldd, src, lds, rows, m)
				e.check(t, "split e")
				o.check(t, "split o")
				we, wo := make([]float32, size), make([]float32, size)
				fill(we, mark)
				fill(wo, mark)
				for i := range rows {
					for j := range m {
						if j%2 == 0 {
							we[i*ldd+j/2] = src[i*lds+j]
						} else {
							wo[i*ldd+j/2] = src[i*lds+j]
						}
					}
				}
				if !slices.Equal(e.Data, we) || !slices.Equal(o.Data, wo) {
					t.Fatalf("%s split m=%d rows=%d: got %v %v, want %v %v", v.name, m, rows, e.Data, o.Data, we, wo)
				}

				ldd = m + r.IntN(3)
				d := newGuarded((rows-1)*ldd+m, 2)
				fill(d.Data, mark)
				v.copyRows(d.Data, ldd, src, lds, rows, m, 0)
				d.check(t, "copy")
				want := make([]float32, len(d.Data))
				fill(want, mark)
				for i := range rows {
					copy(want[i*ldd:][:m], src[i*lds:][:m])
				}
				if !slices.Equal(d.Data, want) {
					t.Fatalf("%s copy m=%d rows=%d: got %v, want %v", v.name, m, rows, d.Data, want)
				}
				if !slices.Equal(src, src0) {
					t.Fatal("the source changed")
				}
			}
		}
	}
}

// depthwiseCases are depthwise geometries (one input channel per group):
// kernels 1×1 to 7×7, strides 1 to 3, dilations 1 and 2, asymmetric and
// large pads, planes from 1×1 to 112×112, two images, channel
// multipliers (M = 2C, M = 3C) and a single input channel.
var depthwiseCases = []tgeom{
	{N: 2, C: 3, H: 9, W: 11, M: 3, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 3},
	{N: 1, C: 4, H: 1, W: 1, M: 4, KH: 1, KW: 1, Groups: 4},
	{N: 1, C: 2, H: 1, W: 1, M: 4, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 2},
	{N: 2, C: 3, H: 7, W: 7, M: 6, KH: 5, KW: 5, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 3},
	{N: 1, C: 2, H: 14, W: 14, M: 2, KH: 5, KW: 5, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 2},
	{N: 1, C: 2, H: 16, W: 13, M: 2, KH: 7, KW: 7, PT: 3, PL: 3, PB: 3, PR: 3, Groups: 2},
	{N: 1, C: 3, H: 13, W: 12, M: 3, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 3},
	{N: 2, C: 2, H: 12, W: 17, M: 4, KH: 3, KW: 3, SH: 2, SW: 2, PB: 1, PR: 1, Groups: 2}, // asymmetric (TF "same")
	{N: 1, C: 2, H: 15, W: 16, M: 2, KH: 5, KW: 5, SH: 2, SW: 2, PT: 2, PL: 1, PB: 2, PR: 2, Groups: 2},
	{N: 1, C: 2, H: 17, W: 19, M: 2, KH: 3, KW: 5, SH: 3, SW: 3, PT: 1, PL: 2, Groups: 2}, // stride 3: the Go splits
	{N: 1, C: 2, H: 11, W: 14, M: 2, KH: 3, KW: 3, SH: 1, SW: 2, PL: 1, PR: 1, Groups: 2}, // strides differ
	{N: 1, C: 2, H: 14, W: 9, M: 2, KH: 3, KW: 3, SH: 2, SW: 1, PT: 1, PB: 1, Groups: 2},
	{N: 1, C: 2, H: 12, W: 12, M: 2, KH: 3, KW: 3, DH: 2, DW: 2, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 2},
	{N: 1, C: 2, H: 13, W: 12, M: 4, KH: 3, KW: 3, SH: 2, SW: 2, DH: 2, DW: 2, PT: 2, PL: 1, Groups: 2},
	{N: 1, C: 1, H: 20, W: 17, M: 5, KH: 5, KW: 5, PT: 2, PL: 2},                            // one input channel
	{N: 1, C: 2, H: 3, W: 2, M: 2, KH: 3, KW: 3, PT: 3, PL: 2, PB: 3, PR: 2, Groups: 2},     // mostly padding
	{N: 1, C: 2, H: 5, W: 40, M: 2, KH: 1, KW: 7, PL: 3, PR: 3, Groups: 2},                  // wide and flat
	{N: 1, C: 2, H: 112, W: 112, M: 2, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 2}, // several bands
	{N: 1, C: 2, H: 112, W: 112, M: 2, KH: 3, KW: 3, SH: 2, SW: 2, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 2},
	{N: 1, C: 2, H: 60, W: 70, M: 2, KH: 5, KW: 5, SH: 2, SW: 2, PT: 2, PL: 2, PB: 1, PR: 1, Groups: 2},
}

// checkDepthwise runs a depthwise convolution on variant v against
// convRef: bias or not, an activation and a residual or not (mode),
// twice (the second run must not depend on the first), with guards
// around y and every input checked unchanged. specials puts NaN and
// ±Inf into x and w.
func checkDepthwise(t *testing.T, v *depthwiseKernels, par Par, g ConvGeom, mode int, specials bool, r *rand.Rand) {
	t.Helper()
	checkDepthwisePath(t, v, par, g, mode, specials, r, dwAuto)
}

// checkDepthwisePath is checkDepthwise on path, returning the output.
func checkDepthwisePath(t *testing.T, v *depthwiseKernels, par Par, g ConvGeom, mode int, specials bool, r *rand.Rand, path int) []float32 {
	t.Helper()
	bias, epi := mode&1 != 0, mode&2 != 0
	x, w, b := convOperands(r, g, bias)
	if specials {
		dwSpecials(r, x)
		dwSpecials(r, w)
	}
	ny := g.N * g.M * g.OH * g.OW
	var res []float32
	act := ActNone
	if epi {
		res, act = randFloats(r, ny), ActRelu
	}
	ins := [][]float32{slices.Clone(x), slices.Clone(w), slices.Clone(b), slices.Clone(res)}
	c := newDepthwisePath(t, g, bias, false, v, par, path)
	out := newGuarded(ny, 1)
	for range 2 {
		if err := c.RunArgs(&ConvArgs{X: x, W: w, B: b, Y: out.Data, Act: act, Residual: res}); err != nil {
			t.Fatal(err)
		}
	}
	out.check(t, "depthwise")
	for i, s := range [][]float32{x, w, b, res} {
		if !slices.EqualFunc(s, ins[i], func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
			t.Fatalf("input %d changed", i)
		}
	}
	want, mag := convRef(g, x, w, b)
	for i, got := range out.Data {
		wv, m := want[i], mag[i]
		if epi {
			if wv < 0 {
				wv = 0
			}
			wv += float64(res[i])
			m += math.Abs(float64(res[i]))
		}
		if !dwClose(got, wv, m, 1e-5) {
			t.Fatalf("%s %+v mode %d path %d: element %d = %v, want %v", v.name, g, mode, path, i, got, wv)
		}
	}
	return out.Data
}

func TestConv2DDepthwise(t *testing.T) {
	for _, v := range depthwiseVariants() {
		for i, tg := range depthwiseCases {
			g := tg.normalised()
			for _, p := range dwPaths {
				for _, threads := range []int{1, 3} {
					t.Run(fmt.Sprintf("%s/%s/%d/t%d", v.name, p.name, i, threads), func(t *testing.T) {
						r := rand.New(rand.NewPCG(uint64(i), 21))
						for mode := range 4 {
							checkDepthwisePath(t, v, goPar(threads), g, mode, false, r, p.path)
						}
					})
				}
			}
		}
	}
}

func TestConv2DDepthwiseRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 23))
	for _, v := range depthwiseVariants() {
		for trial := range 150 {
			c := 1 + r.IntN(3)
			g := tgeom{
				N: 1 + r.IntN(2), C: c, H: 1 + r.IntN(24), W: 1 + r.IntN(40), M: c * (1 + r.IntN(2)),
				KH: 1 + r.IntN(7), KW: 1 + r.IntN(7), SH: 1 + r.IntN(3), SW: 1 + r.IntN(3),
				DH: 1 + r.IntN(2), DW: 1 + r.IntN(2), PT: r.IntN(4), PL: r.IntN(4), PB: r.IntN(4), PR: r.IntN(4), Groups: c,
			}.normalised()
			if g.OH == 0 || g.OW == 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", v.name, trial), func(t *testing.T) {
				checkDepthwisePath(t, v, goPar(1+r.IntN(3)), g, r.IntN(4), trial%5 == 0, r, dwPaths[trial%2].path)
			})
		}
	}
}

// TestConv2DDepthwiseSpecials: NaN and ±Inf in the input and weights
// propagate, and padding is a zero the weights multiply: an infinite
// weight on a tap that meets only padding makes the output NaN (0·Inf),
// as ONNX Runtime and PyTorch compute it.
func TestConv2DDepthwiseSpecials(t *testing.T) {
	g := tgeom{N: 1, C: 2, H: 4, W: 5, M: 2, KH: 3, KW: 3, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 2}.normalised()
	for _, v := range depthwiseVariants() {
		t.Run(v.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 1))
			x, w, _ := convOperands(r, g, false)
			w[0] = float32(math.Inf(1)) // channel 0, tap (0, 0): padding for output row 0 and column 0
			x[g.H*g.W+7] = float32(math.NaN())
			y := make([]float32, g.N*g.M*g.OH*g.OW)
			c := newDepthwise(t, g, false, false, v, Par{})
			if err := c.Run(y, x, w, nil); err != nil {
				t.Fatal(err)
			}
			want, mag := convRef(g, x, w, nil)
			for i, got := range y {
				if !dwClose(got, want[i], mag[i], 1e-5) {
					t.Fatalf("element %d = %v, want %v", i, got, want[i])
				}
			}
			if y[0] == y[0] || y[g.OW] == y[g.OW] || y[1] == y[1] {
				t.Errorf("an infinite weight meeting padding gave %v, %v, %v; want NaN", y[0], y[g.OW], y[1])
			}
		})
	}
}

// TestConv2DDepthwisePooled runs every variant's pooled depthwise
// convolution against its plain one followed by MaxPool2x2, to the bit.
func TestConv2DDepthwisePooled(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 4))
	for _, v := range depthwiseVariants() {
		for i, tg := range depthwiseCases {
			g := tg.normalised()
			if g.OH < 2 || g.OW < 2 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", v.name, i), func(t *testing.T) {
				x, w, b := convOperands(r, g, true)
				ph, pw := g.OH/2, g.OW/2
				pooled := newGuarded(g.N*g.M*ph*pw, 1)
				if err := newDepthwise(t, g, true, true, v, goPar(2)).RunArgs(&ConvArgs{X: x, W: w, B: b, Y: pooled.Data, Act: ActRelu}); err != nil {
					t.Fatal(err)
				}
				pooled.check(t, "pooled")
				full := make([]float32, g.N*g.M*g.OH*g.OW)
				if err := newDepthwise(t, g, true, false, v, Par{}).RunArgs(&ConvArgs{X: x, W: w, B: b, Y: full, Act: ActRelu}); err != nil {
					t.Fatal(err)
				}
				pg := ConvGeom{N: g.N, C: g.M, H: g.OH, W: g.OW, M: g.M, OH: ph, OW: pw, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1}
				p, err := NewMaxPool2x2(pg, nil, Par{})
				if err != nil || p == nil {
					t.Fatalf("NewMaxPool2x2: %v, %v", p, err)
				}
				two := make([]float32, len(pooled.Data))
				if err := p.Run(two, full); err != nil {
					t.Fatal(err)
				}
				for j, got := range pooled.Data {
					if math.Float32bits(got) != math.Float32bits(two[j]) {
						t.Fatalf("element %d = %v, conv then pool gives %v", j, got, two[j])
					}
				}
			})
		}
	}
}

// TestDepthwiseDispatch: the plain constructor runs the best variant, or
// the Go twins when given the Go row kernels.
func TestDepthwiseDispatch(t *testing.T) {
	g := depthwiseCases[0].normalised()
	c, err := NewConv2D(g, false, nil, nil, Par{})
	if err != nil {
		t.Fatal(err)
	}
	if c.dw.k != bestDepthwise() {
		t.Errorf("dispatched %s, best is %s", c.dw.k.name, bestDepthwise().name)
	}
	if c, err = NewConv2D(g, false, rowsGo, nil, Par{}); err != nil || c.dw.k != depthwiseGo {
		t.Errorf("the Go row kernels run depthwise on %v (%v)", c.dw.k.name, err)
	}
}

// TestDepthwiseChanKernels checks every variant's interleaved-path
// kernels against their definitions: the taps kernel (through runChan)
// against the float64 sum over one to three blocks of positions at
// random places, 1 to 25 taps, NaN and ±Inf; the interleaving (chanIn)
// and deinterleaving (chanOut) kernels to the bit over every count of
// positions from 1 to past two 16-position steps (and 49, 100), every
// number of lanes, unaligned rows and places; guards around every
// output, cells outside the mapping unchanged, inputs unchanged.
func TestDepthwiseChanKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 17))
	const mark = -7.5
	for _, v := range depthwiseVariants() {
		for blocks := 1; blocks <= 3; blocks++ {
			for _, taps := range []int{1, 2, 9, 25} {
				for trial := range 3 {
					n := 8 * blocks
					x := randFloats(r, 40*16+r.IntN(40))
					w := randFloats(r, 16*(taps+1))
					if trial == 2 {
						dwSpecials(r, x)
						dwSpecials(r, w)
					}
					pos, off := make([]int, n), make([]int, taps)
					for i := range off {
						off[i] = r.IntN(20 * 16)
					}
					for i := range pos {
						pos[i] = r.IntN(len(x) - 20*16 - 16)
					}
					off[taps-1] = len(x) - 16 - pos[0] // reaching the end of x
					pt, tp := newDwIdx(pos), newDwTaps(off)
					if pt.max+tp.reach+16 > len(x) {
						off[taps-1] = len(x) - 16 - pt.max
						tp = newDwTaps(off)
					}
					xs, ws := slices.Clone(x), slices.Clone(w)
					y := newGuarded(16*n, 1)
					v.runChan(y.Data, x, &pt, &tp, w)
					y.check(t, "chan taps")
					if !slices.EqualFunc(x, xs, sameFloat) || !slices.EqualFunc(w, ws, sameFloat) {
						t.Fatal("an input changed")
					}
					for p := range n {
						for l := range 16 {
							want, mag := float64(w[16*taps+l]), math.Abs(float64(w[16*taps+l]))
							for k, o := range off {
								q := float64(w[16*k+l]) * float64(x[pos[p]+o+l])
								want, mag = want+q, mag+math.Abs(q)
							}
							if got := y.Data[16*p+l]; !dwClose(got, want, mag, 1e-6) {
								t.Fatalf("%s blocks %d taps %d: y[%d][%d] = %v, want %v", v.name, blocks, taps, p, l, got, want)
							}
						}
					}
				}
			}
		}
		for _, n := range append(slices.Collect(func(yield func(int) bool) {
			for n := 1; n <= 40; n++ {
				yield(n)
			}
		}), 49, 100) {
			// chanIn: 16 rows at random places of src, n positions to
			// distinct vector places of dst with random gaps.
			src := randFloats(r, 16*(n+3)+5)
			src0 := slices.Clone(src)
			var roff [16]int
			for l := range roff {
				roff[l] = r.IntN(len(src) - n + 1)
			}
			dpos := make([]int, n)
			at := r.IntN(3)
			for _, p := range r.Perm(n) {
				dpos[p] = at
				at += 16 + r.IntN(5)
			}
			di := newDwIdx(dpos)
			d := newGuarded(at, 1)
			fill(d.Data, mark)
			v.chanInterleave(d.Data, &di, src, &roff)
			d.check(t, "chan in")
			want := make([]float32, at)
			fill(want, mark)
			for p, o := range dpos {
				for l := range 16 {
					want[o+l] = src[roff[l]+p]
				}
			}
			if !slices.EqualFunc(d.Data, want, sameFloat) || !slices.Equal(src, src0) {
				t.Fatalf("%s chan in n=%d: got %v, want %v", v.name, n, d.Data, want)
			}
			// chanOut: every lane count, rows ldd apart.
			for lanes := 1; lanes <= 16; lanes++ {
				s := randFloats(r, roundUp(n, 16)*16)
				s0 := slices.Clone(s)
				ldd := n + r.IntN(4)
				o := newGuarded((lanes-1)*ldd+n, 2)
				fill(o.Data, mark)
				v.chanDeinterleave(o.Data, ldd, s, n, lanes)
				o.check(t, "chan out")
				want := make([]float32, len(o.Data))
				fill(want, mark)
				for l := range lanes {
					for p := range n {
						want[l*ldd+p] = s[16*p+l]
					}
				}
				if !slices.Equal(o.Data, want) || !slices.Equal(s, s0) {
					t.Fatalf("%s chan out n=%d lanes=%d: got %v, want %v", v.name, n, lanes, o.Data, want)
				}
			}
		}
	}
}

// dwChanCases are geometries around the paths' crossover and the
// interleaved path's edges: channel counts 1, 8, 15, 16, 17, 24 and 33
// (partial groups of every kind), multipliers, planes from 1×1 to 28×28
// (positions under and over the 8- and 16-position steps), strides 1 and
// 2, dilation, asymmetric and large pads, two images.
var dwChanCases = func() []tgeom {
	var cs []tgeom
	for i, c := range []int{1, 8, 15, 16, 17, 24, 33} {
		for j, s := range []struct{ h, w, k, st, d, pad int }{
			{7, 7, 3, 1, 1, 1}, {7, 7, 5, 1, 1, 2}, {14, 14, 5, 1, 1, 2}, {14, 14, 3, 2, 1, 1},
			{1, 1, 3, 1, 1, 1}, {3, 4, 3, 1, 1, 2}, {5, 9, 5, 2, 1, 2}, {8, 8, 3, 1, 2, 2},
			{20, 20, 3, 1, 1, 1}, {28, 28, 5, 2, 1, 2}, {9, 6, 1, 1, 1, 0},
		} {
			if (i+j)%2 == 1 && s.h > 9 { // halve the larger planes' cases
				continue
			}
			m := c * (1 + (i+j)%2)
			cs = append(cs, tgeom{N: 1 + j%2, C: c, H: s.h, W: s.w, M: m, KH: s.k, KW: s.k, SH: s.st, SW: s.st,
				DH: s.d, DW: s.d, PT: s.pad, PL: s.pad - j%2, PB: s.pad, PR: s.pad + j%3, Groups: c})
		}
	}
	return cs
}()

// TestConv2DDepthwisePaths runs dwChanCases on both paths of every
// variant at one and three threads against convRef (the epilogue modes,
// NaN and ±Inf in one of them), and checks the bits: equal between the
// paths, between thread counts, and between the assembly variants
// (fused multiply-adds in the same order).
func TestConv2DDepthwisePaths(t *testing.T) {
	for i, tg := range dwChanCases {
		g := tg.normalised()
		if g.OH == 0 || g.OW == 0 {
			continue
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var asm []float32 // the first assembly variant's output
			for _, v := range depthwiseVariants() {
				var first []float32
				for _, p := range dwPaths {
					for _, threads := range []int{1, 3} {
						mode := i % 4
						specials := i%5 == 0
						r := rand.New(rand.NewPCG(uint64(i), 7)) // the same operands every run
						y := checkDepthwisePath(t, v, goPar(threads), g, mode, specials, r, p.path)
						if first == nil {
							first = y
						} else if !slices.EqualFunc(y, first, dwSameBits) {
							t.Fatalf("%s %+v: the %s path at %d threads differs from the plane path at one", v.name, g, p.name, threads)
						}
					}
				}
				if v == depthwiseGo {
					continue
				}
				if asm == nil {
					asm = first
				} else if !slices.EqualFunc(first, asm, dwSameBits) {
					t.Fatalf("%s %+v: differs from the first assembly variant", v.name, g)
				}
			}
		})
	}
}

// dwSameBits reports whether a and b have the same bits.
func dwSameBits(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

// TestDepthwiseNoAllocs: a run with packed weights allocates nothing, on
// either path.
func TestDepthwiseNoAllocs(t *testing.T) {
	g := dwChanCases[3].normalised()
	for _, p := range dwPaths {
		c := newDepthwisePath(t, g, true, false, bestDepthwise(), Par{}, p.path)
		if n := convRunAllocs(t, c, g); n != 0 {
			t.Errorf("%s path: %v allocations a run", p.name, n)
		}
	}
}

// convRunAllocs is how many allocations a run of c (geometry g, its
// weights packed, a Relu epilogue) makes, after a first run.
func convRunAllocs(t *testing.T, c *Conv2D, g ConvGeom) float64 {
	t.Helper()
	x, w, b := convOperands(rand.New(rand.NewPCG(2, 3)), g, true)
	var pw ConvWeights
	if err := c.PackWeights(&pw, w, b); err != nil {
		t.Fatal(err)
	}
	args := &ConvArgs{X: x, Y: make([]float32, g.N*g.M*g.OH*g.OW), Packed: &pw, Act: ActRelu}
	return testing.AllocsPerRun(10, func() {
		if err := c.RunArgs(args); err != nil {
			t.Fatal(err)
		}
	})
}
