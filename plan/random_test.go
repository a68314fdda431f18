package plan_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/tensor"
)

// randomGraph builds a random DAG through the builder: unary ops, binary
// ops with broadcasting, views, matmuls, reductions, concats, softmax and
// casts over random small shapes (zero-sized dims included), with a few
// random nodes (inputs, params and views among them) as outputs.
func randomGraph(r *rand.Rand) (*graph.Graph, error) {
	g := graph.New()
	var pool []*graph.Node
	names := 0
	name := func(p string) string { names++; return fmt.Sprintf("%s%d", p, names) }
	shape := func() []int {
		s := make([]int, 1+r.IntN(3))
		for i := range s {
			s[i] = 1 + r.IntN(5)
			if r.IntN(40) == 0 {
				s[i] = 0
			}
		}
		return s
	}
	for range 1 + r.IntN(3) {
		pool = append(pool, g.Input(name("x"), tensor.F32, shape()...))
	}
	if r.IntN(2) == 0 {
		pool = append(pool, g.Param(name("w"), tensor.F32, shape()...))
	}
	pick := func() *graph.Node {
		if r.IntN(3) > 0 { // favour recent values: longer chains
			return pool[max(0, len(pool)-1-r.IntN(4))]
		}
		return pool[r.IntN(len(pool))]
	}
	// partner finds or makes a value that broadcasts with a.
	partner := func(a *graph.Node) *graph.Node {
		for range 4 {
			b := pool[r.IntN(len(pool))]
			if _, err := tensor.Broadcast(a.Shape, b.Shape); err == nil && b.DType == a.DType && len(b.Shape) <= 4 {
				return b
			}
		}
		s := a.Shape.Clone()[r.IntN(a.Shape.Rank()+1):]
		for i := range s {
			if r.IntN(2) == 0 {
				s[i] = 1
			}
		}
		if r.IntN(2) == 0 {
			return g.Param(name("w"), a.DType, s...)
		}
		return g.Exp(g.Input(name("x"), a.DType, s...))
	}
	var chain concatChain
	unary := []func(*graph.Node) *graph.Node{g.Relu, g.Exp, g.Neg, g.Tanh, g.Sigmoid, g.Gelu}
	binary := []func(x, y *graph.Node) *graph.Node{g.Add, g.Mul, g.Sub, g.Max}
	for range 3 + r.IntN(40) {
		a := pick()
		rank := a.Shape.Rank()
		var n *graph.Node
		switch k := r.IntN(9); {
		case k <= 1, rank == 0 && k >= 4 && k <= 7: // scalars: no axes to work on
			n = unary[r.IntN(len(unary))](a)
		case k == 2:
			b := partner(a)
			if r.IntN(2) == 0 {
				a, b = b, a
			}
			n = binary[r.IntN(len(binary))](a, b)
		case k == 3:
			switch r.IntN(5) {
			case 0:
				n = g.Reshape(a, -1)
			case 1:
				n = g.Reshape(a, 1, -1)
			case 2:
				if rank >= 4 {
					n = g.Squeeze(g.Unsqueeze(a, 0), 0)
				} else {
					n = g.Unsqueeze(a, r.IntN(rank+1))
				}
			case 3:
				n = g.Flatten(a, r.IntN(rank+1))
			default:
				n = g.Squeeze(g.Unsqueeze(a, 0))
			}
		case k == 4:
			if rank >= 2 && r.IntN(2) == 0 {
				perm := make([]int, rank)
				for i := range perm {
					perm[i] = i
				}
				perm[rank-1], perm[rank-2] = perm[rank-2], perm[rank-1]
				n = g.MatMul(a, g.Transpose(a, perm...))
			} else {
				n = g.MatMul(a, g.Param(name("w"), a.DType, a.Shape[rank-1], 1+r.IntN(5)))
			}
		case k == 5:
			var axes []int
			for i := range rank {
				if r.IntN(2) == 0 {
					axes = append(axes, i)
				}
			}
			if r.IntN(2) == 0 {
				n = g.ReduceSum(a, r.IntN(2) == 0, axes...)
			} else {
				n = g.ReduceMean(a, r.IntN(2) == 0, axes...)
			}
		case k == 6 && r.IntN(2) == 0:
			n = chain.next(g, r, name, pick)
		case k == 6:
			if a.Shape.NumElements() > 400 {
				n = g.Neg(a)
				break
			}
			ax := r.IntN(rank)
			n = g.Concat(ax, a, g.Relu(a), a)
		case k == 7:
			n = g.Softmax(a, -1)
		default:
			if a.DType == tensor.F32 {
				n = g.Cast(a, tensor.F16)
			} else {
				n = g.Cast(a, tensor.F32)
			}
		}
		if err := g.Err(); err != nil {
			return nil, err
		}
		pool = append(pool, n)
	}
	g.Output(pool[len(pool)-1])
	for range r.IntN(3) {
		g.OutputNamed(name("out"), pool[r.IntN(len(pool))])
	}
	return g, g.Err()
}

// concatChain makes the concats that Options.JoinConcat can join: of
// [1, c, 16] values (whole cache lines a channel), each new one often
// the last one's inputs and one more (DenseNet's prefixes), or an older
// concat joined again (nested), or fresh values computed from inputs or
// from what the graph has (parts or not: graph inputs and params among
// them).
type concatChain struct{ last []*graph.Node }

func (ch *concatChain) next(g *graph.Graph, r *rand.Rand, name func(string) string, pick func() *graph.Node) *graph.Node {
	fresh := func() *graph.Node {
		c := 1 + r.IntN(3)
		switch r.IntN(6) {
		case 0:
			return g.Input(name("x"), tensor.F32, 1, c, 16)
		case 1:
			if a := pick(); a.DType == tensor.F32 && a.Shape.NumElements() > 0 {
				return g.Relu(g.Reshape(a, 1, -1, 1)) // broadcast below
			}
		}
		return g.Exp(g.Input(name("x"), tensor.F32, 1, c, 16))
	}
	var parts []*graph.Node
	if len(ch.last) > 0 && r.IntN(2) == 0 {
		parts = append(parts, ch.last...)
	} else if len(ch.last) > 0 && r.IntN(3) == 0 {
		parts = append(parts, g.Concat(1, ch.last...))
	}
	for range 1 + r.IntN(2) {
		x := fresh()
		if x.Shape[2] != 16 { // [1, k, 1]: widen to 16 a channel
			x = g.Add(x, g.Input(name("x"), tensor.F32, 1, 1, 16))
		}
		parts = append(parts, x)
	}
	ch.last = parts
	return g.Concat(1, parts...)
}

// anyInput lets steps write over every graph input (Options.Overwritable).
func anyInput(*graph.Node) bool { return true }

// TestRandomGraphs plans hundreds of random graphs under every policy and
// checks each plan with Check and with the tagged-memory simulation.
func TestRandomGraphs(t *testing.T) {
	policies := []struct {
		name string
		opt  plan.Options
	}{
		{"unary-in-place", plan.Options{InPlace: func(n *graph.Node) bool { return n.Op.IsUnary() }}},
		{"elementwise-in-place", plan.Options{InPlace: elementwise}},
		{"always-in-place", plan.Options{InPlace: always}},
		{"no-in-place", plan.Options{InPlace: never}},
		{"catalogue", plan.Options{}},
		{"naive", plan.Options{Naive: true, InPlace: always}},
		{"inputs-overwritable", plan.Options{InPlace: always, Overwritable: anyInput}},
		{"join-concat", plan.Options{InPlace: always, JoinConcat: true}},
		{"join-concat-catalogue", plan.Options{JoinConcat: true}},
		{"join-concat-naive", plan.Options{Naive: true, JoinConcat: true}},
	}
	const graphs = 400
	inPlaceSeen, joinedSeen := 0, 0
	for seed := range uint64(graphs) {
		g, err := randomGraph(rand.New(rand.NewPCG(seed, 7)))
		if err != nil {
			t.Fatalf("seed %d: building: %v", seed, err)
		}
		for _, pol := range policies {
			p, err := plan.Make(g, pol.opt)
			if err != nil {
				t.Fatalf("seed %d, %s: %v", seed, pol.name, err)
			}
			fail := func(format string, args ...any) {
				t.Helper()
				t.Fatalf("seed %d, %s: %s\n%s", seed, pol.name, fmt.Sprintf(format, args...), graph.Dump(g))
			}
			if err := p.Check(); err != nil {
				fail("Check: %v", err)
			}
			if err := simulate(g, p); err != nil {
				fail("simulate: %v", err)
			}
			if p.ArenaBytes < p.LowerBound || p.ArenaBytes > p.NaiveBytes {
				fail("arena %d outside [lower bound %d, naive %d]", p.ArenaBytes, p.LowerBound, p.NaiveBytes)
			}
			if pol.opt.Naive || plan.FromEnv().Naive {
				if p.ArenaBytes != p.NaiveBytes {
					fail("naive arena %d, want the naive sum %d", p.ArenaBytes, p.NaiveBytes)
				}
			}
			for _, n := range p.Order {
				s := p.Slots[n.ID]
				if s.Joined {
					if !pol.opt.JoinConcat || pol.opt.Naive {
						fail("%s joined under %s", n.Name, pol.name)
					}
					joinedSeen++
				}
				if s.Alias != nil && !n.Op.IsView() && s.Alias == n.Inputs[0] {
					if pol.name == "no-in-place" || pol.opt.Naive {
						fail("%s in place under %s", n.Name, pol.name)
					}
					if pol.name == "always-in-place" {
						inPlaceSeen++
					}
				}
			}
		}
	}
	if inPlaceSeen < graphs/4 && !plan.FromEnv().Naive {
		t.Errorf("only %d in-place steps over %d graphs: the generator exercises too little", inPlaceSeen, graphs)
	}
	if joinedSeen < graphs/4 && !plan.FromEnv().Naive {
		t.Errorf("only %d joined concats over %d graphs: the generator exercises too little", joinedSeen, graphs)
	}
}
