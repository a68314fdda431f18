package ops

import (
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// MatMulInteger's int32 CPU path, for the forms the int8 GEMM path
// (quant_product_fast.go) does not take (a batched B, zero points that
// vary along more than rows or columns): the operands centred into int32 as the reference does,
// each B matrix transposed so that every output is a contiguous dot
// product, and the output rows of all batches split across the workers.
// The int32 sums wrap as the reference's do, so results are bit-exact.

// mmIntGrain is the multiply-adds a chunk of rows should hold at least.
const mmIntGrain = 1 << 15

func prepareMatMulIntegerInt32(n *graph.Node, env Env) (Kernel, string, error) {
	a, b, err := integerOperands(n, func(i int) tensor.Shape { return n.Inputs[2+i].Shape })
	if err != nil {
		return nil, "", nil // the reference reports it
	}
	p, err := newMatMulPlan(n)
	if err != nil || p.k*p.n == 0 {
		return nil, "", nil
	}
	bt := make([]int32, len(b.dst)) // each k×n matrix of b.dst as n×k
	rows := len(p.aOff) * p.m
	var c []int32 // the output of the current run, for body
	body := func(lo, hi int) {
		for r := lo; r < hi; r++ {
			bi, i := r/p.m, r%p.m
			ar := a.dst[p.aOff[bi]+i*p.k:][:p.k]
			bm := bt[p.bOff[bi]:]
			cr := c[r*p.n:][:p.n]
			for j := range cr {
				cr[j] = dotInt32(ar, bm[j*p.k:][:p.k])
			}
		}
	}
	grain := max(1, mmIntGrain/(p.k*p.n))
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		a.run(ins[0], ins[2])
		b.run(ins[1], ins[3])
		for off := 0; off < len(bt); off += p.k * p.n {
			src, dst := b.dst[off:off+p.k*p.n], bt[off:off+p.k*p.n]
			for q := range p.k {
				for j := range p.n {
					dst[j*p.k+q] = src[q*p.n+j]
				}
			}
		}
		c = tensor.Elems[int32](out.Data)
		env.For(rows, grain, body)
		return nil
	}), "int32", nil
}

// dotInt32 is Σ x[i]·y[i] with int32 wrap-around, four sums interleaved
// (integer addition is associative, so the order changes nothing).
func dotInt32(x, y []int32) int32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return s0 + s1 + s2 + s3
}
