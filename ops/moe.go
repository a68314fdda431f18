package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// Reference kernels of the mixture-of-experts ops: every token slot's
// product in float64 from its expert's weights, rounded once. The fast
// kernel (moe_fast.go) computes the same rows grouped by expert.

func init() {
	Register(Entry{Op: graph.OpGroupedMatMul, DTypes: nativeFloats, Reference: prepareGroupedMatMul, Tol: 1e-5})
	// OpMoE's fast kernel rounds the gate, up and hidden rows to float32
	// between its three products, as any float32 SwiGLU MLP does.
	Register(Entry{Op: graph.OpMoE, DTypes: nativeFloats, Reference: prepareMoE, Tol: 1e-4})
}

// expertOf reads expert id j of ids and checks it against e experts.
func expertOf(op graph.Op, ids indices, j, k, e int) (int, error) {
	id := ids.at(j)
	if id < 0 || id >= e {
		return 0, fmt.Errorf("%v: expert id %d (token %d, slot %d) is out of range [0, %d)", op, id, j/k, j%k, e)
	}
	return id, nil
}

// moeDims are the sizes of a routed op: T tokens, k slots each, E
// experts.
type moeDims struct{ t, k, e int }

func moeDimsOf(ids, w *graph.Node) moeDims {
	return moeDims{t: ids.Shape[0], k: ids.Shape[1], e: w.Shape[0]}
}

// floatKernel picks f32 or f64 by the node's dtype.
func floatKernel(n *graph.Node, f32, f64 Kernel) Kernel {
	if n.DType == tensor.F64 {
		return sizeChecked(n, f64)
	}
	return sizeChecked(n, f32)
}

func prepareGroupedMatMul(n *graph.Node) (Kernel, error) {
	return floatKernel(n, groupedMatMulRef[float32](n), groupedMatMulRef[float64](n)), nil
}

func groupedMatMulRef[T float32 | float64](n *graph.Node) Kernel {
	x, w := n.Inputs[0], n.Inputs[1]
	d := moeDimsOf(n.Inputs[2], w)
	kk, nn := w.Shape[1], w.Shape[2]
	perSlot := x.Shape.Rank() == 3 // a row per slot, else per token
	acc := make([]float64, nn)
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		ids := indicesOf(ins[2].DType, ins[2].Data)
		xs, ws, ys := tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), tensor.Elems[T](out.Data)
		for j := range d.t * d.k {
			e, err := expertOf(n.Op, ids, j, d.k, d.e)
			if err != nil {
				return err
			}
			row := j / d.k
			if perSlot {
				row = j
			}
			clear(acc)
			matVec(acc, xs[row*kk:(row+1)*kk], ws[e*kk*nn:(e+1)*kk*nn])
			for c, v := range acc {
				ys[j*nn+c] = T(v)
			}
		}
		return nil
	}
}

// matVec adds x·w (w row-major [len(x), len(acc)]) to acc in float64.
func matVec[X, W float32 | float64](acc []float64, x []X, w []W) {
	nn := len(acc)
	for p, xv := range x {
		for c, wv := range w[p*nn : (p+1)*nn] {
			acc[c] += float64(xv) * float64(wv)
		}
	}
}

func prepareMoE(n *graph.Node) (Kernel, error) {
	return floatKernel(n, moeRef[float32](n), moeRef[float64](n)), nil
}

func moeRef[T float32 | float64](n *graph.Node) Kernel {
	d := moeDimsOf(n.Inputs[1], n.Inputs[3])
	h, f := n.Inputs[3].Shape[1], n.Inputs[3].Shape[2]
	silu := asm.ActSilu.Formula()
	g, u, y, sum := make([]float64, f), make([]float64, f), make([]float64, h), make([]float64, h)
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		ids := indicesOf(ins[1].DType, ins[1].Data)
		xs, wts, ys := tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[2].Data), tensor.Elems[T](out.Data)
		gate, up, down := tensor.Elems[T](ins[3].Data), tensor.Elems[T](ins[4].Data), tensor.Elems[T](ins[5].Data)
		for t := range d.t {
			clear(sum)
			x := xs[t*h : (t+1)*h]
			for s := range d.k {
				j := t*d.k + s
				e, err := expertOf(n.Op, ids, j, d.k, d.e)
				if err != nil {
					return err
				}
				clear(g)
				clear(u)
				clear(y)
				matVec(g, x, gate[e*h*f:(e+1)*h*f])
				matVec(u, x, up[e*h*f:(e+1)*h*f])
				for i := range g {
					g[i] = silu(g[i]) * u[i]
				}
				matVec(y, g, down[e*f*h:(e+1)*f*h])
				for i, v := range y {
					sum[i] += float64(wts[j]) * v
				}
			}
			for i, v := range sum {
				ys[t*h+i] = T(v)
			}
		}
		return nil
	}
}
