package plan_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/plan"
)

// byteSource is a rand.Source that reads the fuzzer's bytes, so that a
// mutation of the input changes the graph locally rather than reseeding
// it; past the end it continues with a PCG seeded by the length.
type byteSource struct {
	b    []byte
	rest *rand.PCG
}

func (s *byteSource) Uint64() uint64 {
	if len(s.b) >= 8 {
		v := binary.LittleEndian.Uint64(s.b)
		s.b = s.b[8:]
		return v
	}
	if len(s.b) > 0 {
		var w [8]byte
		copy(w[:], s.b)
		s.b = nil
		return binary.LittleEndian.Uint64(w[:])
	}
	return s.rest.Uint64()
}

// FuzzPlan builds a random graph from the fuzz bytes (randomGraph in
// random_test.go), plans it under a policy the first byte picks, and
// requires a plan that passes Check and the tagged-memory simulation
// with an arena between the lower bound and the naive sum.
func FuzzPlan(f *testing.F) {
	for i := range byte(7) {
		f.Add([]byte{i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	}
	f.Add([]byte{4, 0xff, 0xfe, 0xfd, 0x80, 0x40, 0x20, 0x10, 0x08, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		policies := []plan.Options{
			{InPlace: func(n *graph.Node) bool { return n.Op.IsUnary() }},
			{InPlace: elementwise},
			{InPlace: always},
			{InPlace: never},
			{},
			{Naive: true, InPlace: always},
			{InPlace: always, JoinConcat: true},
		}
		opt := policies[int(data[0])%len(policies)]
		r := rand.New(&byteSource{b: data[1:], rest: rand.NewPCG(uint64(len(data)), 7)})
		g, err := randomGraph(r)
		if err != nil {
			t.Skip("generator built an invalid graph:", err) // the generator's bug, not the planner's
		}
		p, err := plan.Make(g, opt)
		if err != nil {
			t.Fatalf("Make: %v\n%s", err, graph.Dump(g))
		}
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("policy %d: %s\n%s", int(data[0])%len(policies), fmt.Sprintf(format, args...), graph.Dump(g))
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
	})
}
