package main

import (
	"fmt"
	"math/rand/v2"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// A case is a recipe for one graph: a seed and the steps to keep. Each
// step draws from its own generator (seeded by the case seed and the
// step index), so dropping a step while minimising leaves the others as
// they were; dims are clamped to DimCap (0: no cap), which keeps equal
// dims equal and ones one, so shrinking preserves validity.
type Case struct {
	Seed   uint64
	Steps  int
	Drop   map[int]bool
	DimCap int
}

func (c Case) String() string {
	s := fmt.Sprintf("seed=%d steps=%d", c.Seed, c.Steps)
	if len(c.Drop) > 0 {
		s += fmt.Sprintf(" dropped=%d", len(c.Drop))
	}
	if c.DimCap > 0 {
		s += fmt.Sprintf(" dimcap=%d", c.DimCap)
	}
	return s
}

// builder holds the state of one graph being generated.
type builder struct {
	c     Case
	r     *rand.Rand
	g     *graph.Graph
	pool  []*graph.Node // F32 values
	names int
	outs  map[*graph.Node]bool
}

func (b *builder) name(p string) string { b.names++; return fmt.Sprintf("%s%d", p, b.names) }

// dim clamps a generated dim to the case's cap.
func (b *builder) dim(d int) int {
	if b.c.DimCap > 0 && d > b.c.DimCap {
		return b.c.DimCap
	}
	return d
}

// tailLen is a last-axis length that exercises vector tails: anything in
// 1..70, around 1024, and now and then 0.
func (b *builder) tailLen() int {
	switch b.r.IntN(10) {
	case 0:
		return b.dim(1021 + b.r.IntN(8))
	case 1:
		if b.r.IntN(4) == 0 {
			return 0
		}
		return 1
	}
	return b.dim(1 + b.r.IntN(70))
}

// shape is a random shape of rank 0..4 of at most about 1<<15 elements.
func (b *builder) shape() tensor.Shape {
	rank := b.r.IntN(5)
	s := make(tensor.Shape, rank)
	total := 1
	for i := rank - 1; i >= 0; i-- {
		d := b.dim(1 + b.r.IntN(5))
		if i == rank-1 {
			d = b.tailLen()
		} else if b.r.IntN(4) == 0 {
			d = 1
		}
		if total*max(d, 1) > 1<<15 {
			d = 1
		}
		s[i] = d
		total *= max(d, 1)
	}
	return s
}

func (b *builder) input(s tensor.Shape) *graph.Node {
	if b.r.IntN(4) == 0 {
		return b.g.Param(b.name("p"), tensor.F32, s...)
	}
	return b.g.Input(b.name("x"), tensor.F32, s...)
}

// pick favours recent values, so chains grow long.
func (b *builder) pick() *graph.Node {
	if b.r.IntN(3) > 0 {
		return b.pool[max(0, len(b.pool)-1-b.r.IntN(3))]
	}
	return b.pool[b.r.IntN(len(b.pool))]
}

// partner is a value broadcasting against s: s itself, s with some dims
// set to 1, a suffix of s, or a 0-D scalar (input or constant).
func (b *builder) partner(s tensor.Shape) *graph.Node {
	switch b.r.IntN(6) {
	case 0:
		return b.g.Scalar(float32(b.r.IntN(9)-4) / 2)
	case 1:
		return b.input(tensor.Shape{})
	case 2:
		for _, p := range b.pool {
			if p.Shape.Equal(s) && b.r.IntN(2) == 0 {
				return p
			}
		}
	}
	t := append(tensor.Shape(nil), s[b.r.IntN(len(s)+1):]...)
	for i := range t {
		if b.r.IntN(3) == 0 {
			t[i] = 1
		}
	}
	if b.r.IntN(5) == 0 && len(t) < 4 { // a leading 1 grows the result's rank
		t = append(tensor.Shape{1}, t...)
	}
	return b.input(t)
}

func (b *builder) push(n *graph.Node) {
	if n != nil && n.DType == tensor.F32 {
		b.pool = append(b.pool, n)
	}
}

// Build makes the case's graph. A step whose random choices do not fit
// the value it picked is skipped, never built invalid.
func Build(c Case) (*graph.Graph, error) {
	b := &builder{c: c, g: graph.New(), outs: map[*graph.Node]bool{}}
	b.r = rand.New(rand.NewPCG(c.Seed, 0x6b696c6e))
	b.pool = append(b.pool, b.input(b.shape()))
	for i := range c.Steps {
		r := rand.New(rand.NewPCG(c.Seed, uint64(i)+1))
		if c.Drop[i] {
			continue
		}
		b.r = r
		b.step()
		if err := b.g.Err(); err != nil {
			return nil, fmt.Errorf("step %d: %w", i, err)
		}
		if b.r.IntN(6) == 0 {
			b.outs[b.pool[len(b.pool)-1]] = true
		}
	}
	b.outs[b.pool[len(b.pool)-1]] = true
	for _, n := range b.pool { // keep creation order: deterministic output order
		if b.outs[n] {
			b.g.Output(n)
			delete(b.outs, n)
		}
	}
	return b.g, b.g.Err()
}
