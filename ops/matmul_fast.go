package ops

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func init() {
	RegisterFast(graph.OpMatMul, prepareMatMulGo)
	RegisterFast(graph.OpGemm, prepareGemmGo)
}

// prepareMatMulGo handles F32 MatMul of any batch broadcast with the
// portable blocked kernel, one product per batch entry.
func prepareMatMulGo(n *graph.Node, env Env) (Kernel, string, error) {
	if n.DType != tensor.F32 {
		return nil, "", nil
	}
	as, bs := n.Inputs[0].Shape, n.Inputs[1].Shape
	batch, m, k, nn, _, err := graph.MatMulDims(as, bs)
	if err != nil {
		return nil, "", err
	}
	// Element offsets of A and B for every batch entry (broadcast dims
	// repeat an operand).
	nb := batch.NumElements()
	offA, offB := make([]int, nb), make([]int, nb)
	if nb > 0 {
		pa, pb := batchPart(as), batchPart(bs)
		sa := tensor.BroadcastStrides(pa, batch)
		sb := tensor.BroadcastStrides(pb, batch)
		idx := make([]int, len(batch))
		for e := range nb {
			for d := range idx {
				offA[e] += idx[d] * sa[d] * m * k
				offB[e] += idx[d] * sb[d] * k * nn
			}
			for d := len(idx) - 1; d >= 0; d-- {
				if idx[d]++; idx[d] < batch[d] {
					break
				}
				idx[d] = 0
			}
		}
	}
	g := &gemmArgs{m: m, n: nn, k: k, lda: k, ldb: nn, ldc: nn}
	body := g.rows
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		a, b, c := ins[0].F32(), ins[1].F32(), out.F32()
		for e := range nb {
			g.a, g.b, g.c = a[offA[e]:], b[offB[e]:], c[e*m*nn:]
			g.run(env, body)
		}
		return nil
	}, "go", nil
}

// batchPart is the batch dims of a matmul operand (none for 1-D or 2-D).
func batchPart(s tensor.Shape) tensor.Shape {
	if s.Rank() <= 2 {
		return nil
	}
	return s[:s.Rank()-2]
}

// prepareGemmGo handles F32 Gemm: a transposed operand is copied into
// scratch first (O(k·n), small next to the product), then alpha and the
// beta·C term are applied on the result rows.
func prepareGemmGo(n *graph.Node, env Env) (Kernel, string, error) {
	if n.DType != tensor.F32 {
		return nil, "", nil
	}
	at := n.Attrs
	as := n.Inputs[0].Shape
	m, k := as[0], as[1]
	if at.TransA {
		m, k = k, m
	}
	nn := n.Shape[1]
	var ta, tb []float32
	if at.TransA {
		ta = make([]float32, m*k)
	}
	if at.TransB {
		tb = make([]float32, k*nn)
	}
	var cStrides []int
	if len(n.Inputs) == 3 {
		cStrides = tensor.BroadcastStrides(n.Inputs[2].Shape, n.Shape)
	}
	g := &gemmArgs{m: m, n: nn, k: k, lda: k, ldb: nn, ldc: nn}
	body := g.rows
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		a, b, c := ins[0].F32(), ins[1].F32(), out.F32()
		if ta != nil {
			transpose2(ta, a, k, m)
			a = ta
		}
		if tb != nil {
			transpose2(tb, b, nn, k)
			b = tb
		}
		g.a, g.b, g.c = a, b, c
		g.run(env, body)
		if at.Alpha != 1 {
			for i := range c {
				c[i] *= at.Alpha
			}
		}
		if cStrides != nil && at.Beta != 0 {
			cv := ins[2].F32()
			for i := range m {
				for j := range nn {
					c[i*nn+j] += at.Beta * cv[i*cStrides[0]+j*cStrides[1]]
				}
			}
		}
		return nil
	}, "go", nil
}

// transpose2 writes the transpose of src [rows×cols] into dst [cols×rows].
func transpose2(dst, src []float32, rows, cols int) {
	for i := range rows {
		for j := range cols {
			dst[j*rows+i] = src[i*cols+j]
		}
	}
}
