package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// fcPooled is the FusedConv2D computing Conv2D node n (of fcConv), then
// act and the 2×2 max pooling, on inputs of a graph of its own.
func fcPooled(t testing.TB, n *graph.Node, act graph.Op) *graph.Node {
	t.Helper()
	g := graph.New()
	ins := make([]*graph.Node, len(n.Inputs))
	for i, in := range n.Inputs {
		ins[i] = g.Input(in.Name, in.DType, in.Shape...)
	}
	at := n.Attrs
	at.Epilogue = graph.Epilogue{Bias: len(ins) == 3, Act: act, Pool2x2: true}
	f, err := g.Insert(graph.OpFusedConv2D, at, ins...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFusedConvPoolMatchesChain: the pooled reference kernel is Conv2D,
// the activation and MaxPool2D bit for bit (odd OH: floor mode), in F32
// and F64, and the fast kernels agree with it.
func TestFusedConvPoolMatchesChain(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
		g := graph.New()
		x := g.Input("x", dt, 2, 3, 9, 8)
		w := g.Param("w", dt, 4, 3, 3, 3)
		b := g.Param("b", dt, 4)
		o := graph.ConvOpts{Pads: []int{1, 1, 1, 1}}
		pool := graph.PoolOpts{Kernel: []int{2, 2}, Strides: []int{2, 2}}
		g.Output(g.MaxPool2D(g.Relu(g.Conv2D(x, w, b, o)), pool))
		at := graph.Attrs{Pads: o.Pads, Epilogue: graph.Epilogue{Bias: true, Act: graph.OpRelu, Pool2x2: true}}
		f := mustInsert(t, g, graph.OpFusedConv2D, at, x, w, b)
		if !f.Shape.Equal(tensor.Shape{2, 4, 4, 4}) {
			t.Fatalf("pooled shape %v", f.Shape)
		}
		g.Output(f)
		feeds := fusedPair(t, g, 6)
		checkFast(t, f, feeds, 2e-5)
	}
	// The fast F32 kernel's scratch is made when it is prepared: runs
	// allocate nothing.
	g := graph.New()
	x, w := g.Input("x", tensor.F32, 1, 3, 32, 32), g.Param("w", tensor.F32, 8, 3, 3, 3)
	f := mustInsert(t, g, graph.OpFusedConv2D, graph.Attrs{Pads: []int{1, 1, 1, 1}, Epilogue: graph.Epilogue{Act: graph.OpRelu, Pool2x2: true}}, x, w)
	k, _, err := PrepareFast(f, parEnv(1))
	if err != nil || k == nil {
		t.Fatalf("no fast kernel (%v)", err)
	}
	ins := []tensor.Tensor{tensor.New(tensor.F32, x.Shape...), tensor.New(tensor.F32, w.Shape...)}
	noAllocs(t, k, ins, tensor.New(tensor.F32, f.Shape...))
}

// TestFastConvPool2x2 runs the pooled fast kernel of every variant
// against the reference on the stem's geometry (the direct path), odd
// and strided ones and random ones, with and without bias and
// activation, on one to three threads, one input with a NaN.
func TestFastConvPool2x2(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	tol := frTol(t, graph.OpFusedConv2D)
	pad1 := graph.ConvOpts{Pads: []int{1, 1, 1, 1}}
	cases := []fcCase{
		{n: 1, c: 3, h: 32, w: 32, m: 32, kh: 3, kw: 3, groups: 1, o: pad1, bias: true},  // the stem: direct
		{n: 1, c: 3, h: 33, w: 16, m: 25, kh: 3, kw: 3, groups: 1, o: pad1, bias: false}, // direct, odd OH
		{n: 2, c: 4, h: 17, w: 15, m: 10, kh: 3, kw: 3, groups: 1, o: graph.ConvOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 0}}, bias: true},
	}
	cases = append(cases, fcRandomCases(r, 50)...)
	acts := []graph.Op{graph.OpInvalid, graph.OpRelu, graph.OpSilu}
	for _, p := range fcVariants() {
		k, gv := p[0].(*asm.RowKernels), p[1].(*asm.GemmVariant)
		for i, c := range cases {
			n, ins := fcConv(t, c, r)
			if n.Shape[2] < 2 || n.Shape[3] < 2 {
				continue // no 2×2 pool
			}
			if i == 1 {
				ins[0].F32()[r.IntN(ins[0].Shape.NumElements())] = float32(math.NaN())
			}
			act := acts[i%len(acts)]
			f, mag := fcPooled(t, n, act), fcPooled(t, n, graph.OpInvalid)
			shadow, _, err := convShadow(f)
			if err != nil {
				t.Fatal(err)
			}
			kern, _, err := prepareConvAsm(f, shadow, frEnv(1+i%3), k, gv, act, -1)
			if err != nil || kern == nil {
				t.Fatalf("%v: no fast kernel (%v)", c, err)
			}
			got, want := frOut(t, f, kern, ins).F32(), frReference(t, f, ins).F32()
			abs := make([]tensor.Tensor, len(ins))
			for j := range ins {
				abs[j] = frAbs(ins[j])
			}
			scale := make([]float64, f.Shape.NumElements())
			for j, m := range frReference(t, mag, abs).F32() {
				scale[j] = float64(m)
			}
			frClose(t, fmt.Sprintf("%s %v %v", k.Name, c, act), got, want, scale, tol, 0)
		}
	}
}
