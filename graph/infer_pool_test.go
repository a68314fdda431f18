package graph

import (
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

func poolNDCases() []inferCase {
	return []inferCase{
		// 3-D, default strides: 4-3+1 per axis.
		{name: "MaxPoolND/3d-values", dt: tensor.F32, shape: sh(1, 2, 2, 3, 4), build: func(g *Graph) *Node {
			v, _ := g.MaxPoolND(f32(g, 1, 2, 4, 5, 6), PoolNDOpts{Kernel: []int{3, 3, 3}})
			return v
		}},
		// Dilation 2 spans 5 cells: (7+1+0-5)/2+1 = 2; I64 indices.
		{name: "MaxPoolND/dilated-indices", dt: tensor.I64, shape: sh(2, 3, 2), build: func(g *Graph) *Node {
			_, i := g.MaxPoolND(in(g, tensor.U8, 2, 3, 7), PoolNDOpts{Kernel: []int{3}, Strides: []int{2}, Dilations: []int{2}, Pads: []int{1, 0}})
			return i
		}},
		{name: "AvgPoolND/2d-pads", dt: tensor.F64, shape: sh(1, 1, 3, 2), build: func(g *Graph) *Node {
			return g.AvgPoolND(in(g, tensor.F64, 1, 1, 4, 4), PoolNDOpts{Kernel: []int{2, 3}, Strides: []int{2, 2}, Pads: []int{1, 0, 1, 1}})
		}},
		{name: "MaxUnpool/2d", dt: tensor.F32, shape: sh(1, 2, 5, 4), build: func(g *Graph) *Node {
			return g.MaxUnpool(f32(g, 1, 2, 2, 2), in(g, tensor.I64, 1, 2, 2, 2), []int{1, 2, 5, 4})
		}},
	}
}

// TestPoolNDErrors checks that bad N-D pool and unpool attributes are
// errors naming the op and the problem.
func TestPoolNDErrors(t *testing.T) {
	for _, c := range []struct {
		name, op, want string
		build          func(g *Graph)
	}{
		{"4 spatial", "MaxPoolND", "1 to 3 spatial", func(g *Graph) { g.MaxPoolND(f32(g, 1, 1, 2, 2, 2, 2), PoolNDOpts{Kernel: []int{1, 1, 1, 1}}) }},
		{"kernel length", "AvgPoolND", "kernel [2]", func(g *Graph) { g.AvgPoolND(f32(g, 1, 1, 4, 4), PoolNDOpts{Kernel: []int{2}}) }},
		{"zero stride", "AvgPoolND", "strides [0 1]", func(g *Graph) { g.AvgPoolND(f32(g, 1, 1, 4, 4), PoolNDOpts{Kernel: []int{2, 2}, Strides: []int{0, 1}}) }},
		{"negative pad", "MaxPoolND", "pads", func(g *Graph) { g.MaxPoolND(f32(g, 1, 1, 4), PoolNDOpts{Kernel: []int{2}, Pads: []int{-1, 0}}) }},
		{"too large", "MaxPoolND", "larger than padded input", func(g *Graph) { g.MaxPoolND(f32(g, 1, 1, 4), PoolNDOpts{Kernel: []int{3}, Dilations: []int{3}}) }},
		{"bool", "MaxPoolND", "dtype", func(g *Graph) { g.MaxPoolND(in(g, tensor.Bool, 1, 1, 4), PoolNDOpts{Kernel: []int{2}}) }},
		{"unpool shape", "MaxUnpool", "output shape", func(g *Graph) {
			g.MaxUnpool(f32(g, 1, 2, 2, 2), in(g, tensor.I64, 1, 2, 2, 2), []int{1, 3, 4, 4})
		}},
		{"unpool indices", "MaxUnpool", "I64", func(g *Graph) {
			g.MaxUnpool(f32(g, 1, 2, 2, 2), in(g, tensor.I32, 1, 2, 2, 2), []int{1, 2, 4, 4})
		}},
	} {
		g := New()
		c.build(g)
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), c.op) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s and %q", c.name, err, c.op, c.want)
		}
	}
}
