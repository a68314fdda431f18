package ptxemu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/tensor"
)

// TestDecoderLowered lowers the demo decoder's step graph (internal/
// demo.DecoderStep: rotary positions gathered at pos, the cache written
// at pos by Where, attention over a KV cache read to pos+s through
// Attention's KVLen) to CUDA kernels and runs it on the emulator against
// the CPU run of the same compiled graph: a prefill from an empty cache,
// a chunk appended to a part-filled one, and decode steps at the first
// and the last free row. internal/decode checks the CPU run itself
// (decode steps equal the prefill's rows, both a float64 forward pass).
func TestDecoderLowered(t *testing.T) {
	t.Parallel()
	c := demo.DecoderTiny
	r := rand.New(rand.NewPCG(25, 26))
	for _, step := range []struct{ s, pos int }{{8, 0}, {4, 6}, {1, 9}, {1, c.MaxSeq - 1}} {
		g, err := demo.DecoderStep(c, step.s)
		if err != nil {
			t.Fatal(err)
		}
		feeds := map[string]tensor.Tensor{}
		w := demo.Weights(g, 7)
		for _, p := range g.Params() {
			feeds[p.Name] = tensor.Tensor{DType: tensor.F32, Shape: p.Shape, Data: tensor.Bytes(w[p.Name])}
		}
		ids := tensor.New(tensor.F32, 1, step.s)
		for i := range ids.F32() {
			ids.F32()[i] = float32(r.IntN(c.Vocab))
		}
		pos := tensor.New(tensor.F32, 1)
		pos.F32()[0] = float32(step.pos)
		feeds[demo.StepTokens], feeds[demo.StepPos] = ids, pos
		for l := range c.Layers {
			for _, kind := range []string{"k", "v"} {
				feeds[demo.CacheName(kind, l)] = randTensor(r, tensor.F32, false, c.CacheShape()...)
			}
		}
		compareLowered(t, fmt.Sprintf("decoder step of %d at %d", step.s, step.pos), g, nil, feeds, 1e-4)
	}
}
