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

// TestGenerate runs `kiln generate` on the three checkpoints with torch's
// prompt: the ids it prints (as text and as JSON) are torch's greedy
// ids, and it prints every step's logit and margin and the rates.
func TestGenerate(t *testing.T) {
	for _, kind := range []string{"llama", "qwen2", "mixtral"} {
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
		{[]string{llama, "--prompt-ids", "1", "--moe-capture"}, false, "--moe-capture: " + llama + " (llama) has no MoE layers"},
	} {
		_, _, err := capture(t, runGenerate, c.args...)
		var ue usageError
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.As(err, &ue) != c.usage {
			t.Errorf("%q: error %v (usage error %v), want one containing %q (usage %v)", c.args, err, errors.As(err, &ue), c.want, c.usage)
		}
	}
}

// torchRouting reads the Mixtral checkpoint's prompt routing: per layer,
// per prompt token, the k expert ids torch.topk chose, best first.
func torchRouting(t *testing.T) [][][]uint32 {
	t.Helper()
	f, err := safetensors.Open(filepath.Join(hfDir, "hf_mixtral_expected.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, err := f.Tensor("topk_ids")
	if err != nil {
		t.Fatal(err)
	}
	ids := x.Clone().I64()
	layers, tokens, k := x.Shape[0], x.Shape[1], x.Shape[2]
	out := make([][][]uint32, layers)
	for l := range layers {
		for tok := range tokens {
			row := make([]uint32, k)
			for j := range k {
				row[j] = uint32(ids[(l*tokens+tok)*k+j])
			}
			out[l] = append(out[l], row)
		}
	}
	return out
}

// TestGenerateMoECapture: `kiln generate --moe-capture` on the Mixtral
// checkpoint prints, as text and as JSON, each layer's top-k expert ids
// per prompt token (torch's, in torch's order) and the tokens per expert
// (counted from torch's ids).
func TestGenerateMoECapture(t *testing.T) {
	prompt, _ := torchGreedy(t, "mixtral")
	want := torchRouting(t)
	counts := make([][]int, len(want))
	var text []string
	for l, toks := range want {
		counts[l] = make([]int, 4)
		per := make([]string, len(toks))
		for i, ids := range toks {
			s := make([]string, len(ids))
			for j, e := range ids {
				counts[l][e]++
				s[j] = fmt.Sprint(e)
			}
			per[i] = strings.Join(s, ",")
		}
		text = append(text, fmt.Sprintf("moe layer %d: experts per token: %s\n", l, strings.Join(per, " ")),
			fmt.Sprintf("moe layer %d: tokens per expert: %s\n", l, strings.Trim(fmt.Sprint(counts[l]), "[]")))
	}
	args := []string{filepath.Join(hfDir, "hf_mixtral"), "--prompt-ids", joinIDs(prompt), "--max-new-tokens", "3", "--threads", "1", "--moe-capture"}
	out, _, err := capture(t, runGenerate, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, s := range append(text, "MoE routing of the prompt (prefill): top 2 of 4 experts per token, best first\n") {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	out, _, err = capture(t, runGenerate, append(args, "--json")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var r struct {
		MoE *moeRouting `json:"moe"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.MoE == nil || r.MoE.Experts != 4 || r.MoE.ExpertsPerTok != 2 || len(r.MoE.Layers) != len(want) {
		t.Fatalf("--json moe: %+v", r.MoE)
	}
	for l, ly := range r.MoE.Layers {
		if !slices.EqualFunc(ly.TopK, want[l], slices.Equal) || !slices.Equal(ly.TokensPerExpert, counts[l]) {
			t.Errorf("--json layer %d: %+v, want top-k %v and counts %v", l, ly, want[l], counts[l])
		}
	}
}
