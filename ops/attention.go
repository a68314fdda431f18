package ops

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func init() {
	Register(Entry{Op: graph.OpAttention, DTypes: nativeFloats, Reference: prepareAttention, Tol: 1e-5})
	Register(Entry{Op: graph.OpRoPE, DTypes: nativeFloats, Reference: prepareRoPE, Tol: 1e-6})
}

// Kinds of attention mask.
const (
	maskNone = iota
	maskAdd  // same float dtype as q, added to the scaled scores
	maskBool // true keeps a position, false removes it
)

type attentionPlan struct {
	b, h, hk, sq, sk, d, dv int
	group                   int // query heads per kv head
	scale                   float64
	causal                  bool
	mask                    int
	kvLen                   bool      // the last input is I64 [B], the keys in use per batch
	mst                     []int     // mask strides broadcast to [B, H, Sq, Sk]
	scores                  []float64 // one row of Sk scores: the kernel's scratch
}

func prepareAttention(nd *graph.Node) (Kernel, error) {
	dt, err := computeDType(nd, 3, 5, 3)
	if err != nil {
		return nil, err
	}
	ins := nd.Inputs
	if nd.Attrs.KVLen {
		n := ins[len(ins)-1]
		if len(ins) < 4 || n.DType != tensor.I64 || !n.Shape.Equal(tensor.Shape{ins[0].Shape[0]}) {
			return nil, fmt.Errorf("KVLen: the last input must be I64 [batch]")
		}
		ins = ins[:len(ins)-1]
	}
	if len(ins) > 4 {
		return nil, fmt.Errorf("%d inputs without KVLen, want 3 or 4", len(ins))
	}
	q, k, v := nd.Inputs[0].Shape, nd.Inputs[1].Shape, nd.Inputs[2].Shape
	if q.Rank() != 4 || k.Rank() != 4 || v.Rank() != 4 {
		return nil, fmt.Errorf("q %v, k %v, v %v must be 4-D", q, k, v)
	}
	if k[0] != q[0] || v[0] != q[0] || k[1] != v[1] || k[2] != v[2] || k[3] != q[3] || k[1] == 0 || q[1]%k[1] != 0 {
		return nil, fmt.Errorf("q %v, k %v, v %v do not fit together", q, k, v)
	}
	if want := (tensor.Shape{q[0], q[1], q[2], v[3]}); !nd.Shape.Equal(want) {
		return nil, fmt.Errorf("result %v, want %v", nd.Shape, want)
	}
	p := &attentionPlan{b: q[0], h: q[1], hk: k[1], sq: q[2], sk: k[2], d: q[3], dv: v[3],
		group: q[1] / k[1], causal: nd.Attrs.Causal, scale: float64(nd.Attrs.Scale), kvLen: nd.Attrs.KVLen}
	if p.scale == 0 && p.d > 0 {
		p.scale = 1 / math.Sqrt(float64(p.d))
	}
	if len(ins) == 4 {
		m := ins[3]
		switch m.DType {
		case dt:
			p.mask = maskAdd
		case tensor.Bool:
			p.mask = maskBool
		default:
			return nil, fmt.Errorf("mask dtype %v must be bool or %v", m.DType, dt)
		}
		scores := tensor.Shape{p.b, p.h, p.sq, p.sk}
		if s, err := tensor.Broadcast(m.Shape, scores); err != nil || !s.Equal(scores) {
			return nil, fmt.Errorf("mask %v does not broadcast to %v", m.Shape, scores)
		}
		p.mst = tensor.BroadcastStrides(m.Shape, scores)
	}
	p.scores = make([]float64, p.sk)
	return bindFloat(nd, dt, p, runAttention[float32], runAttention[float64]), nil
}

// runAttention computes softmax(q·kᵀ·scale + mask)·v one query row at a
// time, in float64, with the NaN and Inf behaviour of that formula spelled
// out as ops, so that the attention fusion pass never changes a result:
// positions removed by causality or a false Bool mask score -Inf (replaced,
// as Where(mask, scores, -Inf) does); a row with a NaN or +Inf score, or
// whose every key is removed, is NaN, as softmax gives; and every key's
// weight, 0 for a removed one, multiplies its value row, so a NaN or Inf
// anywhere in v reaches the output as the spelled-out product takes it
// (0·Inf = NaN). Only with no keys at all is the output 0 (an empty sum).
func runAttention[T float32 | float64](p *attentionPlan, ins []tensor.Tensor, out tensor.Tensor) {
	q, k, v, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), tensor.Elems[T](ins[2].Data), tensor.Elems[T](out.Data)
	var addMask []T
	var keep []bool
	switch p.mask {
	case maskAdd:
		addMask = tensor.Elems[T](ins[3].Data)
	case maskBool:
		keep = ins[3].Bool()
	}
	for b := range p.b {
		sk := p.sk
		if p.kvLen {
			sk = keysInUse(ins[len(ins)-1], b, p.sk)
		}
		s := p.scores[:sk]
		for h := range p.h {
			kvh := b*p.hk + h/p.group // kv head of query head h, in [B, Hk] order
			kb, vb := k[kvh*p.sk*p.d:], v[kvh*p.sk*p.dv:]
			for i := range p.sq {
				qi := q[((b*p.h+h)*p.sq+i)*p.d:][:p.d]
				yi := y[((b*p.h+h)*p.sq+i)*p.dv:][:p.dv]
				best := math.Inf(-1)
				for j := range sk {
					m := 0
					if p.mask != maskNone {
						m = b*p.mst[0] + h*p.mst[1] + i*p.mst[2] + j*p.mst[3]
					}
					if (p.causal && j > i+sk-p.sq) || (keep != nil && !keep[m]) {
						s[j] = math.Inf(-1)
						continue
					}
					var dot float64
					for c, qc := range qi {
						dot += float64(qc) * float64(kb[j*p.d+c])
					}
					s[j] = dot * p.scale
					if addMask != nil {
						s[j] += float64(addMask[m])
					}
					best = max(best, s[j])
				}
				if sk == 0 {
					clear(yi)
					continue
				}
				var sum float64
				for j := range s {
					s[j] = math.Exp(s[j] - best)
					sum += s[j]
				}
				for c := range yi {
					var acc float64
					for j, w := range s {
						acc += w * float64(vb[j*p.dv+c])
					}
					yi[c] = T(acc / sum)
				}
			}
		}
	}
}

// keysInUse is batch b's count of keys in use from an Attention KVLen
// input, clamped to [0, sk]: a count past the cache reads all of it, a
// negative one none.
func keysInUse(lens tensor.Tensor, b, sk int) int {
	return int(min(max(lens.I64()[b], 0), int64(sk)))
}

type ropePlan struct {
	rows        int // all [..., S] rows of x, each of D elements
	seq, half   int // S and D/2
	interleaved bool
}

func prepareRoPE(nd *graph.Node) (Kernel, error) {
	dt, err := computeDType(nd, 3, 3, 3)
	if err != nil {
		return nil, err
	}
	x := nd.Inputs[0].Shape
	r := x.Rank()
	if r < 2 || x[r-1]%2 != 0 || !nd.Shape.Equal(x) {
		return nil, fmt.Errorf("input %v must be [..., seq, even dim] like the result %v", x, nd.Shape)
	}
	p := &ropePlan{rows: x[:r-1].NumElements(), seq: x[r-2], half: x[r-1] / 2, interleaved: nd.Attrs.Interleaved}
	want := tensor.Shape{p.seq, p.half}
	if !nd.Inputs[1].Shape.Equal(want) || !nd.Inputs[2].Shape.Equal(want) {
		return nil, fmt.Errorf("cos %v and sin %v must be %v", nd.Inputs[1].Shape, nd.Inputs[2].Shape, want)
	}
	return bindFloat(nd, dt, p, runRoPE[float32], runRoPE[float64]), nil
}

// runRoPE rotates each pair (a, b) by the angle of its position and pair
// index: (a·cos - b·sin, b·cos + a·sin). The pair of index i is (i, i+D/2)
// in the half-split form and (2i, 2i+1) when interleaved.
func runRoPE[T float32 | float64](p *ropePlan, ins []tensor.Tensor, out tensor.Tensor) {
	x, cos, sin, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), tensor.Elems[T](ins[2].Data), tensor.Elems[T](out.Data)
	d := 2 * p.half
	for r := range p.rows {
		pos := r % p.seq
		xr, yr := x[r*d:][:d], y[r*d:][:d]
		for i := range p.half {
			ia, ib := i, i+p.half
			if p.interleaved {
				ia, ib = 2*i, 2*i+1
			}
			a, b := float64(xr[ia]), float64(xr[ib])
			c, s := float64(cos[pos*p.half+i]), float64(sin[pos*p.half+i])
			yr[ia] = T(a*c - b*s)
			yr[ib] = T(b*c + a*s)
		}
	}
}
