package plan_test

import (
	"fmt"
	"testing"

	"github.com/kilnml/kiln/plan"
)

func TestDbg(t *testing.T) {
	g := encoder(1, 128, 384, 12, 1536, false)
	p, _ := plan.Make(g, plan.Options{InPlace: never})
	A := 196608
	for i, n := range p.Order {
		s := p.Slots[n.ID]
		if s.Alias != nil || s.Region != plan.Arena {
			continue
		}
		fmt.Printf("%3d %-14s size %.2fA off %.2fA [%d,%d]\n", i, n.Name, float64(s.Bytes)/float64(A), float64(s.Offset)/float64(A), s.Start, s.End)
	}
	fmt.Println(p.Report(), float64(p.LowerBound)/float64(A))
}
