package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// FusedMatMul's reference: the MatMul formula (float64 sums in k order,
// rounded once) over transposed or plain operands, then the epilogue's
// steps with the Add and activation formulas, each rounded, as the unfused
// MatMul, Add and activation kernels do.

func init() {
	Register(Entry{Op: graph.OpFusedMatMul, DTypes: nativeFloats, Reference: prepareFusedMatMul, Tol: 1e-5})
}

// fusedMatMulPlan is a batched product with element strides, plus the
// epilogue.
type fusedMatMulPlan struct {
	m, k, n        int
	aOff, bOff     []int // per batch entry
	aRow, aCol     int   // strides of op(A)[i, q]
	bRow, bCol     int   // strides of op(B)[q, j]
	bias, residual int   // input index, or -1
	act            func(float64) float64
	ep             graph.Epilogue
}

// matmulGeometry resolves the product of a FusedMatMul node.
func matmulGeometry(nd *graph.Node) (*fusedMatMulPlan, error) {
	at := nd.Attrs
	as, bs := nd.Inputs[0].Shape, nd.Inputs[1].Shape
	if (at.TransA && as.Rank() < 2) || (at.TransB && bs.Rank() < 2) {
		return nil, fmt.Errorf("transposed operand of rank < 2")
	}
	ea, eb := as, bs
	if at.TransA {
		ea = swapLastDims(as)
	}
	if at.TransB {
		eb = swapLastDims(bs)
	}
	batch, m, k, n, out, err := graph.MatMulDims(ea, eb)
	if err != nil {
		return nil, err
	}
	if !out.Equal(nd.Shape) {
		return nil, fmt.Errorf("result shape %v, want %v", nd.Shape, out)
	}
	p := &fusedMatMulPlan{m: m, k: k, n: n, bias: -1, residual: -1, ep: at.Epilogue,
		aRow: k, aCol: 1, bRow: n, bCol: 1}
	if at.TransA { // stored [k, m]
		p.aRow, p.aCol = 1, m
	}
	if at.TransB { // stored [n, k]
		p.bRow, p.bCol = 1, k
	}
	p.aOff = batchOffsets(as[:max(as.Rank()-2, 0)], batch, m*k)
	p.bOff = batchOffsets(bs[:max(bs.Rank()-2, 0)], batch, k*n)
	ep := at.Epilogue
	if len(nd.Inputs) != 2+ep.Inputs() {
		return nil, fmt.Errorf("%d inputs for epilogue %+v", len(nd.Inputs), ep)
	}
	next := 2
	if ep.Bias {
		if nd.Inputs[next].Shape.NumElements() != n {
			return nil, fmt.Errorf("bias %v for %d columns", nd.Inputs[next].Shape, n)
		}
		p.bias, next = next, next+1
	}
	if ep.Residual {
		if !nd.Inputs[next].Shape.Equal(nd.Shape) {
			return nil, fmt.Errorf("residual %v, want %v", nd.Inputs[next].Shape, nd.Shape)
		}
		p.residual = next
	}
	if ep.Act != graph.OpInvalid {
		if !graph.IsEpilogueAct(ep.Act) {
			return nil, fmt.Errorf("activation %v", ep.Act)
		}
		p.act, err = floatUnaryFunc(&graph.Node{Op: ep.Act})
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

func swapLastDims(s tensor.Shape) tensor.Shape {
	t := s.Clone()
	t[len(t)-1], t[len(t)-2] = t[len(t)-2], t[len(t)-1]
	return t
}

func prepareFusedMatMul(nd *graph.Node) (Kernel, error) {
	dt, err := computeDType(nd, 2, 4, 4)
	if err != nil {
		return nil, err
	}
	p, err := matmulGeometry(nd)
	if err != nil {
		return nil, err
	}
	return bindFloat(nd, dt, p, runFusedMatMul[float32], runFusedMatMul[float64]), nil
}

func runFusedMatMul[T float32 | float64](p *fusedMatMulPlan, ins []tensor.Tensor, out tensor.Tensor) {
	a, b, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), tensor.Elems[T](out.Data)
	var bias, res []T
	if p.bias >= 0 {
		bias = tensor.Elems[T](ins[p.bias].Data)
	}
	if p.residual >= 0 {
		res = tensor.Elems[T](ins[p.residual].Data)
	}
	m, k, n := p.m, p.k, p.n
	for bi := range p.aOff {
		am, bm := a[p.aOff[bi]:], b[p.bOff[bi]:]
		for i := range m {
			for j := range n {
				var s float64
				for q := range k {
					s += float64(am[i*p.aRow+q*p.aCol]) * float64(bm[q*p.bRow+j*p.bCol])
				}
				v := T(s)
				if bias != nil {
					v = T(float64(v) + float64(bias[j]))
				}
				if p.act != nil {
					v = T(p.act(float64(v)))
				}
				o := (bi*m+i)*n + j
				if res != nil {
					v = T(float64(v) + float64(res[o]))
				}
				y[o] = v
			}
		}
	}
}
