package ops

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestWhereRows: the row-copy Where equals the reference byte for byte
// for conditions constant along the last axis (the decoder cache update's
// [S, 1] mask, a fully broadcast one, a per-row one of full rank) over
// values of every element size, broadcast values included, in place too;
// Wheres whose condition varies along the last axis, or whose values
// broadcast along it, are left to the reference.
func TestWhereRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	cases := []struct{ out, cond, x, y []int }{
		{[]int{1, 4, 9, 8}, []int{9, 1}, []int{1, 4, 9, 8}, []int{1, 4, 9, 8}},
		{[]int{2, 3, 5}, []int{1, 1, 1}, []int{2, 3, 5}, []int{2, 3, 5}},
		{[]int{2, 3, 5}, []int{2, 3, 1}, []int{3, 5}, []int{2, 3, 5}},
		{[]int{6, 2}, []int{6, 1}, []int{6, 2}, []int{1, 2}},
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.I64, tensor.F16, tensor.Bool} {
		for _, c := range cases {
			what := fmt.Sprintf("%v out %v cond %v x %v y %v", dt, c.out, c.cond, c.x, c.y)
			g := graph.New()
			n := g.Where(g.Input("c", tensor.Bool, c.cond...), g.Input("x", dt, c.x...), g.Input("y", dt, c.y...))
			k, variant, err := prepareWhereRows(n, Serial)
			if err != nil || k == nil || variant != "rows" {
				t.Fatalf("%s: kernel %v %q, error %v", what, k != nil, variant, err)
			}
			ins := []tensor.Tensor{tensor.New(tensor.Bool, c.cond...), tensor.New(dt, c.x...), tensor.New(dt, c.y...)}
			for _, in := range ins {
				for i := range in.Data {
					in.Data[i] = byte(r.IntN(256))
				}
			}
			for i := range ins[0].Data {
				ins[0].Data[i] = byte(r.IntN(2)) * byte(1+r.IntN(3)) // any non-zero byte is true
			}
			if dt == tensor.Bool {
				for _, in := range ins[1:] {
					for i := range in.Data {
						in.Data[i] &= 1
					}
				}
			}
			got, want := vtRun(t, n, k, ins...), vtReference(t, n, ins...)
			if !bytes.Equal(got.Data, want.Data) {
				t.Fatalf("%s: rows kernel differs from the reference", what)
			}
			if tensor.Shape(c.y).Equal(tensor.Shape(c.out)) { // in place over y
				y := ins[2]
				if err := k(ins, y); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(y.Data, want.Data) {
					t.Fatalf("%s: in place over y differs from the reference", what)
				}
			}
		}
	}
	for _, c := range [][3][]int{{{2, 5}, {2, 5}, {2, 5}}, {{2, 1}, {2, 1}, {2, 5}}, {{1}, {3, 1}, {3, 4}}} {
		g := graph.New()
		n := g.Where(g.Input("c", tensor.Bool, c[0]...), g.Input("x", tensor.F32, c[1]...), g.Input("y", tensor.F32, c[2]...))
		if k, _, _ := prepareWhereRows(n, Serial); k != nil {
			t.Errorf("cond %v x %v y %v: the rows kernel took it", c[0], c[1], c[2])
		}
	}
}
