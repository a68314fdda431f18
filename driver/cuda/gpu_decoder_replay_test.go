package cuda_test

import (
	"fmt"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/cuda"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/decode"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/tensor"
)

// replayStep runs one decode step of the captured step program m: token
// id at position pos (inputs 0 and 1, float32; the caches are handles the
// capture feeds on the device) and returns the logits' staged bytes.
func replayStep(m *cuda.GraphModel, id int64, pos int) ([]float32, error) {
	tensor.Elems[float32](m.InputSlice(0))[0] = float32(id)
	tensor.Elems[float32](m.InputSlice(1))[0] = float32(pos)
	if err := m.RunInPlace(); err != nil {
		return nil, err
	}
	return tensor.Elems[float32](m.OutputSlice(0)), nil
}

// TestGPUDecoderGraphReplay captures the demo decoder's decode step,
// after a prefill, into a CUDA graph (cuda.NewGraphModel, which copies
// the prefilled cache handles) and decodes by replay beside the
// per-kernel decoder: every replayed step picks the same token and its
// logits match the per-kernel step's; a replay copies the token and
// position in (8 bytes) and the logits out, nothing of the caches; and
// it allocates nothing.
func TestGPUDecoderGraphReplay(t *testing.T) {
	needGPU(t)
	for _, c := range []struct {
		cfg           demo.DecoderConfig
		prompt, steps int
		name          string
	}{
		{demo.DecoderTiny, 6, 16, "tiny"},
		{demo.DecoderSmall, 100, 40, "small"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, gpu := decoderPair(t, c.cfg, c.prompt)
			prompt := make([]int64, c.prompt)
			for i := range prompt {
				prompt[i] = int64(i * 5 % c.cfg.Vocab)
			}
			logits, err := gpu.Prefill(prompt)
			if err != nil {
				t.Fatal(err)
			}
			v := c.cfg.Vocab
			id := decode.Argmax(logits[(c.prompt-1)*v:][:v])
			_, step := gpu.Programs()
			m, err := cuda.NewGraphModel(step)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for i := range c.steps {
				pos := gpu.Pos()
				want, err := gpu.Step(id)
				if err != nil {
					t.Fatal(err)
				}
				before := m.Transfers()
				got, err := replayStep(m, id, pos)
				if err != nil {
					t.Fatal(err)
				}
				after := m.Transfers()
				if in, out := after.ToDevice-before.ToDevice, after.ToHost-before.ToHost; in != 8 || out != int64(4*v) {
					t.Errorf("replay %d moved %d bytes in and %d out, want 8 and %d", i, in, out, 4*v)
				}
				approx.Slices(t, fmt.Sprintf("replayed step %d vs per-kernel", i), got, want, 1e-5, 1e-6)
				if t.Failed() {
					t.Fatalf("stopped at step %d", i)
				}
				id = decode.Argmax(want)
			}
			pos := gpu.Pos()
			if a := testing.AllocsPerRun(5, func() { _, _ = replayStep(m, id, pos) }); a != 0 {
				t.Errorf("a replayed decode step allocates %v times", a)
			}
		})
	}
}

// BenchmarkGPUDecoder times the demo's small decoder's decode step on
// cuda:0, one kernel launch per op (the step program's RunSlots, as
// decode.Decoder.Step runs it) against one replay of the captured CUDA
// graph per token, after a 128-token prefill; positions cycle through
// 128-255 so every step attends over 129-256 keys in both. Reports
// tokens/s.
func BenchmarkGPUDecoder(b *testing.B) {
	needGPU(b)
	c := demo.DecoderSmall
	g, err := demo.DecoderStep(c, 1)
	if err != nil {
		b.Fatal(err)
	}
	d, err := decode.New(kiln.NewSession(kiln.CUDA(0)), c, 128, demo.Weights(g, 1))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	prompt := make([]int64, 128)
	for i := range prompt {
		prompt[i] = int64(i * 7 % c.Vocab)
	}
	if _, err := d.Prefill(prompt); err != nil {
		b.Fatal(err)
	}
	_, step := d.Programs()
	pos := func(i int) int { return 128 + i%(c.MaxSeq-128) }
	b.Run("per-kernel", func(b *testing.B) {
		ins := make([][]float32, 2+2*c.Layers) // nil: the caches are handles
		ins[0], ins[1] = []float32{5}, make([]float32, 1)
		i := 0
		for b.Loop() {
			ins[1][0] = float32(pos(i))
			if _, err := step.RunSlots(ins...); err != nil {
				b.Fatal(err)
			}
			_ = step.Output(0)[0] // the logits on the host, as a step returns them
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	})
	m, err := cuda.NewGraphModel(step)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	b.Run("graph-replay", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := replayStep(m, 5, pos(i)); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	})
}
