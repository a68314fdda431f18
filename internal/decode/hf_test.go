package decode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/safetensors"
	"github.com/kilnml/kiln/tensor"
)

// hfFixture is one checkpoint gen_hf_decoder.py wrote and what torch
// computed from it.
type hfFixture struct {
	dir            string
	prompt, greedy []int64
	logits         []float32 // [len(prompt)+len(greedy)-1, vocab]
	vocab, maxSeq  int
	topk           tensor.Tensor // Mixtral: the prompt's expert ids [layers, prompt, k]
}

func loadFixture(t *testing.T, kind string) hfFixture {
	t.Helper()
	f, err := safetensors.Open(filepath.Join("testdata", "hf_"+kind+"_expected.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ts [3]tensor.Tensor
	for i, name := range []string{"prompt", "greedy_ids", "logits"} {
		x, err := f.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		ts[i] = x.Clone() // aligned, and valid after Close
	}
	fx := hfFixture{dir: filepath.Join("testdata", "hf_"+kind), prompt: ts[0].I64(), greedy: ts[1].I64(), logits: ts[2].F32()}
	fx.vocab = ts[2].Shape[1]
	fx.maxSeq = len(fx.prompt) + len(fx.greedy)
	if kind == "mixtral" {
		x, err := f.Tensor("topk_ids")
		if err != nil {
			t.Fatal(err)
		}
		fx.topk = x.Clone()
	}
	return fx
}

// TestLoadHFMatchesTorch loads the Llama (F16, sharded, untied, one
// key/value head), Qwen2 (BF16, q/k/v biases, tied embeddings) and
// Mixtral (BF16, 4 experts, top 2) checkpoints of testdata, generates greedily from their prompts and
// compares with PyTorch's float64 forward pass over the same rounded
// weights (gen_hf_decoder.py): the ids must be torch's, and every
// step's logits and the prefill's rows must match to 1e-4 relative or
// 1e-5 absolute, the float32 rounding of a two-layer model (torch's
// smallest top-2 margin, 0.018, is far above it). For Mixtral the
// experts the prefill's routers chose (TakeMoETopKCapture) are torch's
// topk ids in torch's order (the script keeps routing 1e-4 from any tie),
// and the residency stats count them per expert. A decode step of any
// allocates nothing.
func TestLoadHFMatchesTorch(t *testing.T) {
	for _, c := range []struct {
		kind       string
		bias, tied bool
		files      int
	}{{"llama", false, false, 2}, {"qwen2", true, true, 1}, {"mixtral", false, false, 1}} {
		t.Run(c.kind, func(t *testing.T) {
			fx := loadFixture(t, c.kind)
			m, err := LoadHF(fx.dir, fx.maxSeq)
			if err != nil {
				t.Fatal(err)
			}
			if m.Type != c.kind || m.Decoder.QKVBias != c.bias || m.Tied != c.tied || len(m.Files) != c.files || m.Decoder.Vocab != fx.vocab {
				t.Fatalf("loaded %s (bias %v, tied %v, vocab %d) from %v", m.Type, m.Decoder.QKVBias, m.Tied, m.Decoder.Vocab, m.Files)
			}
			d, err := New(kiln.NewSession(kiln.CPU), m.Decoder, len(fx.prompt), m.Weights)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			prefill, _ := d.Programs()
			if c.kind == "mixtral" {
				if err := prefill.EnableMoETopKCapture(m.Decoder.Experts); err != nil {
					t.Fatal(err)
				}
			}
			v := fx.vocab
			var steps [][]float32
			ids, err := d.Generate(fx.prompt, len(fx.greedy), func(i int, logits []float32) { steps = append(steps, slices.Clone(logits)) })
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids, fx.greedy) {
				t.Errorf("greedy ids %v, torch %v", ids, fx.greedy)
			}
			for i, got := range steps {
				row := len(fx.prompt) - 1 + i
				approx.Slices(t, fmt.Sprintf("logits before generated token %d", i), got, fx.logits[row*v:(row+1)*v], 1e-4, 1e-5)
			}
			pre, err := d.Prefill(fx.prompt)
			if err != nil {
				t.Fatal(err)
			}
			approx.Slices(t, "prefill rows", pre, fx.logits[:len(fx.prompt)*v], 1e-4, 1e-5)
			if c.kind == "mixtral" {
				checkRouting(t, prefill, fx.topk, m.Decoder.Experts)
			}
			if a := testing.AllocsPerRun(5, func() { _, _ = d.Step(fx.greedy[0]) }); a != 0 {
				t.Errorf("a decode step of the loaded %s allocates %v times", c.kind, a)
			}
		})
	}
}

// checkRouting compares the prefill's captured expert ids with torch's
// [layers, tokens, k] and its per-expert counts with theirs.
func checkRouting(t *testing.T, prefill *kiln.CompiledGraph, want tensor.Tensor, experts int) {
	t.Helper()
	got, err := prefill.TakeMoETopKCapture()
	if err != nil {
		t.Fatal(err)
	}
	stats, err := prefill.TakeMoEResidencyStats()
	if err != nil {
		t.Fatal(err)
	}
	layers, per := want.Shape[0], want.Shape[1]*want.Shape[2]
	if len(got) != layers || len(stats.Layers) != layers {
		t.Fatalf("%d captured layers and %d in the stats, torch has %d", len(got), len(stats.Layers), layers)
	}
	for l := range layers {
		ids := want.I64()[l*per : (l+1)*per]
		counts := make([]int, experts)
		w := make([]uint32, per)
		for i, id := range ids {
			w[i] = uint32(id)
			counts[id]++
		}
		if !slices.Equal(got[l], w) {
			t.Errorf("layer %d: captured expert ids %v, torch %v", l, got[l], w)
		}
		if s := stats.Layers[l]; !slices.Equal(s.PerExpert, counts) || s.Resident != per || s.NonResident != 0 {
			t.Errorf("layer %d: stats %+v, want per expert %v, all %d resident", l, s, counts, per)
		}
	}
}

// copyCheckpoint copies a fixture folder to a temporary one a test may
// break.
func copyCheckpoint(t *testing.T, kind string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("testdata", "hf_"+kind)
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// editConfig rewrites dir/config.json with one field replaced (a JSON
// value) or removed (value "").
func editConfig(t *testing.T, dir, field, value string) {
	t.Helper()
	p := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if value == "" {
		delete(f, field)
	} else {
		f[field] = json.RawMessage(value)
	}
	if b, err = json.Marshal(f); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// editTensors rewrites dir/model.safetensors through edit, which gets
// the tensors by name.
func editTensors(t *testing.T, dir string, edit func(map[string]tensor.Tensor)) {
	t.Helper()
	p := filepath.Join(dir, "model.safetensors")
	f, err := safetensors.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	ts := map[string]tensor.Tensor{}
	for _, e := range f.Entries() {
		x, err := f.Tensor(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		ts[e.Name] = x.Clone()
	}
	f.Close()
	edit(ts)
	var named []safetensors.Named
	for name, x := range ts {
		named = append(named, safetensors.Named{Name: name, T: x})
	}
	if err := safetensors.WriteFile(p, named, nil); err != nil {
		t.Fatal(err)
	}
}

// TestLoadHFErrors: a missing folder, file or tensor, a malformed or
// unsupported config, and tensors of the wrong shape or dtype, left
// over or misplaced by the index, are errors naming what is wrong.
func TestLoadHFErrors(t *testing.T) {
	const layer0 = "model.layers.0.self_attn.q_proj.weight"
	cases := []struct {
		name, kind string
		edit       func(t *testing.T, dir string)
		want       string
	}{
		{"no folder", "qwen2", func(t *testing.T, dir string) { os.RemoveAll(dir) }, "checkpoint folder"},
		{"no config", "qwen2", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "config.json")) }, "config.json"},
		{"no weights", "qwen2", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "model.safetensors")) }, "no model.safetensors or model.safetensors.index.json"},
		{"bad json", "qwen2", func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, "config.json"), []byte("{"), 0o644) }, "config.json"},
		{"model type", "qwen2", func(t *testing.T, dir string) { editConfig(t, dir, "model_type", `"gpt2"`) }, `model_type "gpt2"`},
		{"architectures", "qwen2", func(t *testing.T, dir string) {
			editConfig(t, dir, "architectures", `["LlamaForCausalLM"]`)
		}, "architectures"},
		{"no hidden size", "qwen2", func(t *testing.T, dir string) { editConfig(t, dir, "hidden_size", "") }, "hidden_size is missing"},
		{"rope scaling", "llama", func(t *testing.T, dir string) {
			editConfig(t, dir, "rope_scaling", `{"rope_type": "llama3", "factor": 8.0}`)
		}, "rope_scaling"},
		{"rope type", "llama", func(t *testing.T, dir string) {
			editConfig(t, dir, "rope_parameters", `{"rope_type": "yarn", "rope_theta": 10000.0}`)
		}, "rope_parameters.rope_type"},
		{"sliding window", "qwen2", func(t *testing.T, dir string) { editConfig(t, dir, "use_sliding_window", "true") }, "use_sliding_window"},
		{"activation", "llama", func(t *testing.T, dir string) { editConfig(t, dir, "hidden_act", `"gelu"`) }, "hidden_act"},
		{"head dim", "llama", func(t *testing.T, dir string) { editConfig(t, dir, "head_dim", "16") }, "head_dim"},
		{"llama biases", "llama", func(t *testing.T, dir string) { editConfig(t, dir, "attention_bias", "true") }, "attention_bias"},
		{"heads", "qwen2", func(t *testing.T, dir string) { editConfig(t, dir, "num_key_value_heads", "3") }, "key/value heads"},
		{"cache too long", "qwen2", func(t *testing.T, dir string) { editConfig(t, dir, "max_position_embeddings", "8") }, "max_position_embeddings"},
		{"missing tensor", "qwen2", func(t *testing.T, dir string) {
			editTensors(t, dir, func(ts map[string]tensor.Tensor) { delete(ts, "model.layers.1.mlp.up_proj.weight") })
		}, `tensor "model.layers.1.mlp.up_proj.weight" is missing`},
		{"missing bias", "qwen2", func(t *testing.T, dir string) {
			editTensors(t, dir, func(ts map[string]tensor.Tensor) { delete(ts, "model.layers.0.self_attn.k_proj.bias") })
		}, `"model.layers.0.self_attn.k_proj.bias" is missing`},
		{"shape", "qwen2", func(t *testing.T, dir string) {
			editTensors(t, dir, func(ts map[string]tensor.Tensor) { ts[layer0] = tensor.New(tensor.BF16, 16, 64) })
		}, `tensor "` + layer0 + `" (model.safetensors) has shape [16 64]`},
		{"dtype", "qwen2", func(t *testing.T, dir string) {
			editTensors(t, dir, func(ts map[string]tensor.Tensor) { ts["model.norm.weight"] = tensor.New(tensor.I32, 32) })
		}, `tensor "model.norm.weight" (model.safetensors) is I32`},
		{"extra tensor", "qwen2", func(t *testing.T, dir string) {
			editTensors(t, dir, func(ts map[string]tensor.Tensor) {
				ts["model.layers.0.self_attn.o_proj.bias"] = tensor.New(tensor.BF16, 32)
			})
		}, "model.layers.0.self_attn.o_proj.bias"},
		{"mixtral window", "mixtral", func(t *testing.T, dir string) { editConfig(t, dir, "sliding_window", "8") }, "sliding_window is 8"},
		{"mixtral top k", "mixtral", func(t *testing.T, dir string) { editConfig(t, dir, "num_experts_per_tok", "5") }, "num_experts_per_tok is 5"},
		{"mixtral experts", "mixtral", func(t *testing.T, dir string) { editConfig(t, dir, "num_local_experts", "0") }, "num_local_experts is 0"},
		{"missing expert", "mixtral", func(t *testing.T, dir string) {
			editTensors(t, dir, func(ts map[string]tensor.Tensor) { delete(ts, "model.layers.1.block_sparse_moe.experts.3.w3.weight") })
		}, `tensor "model.layers.1.block_sparse_moe.experts.3.w3.weight" is missing`},
		{"missing router", "mixtral", func(t *testing.T, dir string) {
			editTensors(t, dir, func(ts map[string]tensor.Tensor) { delete(ts, "model.layers.0.block_sparse_moe.gate.weight") })
		}, `tensor "model.layers.0.block_sparse_moe.gate.weight" is missing`},
		{"expert shape", "mixtral", func(t *testing.T, dir string) {
			editTensors(t, dir, func(ts map[string]tensor.Tensor) {
				ts["model.layers.0.block_sparse_moe.experts.1.w2.weight"] = tensor.New(tensor.BF16, 16, 32)
			})
		}, `tensor "model.layers.0.block_sparse_moe.experts.1.w2.weight" (model.safetensors) has shape [16 32]`},
		{"extra expert", "mixtral", func(t *testing.T, dir string) {
			editTensors(t, dir, func(ts map[string]tensor.Tensor) {
				ts["model.layers.0.block_sparse_moe.experts.4.w1.weight"] = tensor.New(tensor.BF16, 16, 32)
			})
		}, "model.layers.0.block_sparse_moe.experts.4.w1.weight"},
		{"dense MLP in mixtral", "mixtral", func(t *testing.T, dir string) {
			editTensors(t, dir, func(ts map[string]tensor.Tensor) {
				ts["model.layers.0.mlp.up_proj.weight"] = tensor.New(tensor.BF16, 16, 32)
			})
		}, "model.layers.0.mlp.up_proj.weight"},
		{"index names a missing shard", "llama", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "model-00002-of-00002.safetensors"))
		}, "model-00002-of-00002.safetensors"},
		{"index leaves the folder", "llama", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "model.safetensors.index.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"model-00002-of-00002.safetensors"`, `"../model-00002-of-00002.safetensors"`, 1)), 0o644)
		}, "model-00002-of-00002.safetensors"},
		{"index misplaces a tensor", "llama", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "model.safetensors.index.json")
			b, _ := os.ReadFile(p)
			s := strings.Replace(string(b), `"model.norm.weight": "model-00002-of-00002.safetensors"`, `"model.norm.weight": "model-00001-of-00002.safetensors"`, 1)
			os.WriteFile(p, []byte(s), 0o644)
		}, `maps tensor "model.norm.weight" to model-00001-of-00002.safetensors`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyCheckpoint(t, c.kind)
			c.edit(t, dir)
			_, err := LoadHF(dir, 14)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestParseHFConfigMixtral: Mixtral's defaults are its Hugging Face
// config's (8 experts, top 2, 8 key/value heads, rope_theta 1e6,
// rms_norm_eps 1e-5), its training-only router fields are ignored, and a
// sliding window is accepted when at least as long as the cache (it then
// masks nothing) and refused one token shorter.
func TestParseHFConfigMixtral(t *testing.T) {
	const base = `"model_type": "mixtral", "vocab_size": 40, "hidden_size": 64, "intermediate_size": 24,
		"num_hidden_layers": 1, "num_attention_heads": 16, "router_aux_loss_coef": 0.02,
		"output_router_logits": true, "router_jitter_noise": 0.1`
	hc, err := ParseHFConfig([]byte(`{`+base+`}`), 20)
	if err != nil {
		t.Fatal(err)
	}
	c := hc.Decoder
	if c.Experts != 8 || c.ExpertsPerTok != 2 || c.KVHeads != 8 || c.RopeTheta != 1e6 || c.Eps != 1e-5 || c.QKVBias || c.FFN != 24 {
		t.Errorf("defaults: %+v", c)
	}
	hc, err = ParseHFConfig([]byte(`{`+base+`, "num_local_experts": 3, "num_experts_per_tok": 3, "sliding_window": 20}`), 20)
	if err != nil {
		t.Fatal(err)
	}
	if hc.Decoder.Experts != 3 || hc.Decoder.ExpertsPerTok != 3 {
		t.Errorf("experts %d, top %d; want 3 and 3", hc.Decoder.Experts, hc.Decoder.ExpertsPerTok)
	}
	if _, err := ParseHFConfig([]byte(`{`+base+`, "sliding_window": 19}`), 20); err == nil || !strings.Contains(err.Error(), "sliding_window is 19") {
		t.Errorf("a window shorter than the cache: error %v", err)
	}
}
