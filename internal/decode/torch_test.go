package decode

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/safetensors"
	"github.com/kilnml/kiln/tensor"
)

// TestDecodeMatchesTorch runs the decoder on the weights and prompt of
// testdata/decoder_tiny.safetensors (written by gen_torch_decoder.py,
// which also holds PyTorch's float64 forward pass in the Hugging Face
// Llama conventions): greedy generation must pick torch's ids, and the
// prefill rows and every decode step's logits must match torch's.
func TestDecodeMatchesTorch(t *testing.T) {
	f, err := safetensors.Open(filepath.Join("testdata", "decoder_tiny.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Vocab, Hidden, Layers, Heads, FFN int
		KVHeads                           int     `json:"kv_heads"`
		MaxSeq                            int     `json:"max_seq"`
		RopeTheta                         float64 `json:"rope_theta"`
		Eps                               float32
	}
	if err := json.Unmarshal([]byte(f.Metadata["config"]), &cfg); err != nil {
		t.Fatal(err)
	}
	c := demo.DecoderConfig{Vocab: cfg.Vocab, Hidden: cfg.Hidden, Layers: cfg.Layers, Heads: cfg.Heads, KVHeads: cfg.KVHeads,
		FFN: cfg.FFN, MaxSeq: cfg.MaxSeq, RopeTheta: cfg.RopeTheta, Eps: cfg.Eps}
	if c != demo.DecoderTiny {
		t.Fatalf("fixture config %+v, DecoderTiny is %+v: rerun gen_torch_decoder.py", c, demo.DecoderTiny)
	}
	w := map[string][]float32{}
	g, err := demo.DecoderStep(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range g.Params() {
		x, err := f.Tensor(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !x.Shape.Equal(p.Shape) {
			t.Fatalf("%s: fixture %v, graph %v", p.Name, x.Shape, p.Shape)
		}
		w[p.Name] = x.F32()
	}
	var fixture [3]tensor.Tensor
	for i, name := range []string{"prompt", "greedy_ids", "logits"} {
		if fixture[i], err = f.Tensor(name); err != nil {
			t.Fatal(err)
		}
	}
	prompt, wantIDs, want := fixture[0].I64(), fixture[1].I64(), fixture[2].F32()
	v := c.Vocab

	d, err := New(kiln.NewSession(kiln.CPU), c, len(prompt), w)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var steps [][]float32
	ids, err := d.Generate(prompt, len(wantIDs), func(i int, logits []float32) { steps = append(steps, slices.Clone(logits)) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("greedy ids %v, torch %v", ids, wantIDs)
	}
	for i, got := range steps {
		row := len(prompt) - 1 + i
		approx.Slices(t, fmt.Sprintf("logits before generated token %d (row %d)", i, row), got, want[row*v:(row+1)*v], 1e-4, 1e-5)
	}
	pre, err := d.Prefill(prompt)
	if err != nil {
		t.Fatal(err)
	}
	approx.Slices(t, "prefill rows", pre, want[:len(prompt)*v], 1e-4, 1e-5)
}
