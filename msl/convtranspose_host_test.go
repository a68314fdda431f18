package msl

import (
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// emitConvTranspose describes a ConvTranspose node and writes its
// kernel directly (not through the emitter table).
func emitConvTranspose(name string, n *graph.Node) (*Kernel, error) {
	d, err := kdesc.ConvTransposeOf(name, n)
	if err != nil {
		return nil, err
	}
	return EmitConvTranspose(d)
}

// TestHostConvTranspose compiles the gather kernel as C++ and checks it
// against the reference kernel: kernel = stride = 2 (U-Net), output
// padding, groups and depthwise, dilation, negative begin pads (cells no
// tap reaches), a stride past the kernel (gaps), 1-D and 3-D, and NaN
// inputs reaching exactly the cells their taps land on.
func TestHostConvTranspose(t *testing.T) {
	h := &hostBuilder{t: t, g: graph.New(), rng: rand.New(rand.NewPCG(5, 6))}
	for _, c := range []struct {
		x, w []int
		o    graph.ConvTransposeOpts
		bias bool
		nan  int
	}{
		{[]int{1, 6, 4, 5}, []int{6, 3, 2, 2}, graph.ConvTransposeOpts{Strides: []int{2, 2}}, true, 0},
		{[]int{2, 4, 5, 4}, []int{4, 3, 3, 3}, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 0, -1}, Groups: 2}, true, 0},
		{[]int{1, 3, 3, 4}, []int{3, 1, 3, 2}, graph.ConvTransposeOpts{Strides: []int{1, 3}, Dilations: []int{2, 1}, Pads: []int{-1, 1, -2, 0}, Groups: 3}, true, 0},
		{[]int{2, 2, 5}, []int{2, 3, 3}, graph.ConvTransposeOpts{Strides: []int{4}, Pads: []int{1, -2}}, true, 0},
		{[]int{1, 2, 2, 3, 2}, []int{2, 2, 2, 2, 3}, graph.ConvTransposeOpts{Strides: []int{2, 1, 2}, Dilations: []int{1, 2, 1}, Pads: []int{0, 1, 1, -1, 0, 0}}, false, 0},
		{[]int{1, 5, 4, 4}, []int{5, 2, 3, 3}, graph.ConvTransposeOpts{Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}}, true, 9},
	} {
		x := hostData(h.rng, tensor.F32, c.x, false, c.nan)
		w := hostData(h.rng, tensor.F32, c.w, false, 0)
		ins := []tensor.Tensor{x, w}
		var b *graph.Node
		if c.bias {
			bv := hostData(h.rng, tensor.F32, tensor.Shape{c.w[1] * max(c.o.Groups, 1)}, false, 0)
			ins, b = append(ins, bv), h.input(bv)
		}
		xi, wi := h.input(x), h.input(w)
		h.add(h.g.ConvTranspose(xi, wi, b, c.o), ins, 1e-5, emitConvTranspose)
	}
	outs := runHost(t, h.cases)
	for i, c := range h.cases {
		compareHost(t, c, outs[i])
	}
}

// TestConvTransposeRejects: a dtype the kernel lacks and an output the
// geometry does not give are errors.
func TestConvTransposeRejects(t *testing.T) {
	ok := ConvTranspose{Name: "ct", DType: tensor.F32, In: []int{1, 2, 3}, Kernel: []int{2}, M: 2, Groups: 1,
		Strides: []int{2}, Dilations: []int{1}, Pads: []int{0, 0}, Out: []int{1, 2, 6}}
	if _, err := EmitConvTranspose(&ok); err != nil {
		t.Fatalf("the valid descriptor: %v", err)
	}
	f64, long := ok, ok
	f64.DType = tensor.F64
	long.Out = []int{1, 2, 7}
	for _, c := range []*ConvTranspose{&f64, &long} {
		if _, err := EmitConvTranspose(c); err == nil {
			t.Errorf("%v output %v: no error", c.DType, c.Out)
		}
	}
}
