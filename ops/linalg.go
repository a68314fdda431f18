package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// The reference kernels of the compute ops (linalg, norm, conv, attention)
// take F32 or F64 natively and accumulate in float64 whatever the storage
// type, so that the F32 reference is the oracle a fast kernel is judged by.

var nativeFloats = []tensor.DType{tensor.F32, tensor.F64}

func init() {
	Register(Entry{Op: graph.OpMatMul, DTypes: nativeFloats, Reference: prepareMatMul, Tol: 1e-5})
	Register(Entry{Op: graph.OpGemm, DTypes: nativeFloats, Reference: prepareGemm, Tol: 1e-5})
}

// computeDType checks the input count of a compute node and that the node
// and its first same inputs share one native float dtype, which it returns.
func computeDType(n *graph.Node, minIn, maxIn, same int) (tensor.DType, error) {
	if len(n.Inputs) < minIn || len(n.Inputs) > maxIn {
		return 0, fmt.Errorf("%d inputs, want %d to %d", len(n.Inputs), minIn, maxIn)
	}
	dt := n.Inputs[0].DType
	if dt != tensor.F32 && dt != tensor.F64 {
		return 0, fmt.Errorf("dtype %v has no reference kernel", dt)
	}
	if n.DType != dt {
		return 0, fmt.Errorf("result dtype %v differs from input dtype %v", n.DType, dt)
	}
	for i, in := range n.Inputs[:min(same, len(n.Inputs))] {
		if in.DType != dt {
			return 0, fmt.Errorf("input %d has dtype %v, want %v", i, in.DType, dt)
		}
	}
	return dt, nil
}

// bindFloat returns the instantiation of run for dt bound to plan p. The
// kernel first checks that the tensors it is given have the dtypes and
// byte sizes of n's inputs and result, so a wrong buffer is an error
// rather than an index panic or a silently short result.
func bindFloat[P any](n *graph.Node, dt tensor.DType, p P, f32, f64 func(P, []tensor.Tensor, tensor.Tensor)) Kernel {
	run := f32
	if dt == tensor.F64 {
		run = f64
	}
	// The expected dtype and byte size of every input, then of the result.
	dts := make([]tensor.DType, 0, len(n.Inputs)+1)
	sizes := make([]int, 0, len(n.Inputs)+1)
	for _, v := range append(n.Inputs[:len(n.Inputs):len(n.Inputs)], n) {
		dts = append(dts, v.DType)
		sizes = append(sizes, v.Shape.NumElements()*v.DType.Size())
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if len(ins) != len(dts)-1 {
			return fmt.Errorf("%d inputs, want %d", len(ins), len(dts)-1)
		}
		for i := range dts {
			got := out
			if i < len(ins) {
				got = ins[i]
			}
			if got.DType != dts[i] || len(got.Data) != sizes[i] {
				what := "result"
				if i < len(ins) {
					what = fmt.Sprint("input ", i)
				}
				return fmt.Errorf("%s is %v with %d bytes, want %v with %d", what, got.DType, len(got.Data), dts[i], sizes[i])
			}
		}
		run(p, ins, out)
		return nil
	}
}

// batchOffsets lists, for every index of the broadcast batch shape, the
// element offset of the matching matrix in an operand whose own batch dims
// are own and whose matrices hold size elements.
func batchOffsets(own, batch tensor.Shape, size int) []int {
	st := tensor.BroadcastStrides(own, batch)
	offs := make([]int, batch.NumElements())
	for i := range offs {
		r, off := i, 0
		for d := len(batch) - 1; d >= 0; d-- {
			off += r % batch[d] * st[d]
			r /= batch[d]
		}
		offs[i] = off * size
	}
	return offs
}

type matmulPlan struct {
	m, k, n    int
	aOff, bOff []int // per batch index: where its A and B matrices start
}

func prepareMatMul(nd *graph.Node) (Kernel, error) {
	dt, err := computeDType(nd, 2, 2, 2)
	if err != nil {
		return nil, err
	}
	p, err := newMatMulPlan(nd)
	if err != nil {
		return nil, err
	}
	return bindFloat(nd, dt, p, runMatMul[float32, float64], runMatMul[float64, float64]), nil
}

// newMatMulPlan resolves the numpy matmul of a node's first two inputs
// and checks the node's shape against it.
func newMatMulPlan(nd *graph.Node) (*matmulPlan, error) {
	a, b := nd.Inputs[0].Shape, nd.Inputs[1].Shape
	batch, m, k, n, out, err := graph.MatMulDims(a, b)
	if err != nil {
		return nil, err
	}
	if !out.Equal(nd.Shape) {
		return nil, fmt.Errorf("result shape %v, want %v", nd.Shape, out)
	}
	// A 1-D operand has no batch dims; a promoted one is a single matrix.
	p := &matmulPlan{m: m, k: k, n: n}
	p.aOff = batchOffsets(a[:max(a.Rank()-2, 0)], batch, m*k)
	p.bOff = batchOffsets(b[:max(b.Rank()-2, 0)], batch, k*n)
	return p, nil
}

// runMatMul is the direct definition, accumulating in A: float64 for
// the float kernels, int32 (wrapping, as ONNX's MatMulInteger allows) for
// the integer one.
func runMatMul[T float32 | float64 | int32, A float64 | int32](p *matmulPlan, ins []tensor.Tensor, out tensor.Tensor) {
	a, b, c := tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), tensor.Elems[T](out.Data)
	m, k, n := p.m, p.k, p.n
	for bi := range p.aOff {
		am, bm, cm := a[p.aOff[bi]:], b[p.bOff[bi]:], c[bi*m*n:]
		for i := range m {
			for j := range n {
				var s A
				for q := range k {
					s += A(am[i*k+q]) * A(bm[q*n+j])
				}
				cm[i*n+j] = T(s)
			}
		}
	}
}

type gemmPlan struct {
	m, n, k     int
	aRow, aCol  int // element strides of op(A)[i, q] along i and q
	bRow, bCol  int // element strides of op(B)[q, j] along q and j
	hasC        bool
	cRow, cCol  int // strides of C broadcast to [M, N]
	alpha, beta float64
}

func prepareGemm(nd *graph.Node) (Kernel, error) {
	dt, err := computeDType(nd, 2, 3, 3)
	if err != nil {
		return nil, err
	}
	a, b, at := nd.Inputs[0].Shape, nd.Inputs[1].Shape, nd.Attrs
	if a.Rank() != 2 || b.Rank() != 2 {
		return nil, fmt.Errorf("operands %v and %v must be 2-D", a, b)
	}
	p := &gemmPlan{m: a[0], k: a[1], aRow: a[1], aCol: 1, alpha: float64(at.Alpha), beta: float64(at.Beta)}
	if at.TransA {
		p.m, p.k, p.aRow, p.aCol = a[1], a[0], 1, a[1]
	}
	k2 := b[0]
	p.n, p.bRow, p.bCol = b[1], b[1], 1
	if at.TransB {
		k2, p.n, p.bRow, p.bCol = b[1], b[0], 1, b[1]
	}
	if k2 != p.k {
		return nil, fmt.Errorf("inner dims differ (%d vs %d)", p.k, k2)
	}
	mn := tensor.Shape{p.m, p.n}
	if !nd.Shape.Equal(mn) {
		return nil, fmt.Errorf("result shape %v, want %v", nd.Shape, mn)
	}
	if len(nd.Inputs) == 3 {
		c := nd.Inputs[2].Shape
		if s, err := tensor.Broadcast(c, mn); err != nil || !s.Equal(mn) {
			return nil, fmt.Errorf("C %v does not broadcast to %v", c, mn)
		}
		st := tensor.BroadcastStrides(c, mn)
		p.hasC, p.cRow, p.cCol = true, st[0], st[1]
	}
	return bindFloat(nd, dt, p, runGemm[float32], runGemm[float64]), nil
}

func runGemm[T float32 | float64](p *gemmPlan, ins []tensor.Tensor, out tensor.Tensor) {
	a, b, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), tensor.Elems[T](out.Data)
	var c []T
	if p.hasC {
		c = tensor.Elems[T](ins[2].Data)
	}
	for i := range p.m {
		for j := range p.n {
			var s float64
			for q := range p.k {
				s += float64(a[i*p.aRow+q*p.aCol]) * float64(b[q*p.bRow+j*p.bCol])
			}
			s *= p.alpha
			if p.hasC {
				s += p.beta * float64(c[i*p.cRow+j*p.cCol])
			}
			y[i*p.n+j] = T(s)
		}
	}
}
