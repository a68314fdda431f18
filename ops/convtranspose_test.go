package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// TestConvTransposeByHand checks the reference on a case worked out by
// hand: x = [1 2] (1-D), w = [1 10 100], stride 2, no pads: the full
// output is x0·w at 0..2 plus x1·w at 2..4 = [1 10 102 20 200]; pads
// [1, -1] drop the first cell and add one zero cell (plus the bias 5).
func TestConvTransposeByHand(t *testing.T) {
	g := graph.New()
	n := g.ConvTranspose(g.Input("x", tensor.F64, 1, 1, 2), g.Input("w", tensor.F64, 1, 1, 3), g.Input("b", tensor.F64, 1),
		graph.ConvTransposeOpts{Strides: []int{2}, Pads: []int{1, -1}})
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	mk := func(s tensor.Shape, v ...float64) tensor.Tensor {
		x, err := tensor.FromFloat64s(tensor.F64, s, v)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	got := rsRun(t, n, mk(tensor.Shape{1, 1, 2}, 1, 2), mk(tensor.Shape{1, 1, 3}, 1, 10, 100), mk(tensor.Shape{1}, 5))
	approx.Slices(t, "1-D", got, []float64{15, 107, 25, 205, 5}, 0, 0)
}

// TestConvTransposeFast compares the fast kernel with the reference over
// the geometry it must handle: groups, strides, dilations, negative and
// positive pads, output padding, 1-D and 3-D, serially and over 3
// workers; the cases named "tiles" (kernel = stride, no pads or
// dilation: every output cell one tap) must take the tiles scatter,
// those named "zip" (tiles two taps wide) the GEMM's zip store, the
// others col2im or, where the output channels split evenly over the
// workers at stride 2 along the rows (convtranspose_blocks.go, where
// ZipSumRows has a vector kernel), blocks of input rows: each also with
// blocks of one input row and chunks of one or two channels, and every
// path must be taken by some case. Those whose names end in "phases"
// must run as stride-2 output phases (convtranspose_phase.go) where the
// convolution kernels have a phase product (AVX-512), in blocks of one
// input row too: twelve, eight and four-row panels, an odd count of
// segments, dilation (taps reaching past a whole segment too), a 5×5,
// no pad (the input read in place), rows that are
// not whole segments (the grid, with no column shift, shifts of one and
// two, and of two past a row of two cells), a phase that no tap reaches
// (which must not take the phases); those that also name zip (U-Net's
// 2×2) take the zip path where there are no phases. Those named
// "project" (a one-cell input, no pads) must run as a MatMul by the
// weights (convtranspose_project.go). Those named "t4" (a 4×4 input,
// 4×4 kernel, stride 2, pad 1: tiles of three output channels, whole
// and partial) must run on asm.ConvT4 where the CPU has one
// (convtranspose_t4.go). The zip cases' widths put the product's 16-column
// panels inside input rows (16, 48) and across them (17, 5), with rows
// past a 12-row tile.
func TestConvTransposeFast(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	paths := map[string]int{}
	bytes0, rows0, phaseBytes0 := convTBlockBytes, convTChunkRows, convTPhaseBlockBytes
	t.Cleanup(func() { convTBlockBytes, convTChunkRows, convTPhaseBlockBytes = bytes0, rows0, phaseBytes0 })
	phases, t4 := asm.HasPhaseProduct(), asm.NewConvT4() != nil
	for _, c := range []struct {
		name string
		x, w []int
		bias bool
		o    graph.ConvTransposeOpts
	}{
		{"unet 2x2 s2 zip", []int{2, 8, 5, 6}, []int{8, 4, 2, 2}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}}},
		{"unet 2x2 s2 wide zip", []int{1, 16, 3, 32}, []int{16, 9, 2, 2}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}}},
		{"2x2 s2 groups zip", []int{2, 8, 3, 48}, []int{8, 7, 2, 2}, false, graph.ConvTransposeOpts{Strides: []int{2, 2}, Groups: 2}},
		{"2x2 s2 width 17 zip", []int{1, 5, 4, 17}, []int{5, 8, 2, 2}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}}},
		{"3x2 s3,2 zip", []int{1, 3, 2, 5}, []int{3, 4, 3, 2}, true, graph.ConvTransposeOpts{Strides: []int{3, 2}}},
		{"1-D k2 s2 zip", []int{2, 4, 40}, []int{4, 6, 2}, true, graph.ConvTransposeOpts{Strides: []int{2}}},
		{"3x3 s3 groups tiles", []int{1, 6, 3, 4}, []int{6, 2, 3, 3}, true, graph.ConvTransposeOpts{Strides: []int{3, 3}, Groups: 3}},
		{"2x1 s2,1 one cell project", []int{1, 3, 1, 1}, []int{3, 5, 2, 1}, false, graph.ConvTransposeOpts{Strides: []int{2, 1}}},
		{"1-D k4 s4 tiles", []int{2, 3, 17}, []int{3, 2, 4}, true, graph.ConvTransposeOpts{Strides: []int{4}}},
		{"3-D 2x2x2 tiles", []int{1, 4, 2, 3, 5}, []int{4, 3, 2, 2, 2}, false, graph.ConvTransposeOpts{Strides: []int{2, 2, 2}}},
		{"2x2 s2 outpad", []int{1, 4, 3, 3}, []int{4, 2, 2, 2}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{0, 0, -1, 0}}},
		{"2x2 s2 dilation 2", []int{1, 4, 3, 3}, []int{4, 2, 2, 2}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}, Dilations: []int{2, 2}}},
		{"3x3 s2 p1 outpad", []int{1, 6, 4, 5}, []int{6, 5, 3, 3}, false, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 0, 0}}},
		{"3x3 s2 p1 batch groups", []int{2, 6, 5, 4}, []int{6, 3, 3, 3}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}, Groups: 2}},
		{"4x4 s2 p1 dcgan t4", []int{2, 8, 4, 4}, []int{8, 5, 4, 4}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
		{"4x4 s2 p1 channels in threes t4", []int{1, 3, 4, 4}, []int{3, 6, 4, 4}, false, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
		{"4x4 s2 p1 one channel each t4", []int{3, 1, 4, 4}, []int{1, 1, 4, 4}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
		{"4x4 s2 p1 deep t4", []int{1, 70, 4, 4}, []int{70, 11, 4, 4}, false, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
		{"1x1 s2 taps missing", []int{1, 3, 3, 4}, []int{3, 2, 1, 1}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{0, 0, -1, -1}}},
		{"3x2 s3,2 odd width", []int{1, 4, 3, 5}, []int{4, 3, 3, 2}, true, graph.ConvTransposeOpts{Strides: []int{3, 2}, Pads: []int{0, 0, 0, -1}}},
		{"3x2 s3,2 p1 odd width", []int{1, 4, 3, 5}, []int{4, 3, 3, 2}, true, graph.ConvTransposeOpts{Strides: []int{3, 2}, Pads: []int{1, 0, 0, -1}}},
		{"5x5 s3 p2 depthwise", []int{1, 4, 5, 5}, []int{4, 1, 5, 5}, true, graph.ConvTransposeOpts{Strides: []int{3, 3}, Pads: []int{2, 2, 1, 2}, Groups: 4}},
		{"groups dilation", []int{2, 6, 4, 3}, []int{6, 2, 3, 2}, true, graph.ConvTransposeOpts{Groups: 3, Dilations: []int{2, 3}, Pads: []int{2, 0, 1, -2}}},
		{"stride 1 wide", []int{1, 20, 3, 37}, []int{20, 3, 3, 3}, true, graph.ConvTransposeOpts{Pads: []int{1, 1, 1, 1}}},
		{"crop everything but the middle", []int{1, 2, 3, 3}, []int{2, 2, 3, 3}, false, graph.ConvTransposeOpts{Strides: []int{3, 3}, Pads: []int{4, 4, 4, 4}}},
		{"1-D", []int{2, 3, 9}, []int{3, 4, 5}, true, graph.ConvTransposeOpts{Strides: []int{3}, Pads: []int{2, 1}}},
		{"3-D", []int{1, 4, 3, 2, 4}, []int{4, 2, 2, 3, 2}, true, graph.ConvTransposeOpts{Strides: []int{2, 1, 2}, Pads: []int{0, 1, 1, 1, 0, -1}, Groups: 2}},
		{"3x3 s2 p1 outpad phases", []int{1, 6, 32, 32}, []int{6, 28, 3, 3}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 0, 0}}},
		{"4x4 s2 p1 dcgan odd segments phases", []int{2, 5, 65, 16}, []int{5, 13, 4, 4}, false, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
		{"3x3 s2 dilation 3 phases", []int{1, 3, 16, 64}, []int{3, 4, 3, 3}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}, Dilations: []int{3, 3}, Pads: []int{3, 2, 2, 3}}},
		{"3x3 s2 p1 outpad width 28 grid phases", []int{1, 5, 40, 28}, []int{5, 14, 3, 3}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 0, 0}}},
		{"4x4 s2 p1 width 8 grid phases", []int{2, 4, 130, 8}, []int{4, 9, 4, 4}, false, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
		{"3x3 s2 dilation 17 taps past a whole segment phases", []int{1, 2, 40, 32}, []int{2, 3, 3, 3}, false, graph.ConvTransposeOpts{Strides: []int{2, 2}, Dilations: []int{17, 17}, Pads: []int{17, 17, 16, 16}}},
		{"5x5 s2 p2 phases", []int{2, 3, 33, 48}, []int{3, 5, 5, 5}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{2, 2, 1, 1}}},
		{"unet 2x2 s2 unpadded zip elsewhere, phases", []int{2, 5, 40, 32}, []int{5, 13, 2, 2}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}}},
		{"unet 2x2 s2 width 24 zip elsewhere, grid phases", []int{1, 3, 50, 24}, []int{3, 6, 2, 2}, false, graph.ConvTransposeOpts{Strides: []int{2, 2}}},
		{"3x3 s2 dilation 3 width 12 grid phases", []int{1, 3, 90, 12}, []int{3, 5, 3, 3}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}, Dilations: []int{3, 3}, Pads: []int{3, 2, 2, 3}}},
		{"3x3 s2 dilation 3 width 2 grid phases", []int{1, 3, 520, 2}, []int{3, 4, 3, 3}, false, graph.ConvTransposeOpts{Strides: []int{2, 2}, Dilations: []int{3, 3}, Pads: []int{3, 2, 2, 3}}},
		{"4x4 one-cell input project", []int{2, 5, 1, 1}, []int{5, 7, 4, 4}, true, graph.ConvTransposeOpts{}},
		{"3x2 one-cell input stride 2 project", []int{1, 9, 1, 1}, []int{9, 3, 3, 2}, false, graph.ConvTransposeOpts{Strides: []int{2, 2}}},
		{"1-D one-cell input project", []int{3, 4, 1}, []int{4, 6, 5}, true, graph.ConvTransposeOpts{}},
		{"one-cell input padded", []int{1, 4, 1, 1}, []int{4, 3, 3, 3}, true, graph.ConvTransposeOpts{Pads: []int{1, 1, 1, 1}}},
		{"1x1 s2 phases missing", []int{1, 3, 32, 32}, []int{3, 2, 1, 1}, true, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{0, 0, -1, -1}}},
	} {
		g := graph.New()
		var b *graph.Node
		ins := []tensor.Tensor{tensor.New(tensor.F32, c.x...), tensor.New(tensor.F32, c.w...)}
		if c.bias {
			m := c.w[1] * max(c.o.Groups, 1)
			b = g.Input("b", tensor.F32, m)
			ins = append(ins, tensor.New(tensor.F32, m))
		}
		n := g.ConvTranspose(g.Input("x", tensor.F32, c.x...), g.Input("w", tensor.F32, c.w...), b, c.o)
		if err := g.Err(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, in := range ins {
			for i := range in.F32() {
				in.F32()[i] = float32(2*r.Float64() - 1)
			}
		}
		want := rsRun(t, n, ins...)
		for _, env := range []Env{Serial, parEnv(3)} {
			for _, tiny := range []bool{false, true} {
				convTBlockBytes, convTChunkRows, convTPhaseBlockBytes = bytes0, rows0, phaseBytes0
				if tiny { // a block of one input row, chunks of one or two channels
					convTBlockBytes, convTChunkRows, convTPhaseBlockBytes = 4, 2*tensor.Shape(c.w[2:]).NumElements(), 4
				}
				got, variant := fastRun(t, n, env, ins...)
				path := ""
				for _, p := range []string{"tiles", "zip", "project"} {
					if strings.Contains(c.name, p) {
						path = "gemm+" + p + "/"
					}
				}
				if strings.HasSuffix(c.name, " phases") && phases {
					path = "phases/"
				}
				if strings.HasSuffix(c.name, " t4") && t4 {
					path = "t4/"
				}
				switch {
				case path != "" && !strings.HasPrefix(variant, path):
					t.Fatalf("%s: variant %s", c.name, variant)
				case path == "" && !strings.HasPrefix(variant, "gemm+col2im/") && !strings.HasPrefix(variant, "gemm+blocks/"):
					t.Fatalf("%s: variant %s", c.name, variant)
				}
				paths[strings.SplitN(variant, "/", 2)[0]]++
				for i := range want {
					if approx.Far(got[i], want[i], 1e-5*(1+math.Abs(want[i]))) {
						t.Fatalf("%s (%d threads, tiny blocks %v): element %d is %v, reference %v", c.name, env.Threads, tiny, i, got[i], want[i])
					}
				}
			}
		}
	}
	for _, p := range []string{"gemm+col2im", "gemm+blocks", "gemm+tiles", "gemm+zip", "gemm+project", "phases", "t4"} {
		if paths[p] == 0 && (p != "gemm+blocks" || asm.BestRows().ZipSumVector()) && (p != "phases" || phases) && (p != "t4" || t4) {
			t.Errorf("no case took %s (%v)", p, paths)
		}
	}
}

// TestConvTransposeParamWeights runs a DCGAN-style step and a
// projection of a one-cell input with their weights and bias as params
// (packed once: the phase path takes the step whatever its input size
// where the CPU has a phase product, but for the 4×4 inputs that
// asm.ConvT4 takes where it can; the projection runs as a MatMul by
// the packed weights) against the reference, then changes them in
// place: a bumped weights version must repack them. Runs allocate
// nothing.
func TestConvTransposeParamWeights(t *testing.T) {
	for _, c := range []struct {
		name, path string
		x, w       []int
		o          graph.ConvTransposeOpts
	}{
		{"dcgan step", "phases/", []int{1, 7, 6, 16}, []int{7, 10, 4, 4}, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
		{"generator step at 4x4", "t4/", []int{1, 9, 4, 4}, []int{9, 60, 4, 4}, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
		{"generator step at 4x4 partial tile", "t4/", []int{2, 9, 4, 4}, []int{9, 62, 4, 4}, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
		{"generator step at 2x2", "phases/", []int{1, 5, 2, 2}, []int{5, 28, 4, 4}, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
		{"unet step", "phases/", []int{2, 6, 3, 32}, []int{6, 13, 2, 2}, graph.ConvTransposeOpts{Strides: []int{2, 2}}},
		{"projection", "gemm+project/", []int{2, 7, 1, 1}, []int{7, 10, 4, 4}, graph.ConvTransposeOpts{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, ins, env, k := convTParamKernel(t, c.x, c.w, true, c.o, c.path)
			frRepack(t, n, k, ins, env, rand.New(rand.NewPCG(3, 4)), 1e-5)
		})
	}
}

// TestConvTransposePhasesNonFinite: a NaN or infinite weight meets the
// pad cells around the input in the phase products (0·Inf = NaN) but no
// input cell in the definition, so a run with one must give the
// definition's values (the reference runs), and the phases take over
// again once the weights are finite (a bumped weights version).
func TestConvTransposePhasesNonFinite(t *testing.T) {
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.NaN())} {
		n, ins, env, k := convTParamKernel(t, []int{1, 3, 5, 16}, []int{3, 6, 4, 4}, false,
			graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}, "phases/")
		w := ins[1].F32()
		good := w[0]
		w[0] = bad // channel 0's top-left tap: it reads the pad above and left of the input
		env.WeightsVersion.Add(1)
		frMatch(t, fmt.Sprintf("weight %v", bad), n, k, ins, 1e-5)
		w[0] = good
		env.WeightsVersion.Add(1)
		frMatch(t, "finite again", n, k, ins, 1e-5)
	}
}

// convTPathAvailable reports whether this CPU's kernels have path (the
// phases and t4 need vector kernels).
func convTPathAvailable(path string) bool {
	switch path {
	case "phases/":
		return asm.HasPhaseProduct()
	case "t4/":
		return asm.NewConvT4() != nil
	}
	return true
}

// TestConvTransposePhasesRunTimeWeights runs weights computed at run time
// on the phases with the tap packer (a DCGAN step at 5×16 and, batched,
// at 8×8 on the grid; one block of rows, so each work item packs its
// panels as it runs them), serially and on two workers, against the
// reference: finite, then with a NaN or infinite weight (the run must
// give the reference's values), then finite again.
func TestConvTransposePhasesRunTimeWeights(t *testing.T) {
	if asm.NewTapPacker() == nil || !asm.HasPhaseProduct() {
		t.Skip("no vector phase product and tap packer on this CPU")
	}
	r := rand.New(rand.NewPCG(11, 12))
	o := graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}
	for _, c := range []struct{ x, w []int }{{[]int{1, 7, 5, 16}, []int{7, 30, 4, 4}}, {[]int{2, 5, 8, 8}, []int{5, 13, 4, 4}}} {
		g := graph.New()
		n := g.ConvTranspose(g.Input("x", tensor.F32, c.x...), g.Input("w", tensor.F32, c.w...), nil, o)
		ins := []tensor.Tensor{tensor.New(tensor.F32, c.x...), tensor.New(tensor.F32, c.w...)}
		for _, in := range ins {
			for i := range in.F32() {
				in.F32()[i] = float32(2*r.Float64() - 1)
			}
		}
		w := ins[1].F32()
		for _, env := range []Env{Serial, parEnv(2)} {
			k, variant, err := PrepareFast(n, env)
			if err != nil || !strings.HasPrefix(variant, "phases/") {
				t.Fatalf("%v: variant %s (%v)", c.x, variant, err)
			}
			for _, bad := range []float32{0, float32(math.Inf(-1)), float32(math.NaN()), 0} {
				good := w[17]
				if bad != 0 {
					w[17] = bad
				}
				frMatch(t, fmt.Sprintf("%v on %d workers, weight %v", c.x, env.Threads, w[17]), n, k, ins, 1e-5)
				w[17] = good
			}
		}
	}
}

// TestConvTransposeT4NonFinite: an infinite or NaN weight in a tap that
// lands outside the output for some input cells (channel 0's tap (0,
// 0)) must give the definition's values on the t4 path, which never
// adds those products, with no fallback to the reference.
func TestConvTransposeT4NonFinite(t *testing.T) {
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.NaN())} {
		n, ins, env, k := convTParamKernel(t, []int{1, 3, 4, 4}, []int{3, 7, 4, 4}, true,
			graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}, "t4/")
		w := ins[1].F32()
		w[0] = bad
		env.WeightsVersion.Add(1)
		frMatch(t, fmt.Sprintf("weight %v", bad), n, k, ins, 1e-5)
	}
}

// convTParamKernel prepares, on two workers with a weights version, the
// fast kernel of a ConvTranspose of input x by param weights w (and a
// param bias), and random inputs for it; the kernel must take path
// (the phases only where the CPU has a phase product).
func convTParamKernel(t *testing.T, x, w []int, bias bool, o graph.ConvTransposeOpts, path string) (*graph.Node, []tensor.Tensor, Env, Kernel) {
	t.Helper()
	g := graph.New()
	var b *graph.Node
	if bias {
		b = g.Param("b", tensor.F32, w[1])
	}
	n := g.ConvTranspose(g.Input("x", tensor.F32, x...), g.Param("w", tensor.F32, w...), b, o)
	g.Output(n)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	ins, env, k, variant := frPrepare(t, n, rand.New(rand.NewPCG(5, 6)))
	if convTPathAvailable(path) && !strings.HasPrefix(variant, path) {
		t.Fatalf("variant %s, want %s", variant, path)
	}
	return n, ins, env, k
}

// TestConvTransposeRunTimeWeightsNoAllocs: runs with weights computed at
// run time allocate nothing on the phases (packed by the tap packer,
// paired panels too) or on ConvT4 (on one worker: the tests' parallel
// Env starts goroutines).
func TestConvTransposeRunTimeWeightsNoAllocs(t *testing.T) {
	o := graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}
	for _, c := range []struct {
		x, w []int
		o    graph.ConvTransposeOpts
		path string
	}{
		{[]int{1, 6, 8, 16}, []int{6, 10, 4, 4}, o, "phases/"},
		{[]int{1, 6, 32, 32}, []int{6, 10, 2, 2}, graph.ConvTransposeOpts{Strides: []int{2, 2}}, "phases/"},
		{[]int{1, 6, 4, 4}, []int{6, 10, 4, 4}, o, "t4/"},
	} {
		g := graph.New()
		n := g.ConvTranspose(g.Input("x", tensor.F32, c.x...), g.Input("w", tensor.F32, c.w...), nil, c.o)
		ins := []tensor.Tensor{tensor.New(tensor.F32, c.x...), tensor.New(tensor.F32, c.w...)}
		k, variant, err := PrepareFast(n, Serial)
		if err != nil {
			t.Fatal(err)
		}
		if convTPathAvailable(c.path) && !strings.HasPrefix(variant, c.path) {
			t.Fatalf("%v: variant %s, want %s", c.x, variant, c.path)
		}
		out := tensor.New(tensor.F32, n.Shape...)
		if err := k(ins, out); err != nil {
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(20, func() { _ = k(ins, out) }); a != 0 {
			t.Errorf("%v on %s: %v allocations a run", c.x, variant, a)
		}
	}
}
