package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// TestConvTwinSharesPacking: a convolution with param weights prepared
// twice for one program (Env.Shared), on two workers and serially as a
// program's serial twin is, holds one packed copy, and both kernels give
// the same bits, whichever runs first; weights computed at run time keep
// a copy each.
func TestConvTwinSharesPacking(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, params := range []bool{true, false} {
		g := graph.New()
		x := g.Input("x", tensor.F32, 1, 32, 28, 28)
		var w, b *graph.Node
		if params {
			w, b = g.Param("w", tensor.F32, 48, 32, 3, 3), g.Param("b", tensor.F32, 48)
		} else {
			w, b = g.Input("w", tensor.F32, 48, 32, 3, 3), g.Input("b", tensor.F32, 48)
		}
		n := g.Conv2D(x, w, b, graph.ConvOpts{Pads: []int{1, 1, 1, 1}})
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		ins := []tensor.Tensor{
			frTensor(tensor.F32, x.Shape, frRand(r, x.Shape.NumElements(), 1)),
			frTensor(tensor.F32, w.Shape, frRand(r, w.Shape.NumElements(), 1)),
			frTensor(tensor.F32, b.Shape, frRand(r, 48, 1)),
		}
		shared := map[any]any{}
		var version atomic.Uint64
		pool, serial := frEnv(2), Serial
		pool.Shared, serial.Shared = shared, shared
		pool.WeightsVersion, serial.WeightsVersion = &version, &version
		kPool, _, err := prepareConvFast(n, pool, nil, asm.BestGemm())
		if err != nil || kPool == nil {
			t.Fatalf("no fast kernel (%v)", err)
		}
		kSerial, _, err := prepareConvFast(n, serial, nil, asm.BestGemm())
		if err != nil || kSerial == nil {
			t.Fatalf("no fast kernel (%v)", err)
		}
		copies := 0
		for _, v := range shared {
			if _, ok := v.(*convPacked); ok {
				copies++
			}
		}
		if want := map[bool]int{true: 1, false: 0}[params]; copies != want {
			t.Fatalf("params %v: %d shared packed copies, want %d", params, copies, want)
		}
		first := frOut(t, n, kSerial, ins).F32() // the twin packs
		second := frOut(t, n, kPool, ins).F32()  // the pool kernel runs on its packing
		third := frOut(t, n, kSerial, ins).F32()
		if !slices.Equal(first, second) || !slices.Equal(first, third) {
			t.Errorf("params %v: the kernels gave other values on the shared packing", params)
		}
		frClose(t, fmt.Sprintf("params %v", params), first, frReference(t, n, ins).F32(), frMagnitude(t, n, ins), frTol(t, graph.OpConv2D), 0)
		// New weights in the same buffers (SetParam): whichever kernel
		// runs next repacks, the other runs on its packing.
		for _, in := range ins[1:] {
			v := in.F32()
			for i := range v {
				v[i] = -v[i] / 2
			}
		}
		version.Add(1)
		fourth := frOut(t, n, kPool, ins).F32()
		fifth := frOut(t, n, kSerial, ins).F32()
		if !slices.Equal(fourth, fifth) {
			t.Errorf("params %v: the kernels gave other values after new weights", params)
		}
		frClose(t, fmt.Sprintf("params %v, new weights", params), fifth, frReference(t, n, ins).F32(), frMagnitude(t, n, ins), frTol(t, graph.OpConv2D), 0)
	}
}
