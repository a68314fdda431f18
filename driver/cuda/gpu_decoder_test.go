package cuda_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/cuda"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/decode"
	"github.com/kilnml/kiln/internal/demo"
)

// decoderPair compiles the demo decoder of c on the CPU and on cuda:0
// with the same seeded weights.
func decoderPair(t *testing.T, c demo.DecoderConfig, prompt int) (cpu, gpu *decode.Decoder) {
	t.Helper()
	g, err := demo.DecoderStep(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := demo.Weights(g, 11)
	for _, dev := range []kiln.Device{kiln.CPU, kiln.CUDA(0)} {
		d, err := decode.New(kiln.NewSession(dev), c, prompt, w)
		if err != nil {
			t.Fatalf("%v: %v", dev, err)
		}
		t.Cleanup(func() { d.Close() })
		if dev == kiln.CPU {
			cpu = d
		} else {
			gpu = d
		}
	}
	return cpu, gpu
}

// TestGPUDecoder: the demo decoder on cuda:0 (prefill, then decode steps
// with the K/V caches in GPU handles and attention read to a run-time
// length) gives the CPU's logits for the prompt and at every step, fed
// the same tokens (the CPU's greedy choices), its caches end equal to the
// CPU's, and a step moves its token and position in and its logits out:
// nothing of the caches crosses the bus.
func TestGPUDecoder(t *testing.T) {
	needGPU(t)
	for _, c := range []struct {
		cfg           demo.DecoderConfig
		prompt, steps int
		rel, abs      float64
		name          string
	}{
		{demo.DecoderTiny, 6, 16, 1e-4, 1e-5, "tiny"},
		{demo.DecoderSmall, 100, 40, 2e-3, 2e-3, "small"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cpu, gpu := decoderPair(t, c.cfg, c.prompt)
			r := rand.New(rand.NewPCG(3, 4))
			prompt := make([]int64, c.prompt)
			for i := range prompt {
				prompt[i] = int64(r.IntN(c.cfg.Vocab))
			}
			want, err := cpu.Prefill(prompt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := gpu.Prefill(prompt)
			if err != nil {
				t.Fatal(err)
			}
			approx.Slices(t, "prefill logits", got, want, c.rel, c.abs)
			v := c.cfg.Vocab
			id := decode.Argmax(want[(c.prompt-1)*v:][:v])
			_, step := gpu.Programs()
			if prog, err := step.Executable(); err == nil {
				pre, post := cuda.HandleCopies(prog)
				t.Logf("device-to-device cache copies per step: %d before the kernels, %d after", pre, post)
			}
			before := step.Transfers()
			for s := range c.steps {
				want, err := cpu.Step(id)
				if err != nil {
					t.Fatal(err)
				}
				got, err := gpu.Step(id)
				if err != nil {
					t.Fatal(err)
				}
				if !approx.Slices(t, fmt.Sprintf("step %d logits", s), got, want, c.rel, c.abs) {
					break
				}
				id = decode.Argmax(want)
			}
			moved := step.Transfers()
			n := int64(c.steps)
			if in, out := (moved.ToDevice-before.ToDevice)/n, (moved.ToHost-before.ToHost)/n; in != 8 || out != int64(4*v) {
				t.Errorf("a decode step moved %d bytes in and %d out, want 8 (token, position) and %d (logits)", in, out, 4*v)
			}
			for l := range c.cfg.Layers {
				for _, kind := range []string{"k", "v"} {
					want, err := cpu.Cache(kind, l)
					if err != nil {
						t.Fatal(err)
					}
					got, err := gpu.Cache(kind, l)
					if err != nil {
						t.Fatal(err)
					}
					approx.Slices(t, demo.CacheName(kind, l), got, want, c.rel, c.abs)
				}
			}
		})
	}
}

// TestGPUDecoderRate logs the demo decoder's rates on cuda:0 (`kiln demo
// -model decoder -device cuda` prints the same): prefill of 128 tokens,
// then 128 greedy decode steps, and what a step copies between host and
// device with host handles.
func TestGPUDecoderRate(t *testing.T) {
	needGPU(t)
	c := demo.DecoderSmall
	g, err := demo.DecoderStep(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := decode.New(kiln.NewSession(kiln.CUDA(0)), c, 128, demo.Weights(g, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	prompt := make([]int64, 128)
	for i := range prompt {
		prompt[i] = int64(i * 7 % c.Vocab)
	}
	if _, err := d.Generate(prompt, 4, nil); err != nil { // warm-up
		t.Fatal(err)
	}
	t0 := time.Now()
	logits, err := d.Prefill(prompt)
	if err != nil {
		t.Fatal(err)
	}
	prefill := time.Since(t0)
	id := decode.Argmax(logits[127*c.Vocab:][:c.Vocab])
	_, step := d.Programs()
	before := step.Transfers()
	t0 = time.Now()
	for range 128 {
		l, err := d.Step(id)
		if err != nil {
			t.Fatal(err)
		}
		id = decode.Argmax(l)
	}
	dec := time.Since(t0)
	moved := step.Transfers()
	t.Logf("decoder small on cuda:0: prefill 128 tokens %.2f ms; decode 128 tokens %.1f ms = %.1f tokens/s; host↔device per step %d B in, %d B out (K/V caches in GPU handles)",
		float64(prefill.Microseconds())/1e3, float64(dec.Microseconds())/1e3, 128/dec.Seconds(),
		(moved.ToDevice-before.ToDevice)/128, (moved.ToHost-before.ToHost)/128)
}
