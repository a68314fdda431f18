package graph
import ("testing";"github.com/kilnml/kiln/tensor")
func TestZZ(t *testing.T){ g:=New(); g.Output(g.Slice(g.Input("s", tensor.I64, 9), SliceSpec{Starts: []int{-1}, Ends: []int{-100}, Steps: []int{-2}})); t.Log(Dump(g)) }
