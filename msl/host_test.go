package msl

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/mslhost"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// hostCase is one graph node, its inputs and the kernel emitted for it.
type hostCase struct {
	node *graph.Node
	ins  []tensor.Tensor
	k    *Kernel
	tol  float64 // relative, on float outputs; integers are exact
}

// hostKernel is k as internal/mslhost runs it.
func hostKernel(k *Kernel) *mslhost.Kernel {
	hk := &mslhost.Kernel{Name: k.Name, Source: k.Source, Groups: k.Groups, Threads: k.Threads}
	for _, b := range k.Buffers {
		hk.Buffers = append(hk.Buffers, b.Type)
	}
	return hk
}

// runHost runs every case's kernel over its whole grid on the host
// (internal/mslhost compiles them as C++) and returns each output's
// bytes.
func runHost(t *testing.T, cases []hostCase) [][]byte {
	t.Helper()
	mslhost.NeedCompiler(t)
	progs := make([]*mslhost.Program, len(cases))
	for i, c := range cases {
		p := &mslhost.Program{Regions: [][]byte{make([]byte, c.node.Shape.NumElements()*c.node.DType.Size())}}
		args := []mslhost.Arg{{Region: 0}}
		for _, in := range c.ins {
			args = append(args, mslhost.Arg{Region: len(p.Regions)})
			p.Regions = append(p.Regions, bytes.Clone(in.Data))
		}
		p.Steps = []mslhost.Step{{Kernel: hostKernel(c.k), Args: args}}
		progs[i] = p
	}
	if err := mslhost.Run(Header, progs); err != nil {
		t.Fatal(err)
	}
	outs := make([][]byte, len(cases))
	for i, p := range progs {
		outs[i] = p.Regions[0]
	}
	return outs
}

// hostData makes an input: normal floats, or small integers (ties) of
// any dtype when ints is set, with every nanEvery-th element NaN.
func hostData(rng *rand.Rand, dt tensor.DType, s tensor.Shape, ints bool, nanEvery int) tensor.Tensor {
	wide := tensor.New(tensor.F32, s...)
	v := wide.F32()
	for i := range v {
		if ints {
			v[i] = float32(rng.IntN(4))
		} else {
			v[i] = float32(rng.NormFloat64())
		}
		if nanEvery > 0 && i%nanEvery == nanEvery-1 {
			v[i] = float32(math.NaN())
		}
	}
	if dt == tensor.F32 {
		return wide
	}
	out := tensor.New(dt, s...)
	if err := tensor.Convert(out, wide); err != nil {
		panic(err)
	}
	return out
}

// compareHost checks a kernel's output against the reference kernel's.
func compareHost(t *testing.T, c hostCase, got []byte) {
	t.Helper()
	ref, err := ops.PrepareReference(c.node)
	if err != nil {
		t.Fatal(err)
	}
	want := tensor.New(c.node.DType, c.node.Shape...)
	if err := ref(c.ins, want); err != nil {
		t.Fatal(err)
	}
	if !isFloat(c.node.DType) {
		if !bytes.Equal(got, want.Data) {
			t.Errorf("%s: got %v, want %v", c.node, got, want.Data)
		}
		return
	}
	g, w := tensor.New(tensor.F32, c.node.Shape...), tensor.New(tensor.F32, c.node.Shape...)
	gv, _ := tensor.View(c.node.DType, c.node.Shape, got)
	if tensor.Convert(g, gv) != nil || tensor.Convert(w, want) != nil {
		t.Fatal("convert")
	}
	bad := 0
	for i, wv := range w.F32() {
		a, e := float64(g.F32()[i]), float64(wv)
		if approx.Far(a, e, c.tol*(1+math.Abs(e))) {
			if bad++; bad <= 5 {
				t.Errorf("%s [%d]: host kernel %g, reference %g", c.node, i, a, e)
			}
		}
	}
}
