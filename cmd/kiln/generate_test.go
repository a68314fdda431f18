package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln/safetensors"
)

// The tiny Hugging Face checkpoints of internal/decode/testdata, written
// by gen_hf_decoder.py with PyTorch's greedy ids beside them.
var hfDir = filepath.Join("..", "..", "internal", "decode", "testdata")

// torchGreedy reads a checkpoint's prompt and the ids torch generated
// after it.
func torchGreedy(t *testing.T, kind string) (prompt, ids []int64) {
	t.Helper()
	f, err := safetensors.Open(filepath.Join(hfDir, "hf_"+kind+"_expected.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := f.Tensor("prompt")
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.Tensor("greedy_ids")
	if err != nil {
		t.Fatal(err)
	}
	return p.Clone().I64(), g.Clone().I64()
}

// TestGenerate runs `kiln generate` on both checkpoints with torch's
// prompt: the ids it prints (as text and as JSON) are torch's greedy
// ids, and it prints every step's logit and margin and the rates.
func TestGenerate(t *testing.T) {
	for _, kind := range []string{"llama", "qwen2"} {
		t.Run(kind, func(t *testing.T) {
			prompt, want := torchGreedy(t, kind)
			dir := filepath.Join(hfDir, "hf_"+kind)
			args := []string{dir, "--prompt-ids", joinIDs(prompt), "--max-new-tokens", "8", "--threads", "1"}
			out, _, err := capture(t, runGenerate, args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, s := range []string{"kiln generate: " + dir + " (" + kind, "token 7: id", "margin",
				fmt.Sprintf("prefill %d tokens:", len(prompt)), "GEMM kernel at", "decode 7 tokens:", "tokens/s, memory bound",
				"memory bound:", "generated ids: " + joinIDs(want) + "\n"} {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			out, _, err = capture(t, runGenerate, append(args, "--json")...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var r struct {
				ModelType string  `json:"model_type"`
				IDs       []int64 `json:"ids"`
				Run       struct {
					Steps       []genStep `json:"steps"`
					DecodeSteps int       `json:"decode_steps"`
					BoundTokS   float64   `json:"bound_tokens_per_s"`
				} `json:"run"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if r.ModelType != kind || !slices.Equal(r.IDs, want) || len(r.Run.Steps) != 8 || r.Run.DecodeSteps != 7 || !(r.Run.BoundTokS > 0) {
				t.Errorf("--json: %+v; want ids %v", r, want)
			}
			for i, s := range r.Run.Steps {
				if s.ID != want[i] || !(s.Margin >= 0) {
					t.Errorf("step %d: %+v", i, s)
				}
			}
		})
	}
}

// TestGenerateErrors: a bad command line is a usage error; a missing
// folder, config or tensor file, or an id past the vocabulary, fails
// naming it.
func TestGenerateErrors(t *testing.T) {
	llama := filepath.Join(hfDir, "hf_llama")
	noWeights := t.TempDir()
	b, err := os.ReadFile(filepath.Join(llama, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(noWeights, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"--prompt-ids", "1"}, true, "one checkpoint folder"},
		{[]string{llama}, true, "--prompt-ids: no prompt"},
		{[]string{llama, "--prompt-ids", "1,x"}, true, `"x" is not a token id`},
		{[]string{llama, "--prompt-ids", "1,-2"}, true, `"-2" is not a token id`},
		{[]string{llama, "--prompt-ids", "1", "--max-new-tokens", "0"}, true, "--max-new-tokens 0"},
		{[]string{llama, "--prompt-ids", "1,67", "--max-new-tokens", "2"}, false, "token id 67 is outside the vocabulary [0, 67)"},
		{[]string{filepath.Join(hfDir, "nope"), "--prompt-ids", "1"}, false, "nope"},
		{[]string{t.TempDir(), "--prompt-ids", "1"}, false, "config.json"},
		{[]string{noWeights, "--prompt-ids", "1"}, false, "no model.safetensors or model.safetensors.index.json"},
		{[]string{llama, "--prompt-ids", "1", "--max-new-tokens", "100"}, false, "max_position_embeddings"},
	} {
		_, _, err := capture(t, runGenerate, c.args...)
		var ue usageError
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.As(err, &ue) != c.usage {
			t.Errorf("%q: error %v (usage error %v), want one containing %q (usage %v)", c.args, err, errors.As(err, &ue), c.want, c.usage)
		}
	}
}
