package ptxemu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// The routed sweep runs ptx.EmitRouted's kernels against the reference
// kernels (ops.Interpret in float64 over widened inputs): GroupedMatMul
// over rows and slots, MoE with a token width past one block (two
// columns per thread) and hidden widths with a partial last chunk, F32,
// F16 and BF16, I32 and I64 ids; and expert ids outside [0, E), which
// make exactly the outputs they feed NaN and read no weights.

// routedTol: dots of up to ~1000 f32 products of values in [-3, 3],
// against float64; an indexing mistake is off by O(1).
func routedTol(dt tensor.DType) tol {
	tl := tolFor(dt)
	return tol{abs: 2e-3, rel: tl.rel + 1e-4}
}

// expertIDs makes [t, k] ids in [0, e) of dt, a token's slots distinct
// (as TopK gives) when k ≤ e.
func expertIDs(r *rand.Rand, dt tensor.DType, t, k, e int) tensor.Tensor {
	v := make([]float64, 0, t*k)
	for range t {
		for _, id := range r.Perm(e)[:k] {
			v = append(v, float64(id))
		}
	}
	ids, err := tensor.FromFloat64s(dt, tensor.Shape{t, k}, v)
	if err != nil {
		panic(err)
	}
	return ids
}

// refRouted runs build over widened copies of ins (ids kept) and rounds
// the result to dt.
func refRouted(t *testing.T, dt tensor.DType, ins []tensor.Tensor, build func(g *graph.Graph, x []*graph.Node) *graph.Node) tensor.Tensor {
	g := graph.New()
	feeds := map[string]tensor.Tensor{}
	var xs []*graph.Node
	for i, in := range ins {
		if in.DType.IsFloat() {
			in = widen(in)
		}
		nm := fmt.Sprintf("x%d", i)
		feeds[nm] = in
		xs = append(xs, g.Input(nm, in.DType, in.Shape...))
	}
	g.Output(build(g, xs))
	return castTo(interpret(t, g, feeds)[0], dt)
}

func TestRoutedSweep(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(26, 4))
	for _, dt := range floatDTypes {
		for _, idt := range []tensor.DType{tensor.I32, tensor.I64} {
			for _, c := range []struct{ t, k, e, in, out int }{{6, 2, 3, 40, 33}, {1, 3, 4, 7, 5}, {9, 1, 2, 300, 3}} {
				for _, perSlot := range []bool{false, true} {
					name := fmt.Sprintf("gmm_%v_%v_%d_%v", dt, idt, c.in, perSlot)
					xs := []int{c.t, c.in}
					if perSlot {
						xs = []int{c.t, c.k, c.in}
					}
					x, w := randTensor(r, dt, false, xs...), randTensor(r, dt, false, c.e, c.in, c.out)
					ids := expertIDs(r, idt, c.t, c.k, c.e)
					k, err := ptx.EmitRouted(&ptx.Routed{Routed: kdesc.Routed{Name: name, Op: graph.OpGroupedMatMul, DType: dt, IDs: idt,
						T: c.t, K: c.k, E: c.e, In: c.in, Out: c.out, PerSlot: perSlot}, Block: 64})
					if err != nil {
						t.Fatal(err)
					}
					out := sentinel(dt, c.t, c.k, c.out)
					if err := runKernel(t, k, Options{}, out, x, w, ids); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					want := refRouted(t, dt, []tensor.Tensor{x, w, ids}, func(g *graph.Graph, n []*graph.Node) *graph.Node {
						return g.GroupedMatMul(n[0], n[1], n[2])
					})
					compareTensors(t, name, out, want, routedTol(dt))
				}
			}
			for _, c := range []struct{ t, k, e, h, f int }{{5, 2, 4, 24, 48}, {1, 3, 8, 16, 40}, {2, 2, 3, 1040, 9}, {3, 1, 2, 33, 70}} {
				name := fmt.Sprintf("moe_%v_%v_%d_%d", dt, idt, c.h, c.f)
				ins := []tensor.Tensor{randTensor(r, dt, false, c.t, c.h), expertIDs(r, idt, c.t, c.k, c.e), randTensor(r, dt, false, c.t, c.k),
					scaled(randTensor(r, dt, false, c.e, c.h, c.f), c.h), scaled(randTensor(r, dt, false, c.e, c.h, c.f), c.h),
					scaled(randTensor(r, dt, false, c.e, c.f, c.h), c.f)}
				k, err := ptx.EmitRouted(&ptx.Routed{Routed: kdesc.Routed{Name: name, Op: graph.OpMoE, DType: dt, IDs: idt,
					T: c.t, K: c.k, E: c.e, In: c.h, Out: c.h, Hidden: c.f}})
				if err != nil {
					t.Fatal(err)
				}
				out := sentinel(dt, c.t, c.h)
				if err := runKernel(t, k, Options{}, out, ins...); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				want := refRouted(t, dt, ins, func(g *graph.Graph, n []*graph.Node) *graph.Node {
					return g.MoEExperts(n[0], n[1], n[2], n[3], n[4], n[5])
				})
				compareTensors(t, name, out, want, routedTol(dt))
			}
		}
	}
}

// scaled divides a float tensor by √n, so products summed over n terms
// stay O(1).
func scaled(x tensor.Tensor, n int) tensor.Tensor {
	v := x.Float64s()
	for i := range v {
		v[i] /= math.Sqrt(float64(n))
	}
	y, err := tensor.FromFloat64s(x.DType, x.Shape, v)
	if err != nil {
		panic(err)
	}
	return y
}

// TestRoutedBadIDs: an expert id outside [0, E) (negative, E, huge) makes
// NaN exactly the outputs it feeds (its slot's row in GroupedMatMul, its
// token's row in MoE); the other tokens match the reference run with
// their ids alone.
func TestRoutedBadIDs(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(26, 5))
	const T, K, E, H, F = 4, 2, 3, 8, 12
	for _, idt := range []tensor.DType{tensor.I32, tensor.I64} {
		// Token 1 has -1 and E, token 2 1e9 in slot 0; tokens 0 and 3 are good.
		bad, err := tensor.FromFloat64s(idt, tensor.Shape{T, K}, []float64{2, 0, -1, E, 1e9, 0, 1, 2})
		if err != nil {
			t.Fatal(err)
		}
		x, w := randTensor(r, tensor.F32, false, T, H), randTensor(r, tensor.F32, false, E, H, F)
		k, err := ptx.EmitRouted(&ptx.Routed{Routed: kdesc.Routed{Name: "gmm_bad_" + idt.String(), Op: graph.OpGroupedMatMul, DType: tensor.F32, IDs: idt,
			T: T, K: K, E: E, In: H, Out: F}})
		if err != nil {
			t.Fatal(err)
		}
		out := sentinel(tensor.F32, T, K, F)
		if err := runKernel(t, k, Options{}, out, x, w, bad); err != nil {
			t.Fatal(err)
		}
		// The bad ids replaced by 0, for the reference of the good slots.
		fv := bad.Float64s()
		for i, v := range fv {
			if v < 0 || v >= E {
				fv[i] = 0
			}
		}
		fixed, err := tensor.FromFloat64s(idt, tensor.Shape{T, K}, fv)
		if err != nil {
			t.Fatal(err)
		}
		want := refRouted(t, tensor.F32, []tensor.Tensor{x, w, fixed}, func(g *graph.Graph, n []*graph.Node) *graph.Node {
			return g.GroupedMatMul(n[0], n[1], n[2])
		}).Float64s()
		for s, v := range bad.Float64s() {
			if v < 0 || v >= E {
				for o := range F {
					want[s*F+o] = math.NaN()
				}
			}
		}
		wt, _ := tensor.FromFloat64s(tensor.F32, tensor.Shape{T, K, F}, want)
		compareTensors(t, "gmm bad ids "+idt.String(), out, wt, routedTol(tensor.F32))

		rw := randTensor(r, tensor.F32, false, T, K)
		gate, up, down := randTensor(r, tensor.F32, false, E, H, F), randTensor(r, tensor.F32, false, E, H, F), randTensor(r, tensor.F32, false, E, F, H)
		k, err = ptx.EmitRouted(&ptx.Routed{Routed: kdesc.Routed{Name: "moe_bad_" + idt.String(), Op: graph.OpMoE, DType: tensor.F32, IDs: idt,
			T: T, K: K, E: E, In: H, Out: H, Hidden: F}})
		if err != nil {
			t.Fatal(err)
		}
		mo := sentinel(tensor.F32, T, H)
		if err := runKernel(t, k, Options{}, mo, x, bad, rw, gate, up, down); err != nil {
			t.Fatal(err)
		}
		mw := refRouted(t, tensor.F32, []tensor.Tensor{x, fixed, rw, gate, up, down}, func(g *graph.Graph, n []*graph.Node) *graph.Node {
			return g.MoEExperts(n[0], n[1], n[2], n[3], n[4], n[5])
		}).Float64s()
		for tok := range T {
			if tok == 1 || tok == 2 {
				for h := range H {
					mw[tok*H+h] = math.NaN()
				}
			}
		}
		mt, _ := tensor.FromFloat64s(tensor.F32, tensor.Shape{T, H}, mw)
		compareTensors(t, "moe bad ids "+idt.String(), mo, mt, routedTol(tensor.F32))
	}
}

// TestMoEResidencySplit: the split kernel (ptx.Routed.Resident) with
// only some experts' weights on the device (compacted, remap naming each
// expert's row or -1) and the other experts' slots supplied as addend
// (here from the reference over the same routing with the resident
// slots' weights zeroed, as the host side computes them) gives the
// whole layer's result, for several masks, I32 and I64 ids.
func TestMoEResidencySplit(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(26, 7))
	const T, K, E, H, F = 7, 2, 5, 24, 40
	for _, idt := range []tensor.DType{tensor.I32, tensor.I64} {
		x, ids, rw := randTensor(r, tensor.F32, false, T, H), expertIDs(r, idt, T, K, E), randTensor(r, tensor.F32, false, T, K)
		gate, up := scaled(randTensor(r, tensor.F32, false, E, H, F), H), scaled(randTensor(r, tensor.F32, false, E, H, F), H)
		down := scaled(randTensor(r, tensor.F32, false, E, F, H), F)
		moe := func(g *graph.Graph, n []*graph.Node) *graph.Node {
			return g.MoEExperts(n[0], n[1], n[2], n[3], n[4], n[5])
		}
		want := refRouted(t, tensor.F32, []tensor.Tensor{x, ids, rw, gate, up, down}, moe)
		for mi, mask := range [][]bool{{true, false, true, false, false}, {false, false, false, false, true}, {true, true, true, true, true}} {
			name := fmt.Sprintf("split_%v_%d", idt, mi)
			var remap []int32
			var rows []int
			for e, res := range mask {
				if res {
					remap = append(remap, int32(len(rows)))
					rows = append(rows, e)
				} else {
					remap = append(remap, -1)
				}
			}
			rm, _ := tensor.FromI32(tensor.Shape{E}, remap)
			// The host's part: the non-resident slots alone.
			hw := rw.Float64s()
			for s, e := range ids.Float64s() {
				if mask[int(e)] {
					hw[s] = 0
				}
			}
			hostW, _ := tensor.FromFloat64s(tensor.F32, rw.Shape, hw)
			addend := refRouted(t, tensor.F32, []tensor.Tensor{x, ids, hostW, gate, up, down}, moe)
			k, err := ptx.EmitRouted(&ptx.Routed{Routed: kdesc.Routed{Name: name, Op: graph.OpMoE, DType: tensor.F32, IDs: idt,
				T: T, K: K, E: E, In: H, Out: H, Hidden: F}, Resident: len(rows)})
			if err != nil {
				t.Fatal(err)
			}
			out := sentinel(tensor.F32, T, H)
			if err := runKernel(t, k, Options{}, out, x, ids, rw, compact(gate, rows), compact(up, rows), compact(down, rows), rm, addend); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			compareTensors(t, name, out, want, routedTol(tensor.F32))
		}
	}
}

// compact stacks the rows (experts) of w listed in rows.
func compact(w tensor.Tensor, rows []int) tensor.Tensor {
	per := len(w.Data) / w.Shape[0]
	shape := append(tensor.Shape{len(rows)}, w.Shape[1:]...)
	c := tensor.New(w.DType, shape...)
	for i, e := range rows {
		copy(c.Data[i*per:], w.Data[e*per:(e+1)*per])
	}
	return c
}
