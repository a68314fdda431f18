package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// Tests of the fast convolution and pooling kernels against the reference
// kernels, for every pair of row-kernel and GEMM variants of one name.

// fcVariants pairs each row-kernel variant with the GEMM variant of the
// same name.
func fcVariants() [][2]any {
	var ps [][2]any
	for _, k := range asm.RowVariants() {
		if gv := asm.GemmVariantNamed(k.Name); gv != nil {
			ps = append(ps, [2]any{k, gv})
		}
	}
	return ps
}

type fcCase struct {
	n, c, h, w, m, kh, kw, groups int
	o                             graph.ConvOpts
	bias                          bool
}

func (c fcCase) String() string {
	return fmt.Sprintf("x[%d %d %d %d] w[%d %d %d %d] g%d %+v bias=%v", c.n, c.c, c.h, c.w, c.m, c.c/c.groups, c.kh, c.kw, c.groups, c.o, c.bias)
}

func fcRandomCases(r *rand.Rand, count int) []fcCase {
	cases := []fcCase{
		{n: 1, c: 16, h: 30, w: 30, m: 20, kh: 3, kw: 3, groups: 1, o: graph.ConvOpts{Pads: []int{1, 1, 1, 1}}, bias: true},
		{n: 2, c: 8, h: 9, w: 11, m: 12, kh: 1, kw: 1, groups: 1},                                                         // 1×1: GEMM on x
		{n: 1, c: 6, h: 12, w: 12, m: 6, kh: 3, kw: 3, groups: 6, o: graph.ConvOpts{Pads: []int{1, 1, 1, 1}}, bias: true}, // depthwise
		{n: 1, c: 4, h: 13, w: 13, m: 8, kh: 3, kw: 3, groups: 4, o: graph.ConvOpts{Strides: []int{2, 2}}},                // depthwise ×2, strided
		{n: 1, c: 8, h: 10, w: 10, m: 6, kh: 3, kw: 3, groups: 2, o: graph.ConvOpts{Dilations: []int{2, 2}, Pads: []int{2, 2, 2, 2}}},
	}
	for len(cases) < count {
		groups := 1 + r.IntN(3)
		cpg := 1 + r.IntN(4)
		c := fcCase{n: 1 + r.IntN(2), c: groups * cpg, h: 1 + r.IntN(14), w: 1 + r.IntN(14), m: groups * (1 + r.IntN(4)),
			kh: 1 + r.IntN(4), kw: 1 + r.IntN(4), groups: groups, bias: r.IntN(2) == 0,
			o: graph.ConvOpts{
				Strides:   []int{1 + r.IntN(3), 1 + r.IntN(3)},
				Dilations: []int{1 + r.IntN(3), 1 + r.IntN(3)},
				Pads:      []int{r.IntN(3), r.IntN(3), r.IntN(3), r.IntN(3)},
				Groups:    groups,
			}}
		if slides(c.h+c.o.Pads[0]+c.o.Pads[2], c.kh, c.o.Strides[0], c.o.Dilations[0]) < 1 ||
			slides(c.w+c.o.Pads[1]+c.o.Pads[3], c.kw, c.o.Strides[1], c.o.Dilations[1]) < 1 {
			continue
		}
		cases = append(cases, c)
	}
	return cases
}

// fcConv builds the node of a case and random inputs for it.
func fcConv(t testing.TB, c fcCase, r *rand.Rand) (*graph.Node, []tensor.Tensor) {
	g := graph.New()
	x := g.Input("x", tensor.F32, c.n, c.c, c.h, c.w)
	w := g.Input("w", tensor.F32, c.m, c.c/c.groups, c.kh, c.kw)
	var b *graph.Node
	if c.bias {
		b = g.Input("b", tensor.F32, c.m)
	}
	o := c.o
	o.Groups = c.groups
	n := g.Conv2D(x, w, b, o)
	if err := g.Err(); err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	ins := []tensor.Tensor{
		frTensor(tensor.F32, x.Shape, frRand(r, x.Shape.NumElements(), 1)),
		frTensor(tensor.F32, w.Shape, frRand(r, w.Shape.NumElements(), 1)),
	}
	if b != nil {
		ins = append(ins, frTensor(tensor.F32, b.Shape, frRand(r, c.m, 1)))
	}
	return n, ins
}

// frMagnitude is the scale of each of n's outputs' rounding: n's
// reference run on the inputs' absolute values (Σ|w·x| + |b| for a
// convolution).
func frMagnitude(t testing.TB, n *graph.Node, ins []tensor.Tensor) []float64 {
	t.Helper()
	abs := make([]tensor.Tensor, len(ins))
	for j := range ins {
		abs[j] = frAbs(ins[j])
	}
	mag := frReference(t, n, abs).F32()
	scale := make([]float64, len(mag))
	for j, m := range mag {
		scale[j] = float64(m)
	}
	return scale
}

func TestFastConv2D(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	tol := frTol(t, graph.OpConv2D)
	cases := fcRandomCases(r, 120)
	for _, p := range fcVariants() {
		k, gv := p[0].(*asm.RowKernels), p[1].(*asm.GemmVariant)
		for i, c := range cases {
			n, ins := fcConv(t, c, r)
			kern, _, err := prepareConvFast(n, frEnv(1+i%3), k, gv)
			if err != nil || kern == nil {
				t.Fatalf("%v: no fast kernel (%v)", c, err)
			}
			got, want := frOut(t, n, kern, ins).F32(), frReference(t, n, ins).F32()
			frClose(t, fmt.Sprintf("%s %v", k.Name, c), got, want, frMagnitude(t, n, ins), tol, 0)
		}
	}
}

func TestFastPool(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, k := range asm.RowVariants() {
		for trial := range 150 {
			kh, kw := 1+r.IntN(4), 1+r.IntN(4)
			o := graph.PoolOpts{Kernel: []int{kh, kw}, Strides: []int{1 + r.IntN(3), 1 + r.IntN(3)},
				Pads: []int{r.IntN(kh), r.IntN(kw), r.IntN(kh), r.IntN(kw)}, CountPad: r.IntN(2) == 0}
			s := []int{1 + r.IntN(2), 1 + r.IntN(4), kh + r.IntN(30), kw + r.IntN(30)}
			for _, isMax := range []bool{true, false} {
				g := graph.New()
				in := g.Input("x", tensor.F32, s...)
				n := g.AvgPool2D(in, o)
				if isMax {
					n = g.MaxPool2D(in, o)
				}
				if err := g.Err(); err != nil {
					t.Fatal(err)
				}
				v := frRand(r, in.Shape.NumElements(), 1)
				if trial%4 == 0 {
					v[r.IntN(len(v))] = ewNaN
					v[r.IntN(len(v))] = ewInf
					v[r.IntN(len(v))] = -ewInf
				}
				ins := []tensor.Tensor{frTensor(tensor.F32, in.Shape, v)}
				kern, err := preparePoolFast(n, frEnv(1+trial%3), k)
				if err != nil || kern == nil {
					t.Fatalf("no fast kernel (%v)", err)
				}
				got, want := frOut(t, n, kern, ins).F32(), frReference(t, n, ins).F32()
				var scale []float64
				if !isMax { // an average's rounding scales with Σ|x|/count
					mag := frReference(t, n, []tensor.Tensor{frAbs(ins[0])}).F32()
					scale = make([]float64, len(mag))
					for j, m := range mag {
						scale[j] = float64(m)
					}
				}
				frClose(t, fmt.Sprintf("%s %v %v %+v", k.Name, n.Op, s, o), got, want, scale, frTol(t, n.Op), 0)
			}
		}
	}
}

func TestFastConvNoAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	for _, c := range fcRandomCases(r, 5) {
		n, ins := fcConv(t, c, r)
		k, variant, err := PrepareFast(n, Serial)
		if err != nil || variant == "reference" {
			t.Fatalf("%v: %q, %v", c, variant, err)
		}
		out := tensor.New(n.DType, n.Shape...)
		if a := testing.AllocsPerRun(3, func() {
			if err := k(ins, out); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%v: %v allocations per run", c, a)
		}
		if err := k(ins[:1], out); err == nil {
			t.Errorf("%v: a missing input was accepted", c)
		}
	}
}

// BenchmarkFastConv2D: a ResNet-style 3×3 convolution, 64 → 64 channels
// at 56×56 with padding 1, reported in GFLOP/s (2 flops per
// multiply-add), single-threaded, per variant and for the reference.
func BenchmarkFastConv2D(b *testing.B) {
	r := rand.New(rand.NewPCG(12, 12))
	c := fcCase{n: 1, c: 64, h: 56, w: 56, m: 64, kh: 3, kw: 3, groups: 1, o: graph.ConvOpts{Pads: []int{1, 1, 1, 1}}, bias: true}
	n, ins := fcConv(b, c, r)
	flops := 2.0 * 64 * 64 * 9 * 56 * 56
	out := tensor.New(n.DType, n.Shape...)
	run := func(b *testing.B, k Kernel) {
		for b.Loop() {
			if err := k(ins, out); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
	b.Run("3x3-64-56/reference", func(b *testing.B) {
		k, err := PrepareReference(n)
		if err != nil {
			b.Fatal(err)
		}
		run(b, k)
	})
	for _, p := range fcVariants() {
		k, gv := p[0].(*asm.RowKernels), p[1].(*asm.GemmVariant)
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("3x3-64-56/%s/t%d", k.Name, threads), func(b *testing.B) {
				env := Serial
				if threads > 1 {
					env = frEnv(threads)
				}
				kern, _, err := prepareConvFast(n, env, k, gv)
				if err != nil || kern == nil {
					b.Fatalf("no fast kernel (%v)", err)
				}
				run(b, kern)
			})
		}
	}
}
