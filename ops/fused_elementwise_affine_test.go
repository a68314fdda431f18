package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestFusedElementwiseAffine checks the plane-by-plane path of a
// per-channel x·a + b (and Relu): which programs take it (operands in
// either order, per-channel and scalar a and b, batches, planes of at
// least affineMinPlane; not a subtraction, a product of two full-size
// inputs or operands varying within a plane), and that its results equal the reference's bits,
// specials included, on one worker and on three (ranges starting inside
// planes), into their own output and in place over x.
func TestFusedElementwiseAffine(t *testing.T) {
	for _, c := range []struct {
		name   string
		x      []int
		a, b   []int
		swap   bool // mul(a, x), add(b, ·)
		relu   bool
		second graph.Op // the second instruction (OpAdd takes the path)
		takes  bool
	}{
		{"batch norm relu", []int{2, 5, 7, 9}, []int{1, 5, 1, 1}, []int{5, 1, 1}, false, true, graph.OpAdd, true},
		{"swapped operands", []int{1, 6, 4, 4}, []int{6, 1, 1}, []int{1, 6, 1, 1}, true, true, graph.OpAdd, true},
		{"no relu, scalar scale", []int{3, 4, 5, 3}, []int{1}, []int{4, 1, 1}, false, false, graph.OpAdd, true},
		{"scalars", []int{2, 3, 10}, []int{1}, []int{1}, true, true, graph.OpAdd, true},
		{"2x2 planes", []int{1, 5, 2, 2}, []int{5, 1, 1}, []int{5, 1, 1}, false, true, graph.OpAdd, true},
		{"planes of 81", []int{2, 3, 9, 9}, []int{3, 1, 1}, []int{1, 3, 1, 1}, false, true, graph.OpAdd, true},
		{"subtraction", []int{1, 4, 3, 3}, []int{4, 1, 1}, []int{4, 1, 1}, false, true, graph.OpSub, false},
		{"full-size scale", []int{1, 4, 3, 3}, []int{1, 4, 3, 3}, []int{4, 1, 1}, false, true, graph.OpAdd, false},
		{"per-row shift", []int{1, 4, 3, 5}, []int{4, 1, 1}, []int{4, 3, 1}, false, true, graph.OpAdd, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			x, a, b := g.Input("x", tensor.F32, c.x...), g.Input("a", tensor.F32, c.a...), g.Input("b", tensor.F32, c.b...)
			mul := []graph.ElemRef{ref(0), ref(1)}
			add := []graph.ElemRef{instr(0), ref(2)}
			if c.swap {
				mul[0], mul[1], add[0], add[1] = mul[1], mul[0], add[1], add[0]
			}
			prog := []graph.ElemInstr{{Op: graph.OpMul, Args: mul}, {Op: c.second, Args: add}}
			if c.relu {
				prog = append(prog, graph.ElemInstr{Op: graph.OpRelu, Args: []graph.ElemRef{instr(1)}})
			}
			f := mustInsert(t, g, graph.OpFusedElementwise, graph.Attrs{Program: prog}, x, a, b)
			g.Output(f)
			p, err := newElemPlan(f)
			if err != nil {
				t.Fatal(err)
			}
			q := newElem32Plan(p)
			// Only planes of at least affineMinPlane.
			plane := p.n / c.x[0] / c.x[1]
			if len(c.a) == 1 && len(c.b) == 1 {
				plane = p.n
			}
			takes := c.takes && plane >= q.affineMinPlane()
			if (q.affine != nil) != takes {
				t.Fatalf("affine path %v, want %v", q.affine != nil, takes)
			}
			r := rand.New(rand.NewPCG(8, 9))
			feed := func(n *graph.Node) tensor.Tensor {
				v := make([]float64, n.Shape.NumElements())
				for i := range v {
					v[i] = float64(float32(4*r.Float64() - 2))
				}
				if len(v) > 4 {
					v[1], v[2], v[3] = math.NaN(), math.Inf(-1), math.Copysign(0, -1)
				}
				return hcT(t, n.DType, n.Shape, v...)
			}
			ins := []tensor.Tensor{feed(x), feed(a), feed(b)}
			want := hcRun(t, f, ins...)
			if q.affine != nil { // two ranges, the cut inside a plane
				out := tensor.New(tensor.F32, f.Shape...)
				cut := q.affine.plane/2 + q.affine.plane
				if cut >= p.n {
					cut = q.affine.plane / 2
				}
				q.run(q.newScratch(), ins, out, 0, cut)
				q.run(q.newScratch(), ins, out, cut, p.n)
				for i, v := range out.F32() {
					if w := float32(want[i]); math.Float32bits(v) != math.Float32bits(w) && !(v != v && w != w) {
						t.Fatalf("ranges cut at %d: element %d = %v, reference %v", cut, i, v, w)
					}
				}
			}
			for _, env := range []Env{Serial, parEnv(3)} {
				for _, inPlace := range []bool{false, true} {
					k, _, err := PrepareFast(f, env)
					if err != nil {
						t.Fatal(err)
					}
					xs := tensor.Tensor{DType: tensor.F32, Shape: ins[0].Shape.Clone(), Data: append([]byte(nil), ins[0].Data...)}
					out := tensor.New(tensor.F32, f.Shape...)
					if inPlace {
						out.Data = xs.Data
					}
					if err := k([]tensor.Tensor{xs, ins[1], ins[2]}, out); err != nil {
						t.Fatal(err)
					}
					what := fmt.Sprintf("threads %d, in place %v", env.Threads, inPlace)
					for i, v := range out.F32() {
						if w := float32(want[i]); math.Float32bits(v) != math.Float32bits(w) && !(v != v && w != w) {
							t.Fatalf("%s: element %d = %v, reference %v", what, i, v, w)
						}
					}
				}
			}
		})
	}
}
