package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/kilnml/kiln/internal/demo"
)

// hfKinds are the Hugging Face model types the loader reads, by
// model_type, with the class names architectures may give.
var hfKinds = map[string]string{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "mixtral": "MixtralForCausalLM"}

// HFConfig is what the loader took from a checkpoint's config.json.
type HFConfig struct {
	Type    string // model_type: "llama", "qwen2" or "mixtral"
	Decoder demo.DecoderConfig
	// Tied: the LM head is the embedding matrix (tie_word_embeddings),
	// lm_head.weight is not read.
	Tied bool
	// MaxPositions is max_position_embeddings, 0 where absent.
	MaxPositions int
}

// hfFields is config.json's top-level object, field by field, so that
// presence, absence and null can be told apart.
type hfFields map[string]json.RawMessage

// has reports a field present and not null.
func (f hfFields) has(name string) bool {
	v, ok := f[name]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// get decodes a field into v, leaving v alone when it is absent or null.
func (f hfFields) get(name string, v any) error {
	if !f.has(name) {
		return nil
	}
	if err := json.Unmarshal(f[name], v); err != nil {
		return fmt.Errorf("config.json: %s: %w", name, err)
	}
	return nil
}

// size reads a positive integer field that must be present.
func (f hfFields) size(name string) (int, error) {
	if !f.has(name) {
		return 0, fmt.Errorf("config.json: %s is missing", name)
	}
	var n int
	if err := f.get(name, &n); err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("config.json: %s is %d, want a positive size", name, n)
	}
	return n, nil
}

// ParseHFConfig reads a Llama, Qwen2 or Mixtral config.json into the
// decoder's config, its cache maxSeq tokens long. Defaults are the
// Hugging Face configs' (num_key_value_heads = num_attention_heads,
// rope_theta 10000, rms_norm_eps 1e-6, untied embeddings; for Mixtral 8
// key/value heads, rope_theta 1e6, rms_norm_eps 1e-5, 8 experts of which
// each token takes 2); sizes have none and must be given. A field asking
// for something the decoder does not compute (rope_scaling, a sliding
// window, Mixtral's included when it is shorter than the cache, another
// activation, a head dim other than hidden_size / num_attention_heads,
// biases Llama does not have by default, quantized weights) is an error
// naming the field. Mixtral's training-only fields (router_aux_loss_coef,
// output_router_logits, router_jitter_noise) are ignored.
func ParseHFConfig(data []byte, maxSeq int) (HFConfig, error) {
	var f hfFields
	if err := json.Unmarshal(data, &f); err != nil {
		return HFConfig{}, fmt.Errorf("config.json: %w", err)
	}
	var hc HFConfig
	if err := hfKind(f, &hc); err != nil {
		return HFConfig{}, err
	}
	c := demo.DecoderConfig{MaxSeq: maxSeq, RopeTheta: 10000, Eps: 1e-6, QKVBias: hc.Type == "qwen2"}
	if hc.Type == "mixtral" {
		c.RopeTheta, c.Eps = 1e6, 1e-5
	}
	for _, s := range []struct {
		name string
		to   *int
	}{{"vocab_size", &c.Vocab}, {"hidden_size", &c.Hidden}, {"num_hidden_layers", &c.Layers},
		{"num_attention_heads", &c.Heads}, {"intermediate_size", &c.FFN}} {
		n, err := f.size(s.name)
		if err != nil {
			return HFConfig{}, err
		}
		*s.to = n
	}
	c.KVHeads = c.Heads
	if hc.Type == "mixtral" {
		c.KVHeads = 8
	}
	if f.has("num_key_value_heads") {
		n, err := f.size("num_key_value_heads")
		if err != nil {
			return HFConfig{}, err
		}
		c.KVHeads = n
	}
	eps := float64(c.Eps)
	if err := f.get("rms_norm_eps", &eps); err != nil {
		return HFConfig{}, err
	}
	if !(eps > 0 && eps < 1) {
		return HFConfig{}, fmt.Errorf("config.json: rms_norm_eps %g, want a small positive number", eps)
	}
	c.Eps = float32(eps)
	if err := hfRope(f, &c); err != nil {
		return HFConfig{}, err
	}
	if hc.Type == "mixtral" {
		if err := hfExperts(f, &c); err != nil {
			return HFConfig{}, err
		}
	}
	if err := f.get("tie_word_embeddings", &hc.Tied); err != nil {
		return HFConfig{}, err
	}
	if err := f.get("max_position_embeddings", &hc.MaxPositions); err != nil {
		return HFConfig{}, err
	}
	if err := hfUnsupported(f, c, hc.Type); err != nil {
		return HFConfig{}, err
	}
	if hc.MaxPositions > 0 && maxSeq > hc.MaxPositions {
		return HFConfig{}, fmt.Errorf("config.json: max_position_embeddings is %d, a cache of %d tokens is longer", hc.MaxPositions, maxSeq)
	}
	if err := c.Check(); err != nil {
		return HFConfig{}, fmt.Errorf("config.json: %w", err)
	}
	hc.Decoder = c
	return hc, nil
}

// hfKind reads model_type and architectures, which must agree.
func hfKind(f hfFields, hc *HFConfig) error {
	var arch []string
	if err := f.get("model_type", &hc.Type); err != nil {
		return err
	}
	if err := f.get("architectures", &arch); err != nil {
		return err
	}
	if hc.Type == "" && len(arch) == 1 {
		for t, a := range hfKinds {
			if a == arch[0] {
				hc.Type = t
			}
		}
	}
	want, ok := hfKinds[hc.Type]
	if !ok {
		return fmt.Errorf("config.json: model_type %q (architectures %q): kiln reads llama, qwen2 and mixtral", hc.Type, arch)
	}
	if len(arch) > 0 && !slices.Equal(arch, []string{want}) {
		return fmt.Errorf("config.json: architectures %q, want [%q] for model_type %q", arch, want, hc.Type)
	}
	return nil
}

// hfExperts reads Mixtral's num_local_experts and num_experts_per_tok
// and checks its sliding_window, which Mixtral applies whenever it is
// set: a window at least as long as the cache masks nothing.
func hfExperts(f hfFields, c *demo.DecoderConfig) error {
	c.Experts, c.ExpertsPerTok = 8, 2
	for _, s := range []struct {
		name string
		to   *int
	}{{"num_local_experts", &c.Experts}, {"num_experts_per_tok", &c.ExpertsPerTok}} {
		if f.has(s.name) {
			n, err := f.size(s.name)
			if err != nil {
				return err
			}
			*s.to = n
		}
	}
	if c.ExpertsPerTok > c.Experts {
		return fmt.Errorf("config.json: num_experts_per_tok is %d, more than the %d experts of num_local_experts", c.ExpertsPerTok, c.Experts)
	}
	if f.has("sliding_window") {
		var w int
		if err := f.get("sliding_window", &w); err != nil {
			return err
		}
		if w < c.MaxSeq {
			return fmt.Errorf("config.json: sliding_window is %d: not supported (kiln's decoder attends over the whole cache of %d tokens; a window of at least that, or null, is the same)", w, c.MaxSeq)
		}
	}
	return nil
}

// hfRope reads rope_theta, or the rope_parameters object of newer
// configs, which must be of the default kind.
func hfRope(f hfFields, c *demo.DecoderConfig) error {
	if err := f.get("rope_theta", &c.RopeTheta); err != nil {
		return err
	}
	if f.has("rope_parameters") {
		var rp map[string]json.RawMessage
		if err := f.get("rope_parameters", &rp); err != nil {
			return err
		}
		for k, v := range rp {
			var err error
			switch k {
			case "rope_type":
				var t string
				if err = json.Unmarshal(v, &t); err == nil && t != "default" {
					err = fmt.Errorf("%q, kiln computes only the default rotary embedding", t)
				}
			case "rope_theta":
				err = json.Unmarshal(v, &c.RopeTheta)
			default:
				err = fmt.Errorf("not supported (only rope_type default and rope_theta are)")
			}
			if err != nil {
				return fmt.Errorf("config.json: rope_parameters.%s: %w", k, err)
			}
		}
	}
	if !(c.RopeTheta > 1) || math.IsInf(c.RopeTheta, 0) {
		return fmt.Errorf("config.json: rope_theta %g, want a base above 1", c.RopeTheta)
	}
	return nil
}

// hfUnsupported names the first field whose value asks for something the
// decoder does not compute.
func hfUnsupported(f hfFields, c demo.DecoderConfig, kind string) error {
	bad := func(name, want string) error {
		return fmt.Errorf("config.json: %s is %s: not supported (kiln's decoder needs %s)", name, bytes.TrimSpace(f[name]), want)
	}
	if f.has("rope_scaling") {
		return bad("rope_scaling", "null: the default rotary embedding")
	}
	if f.has("quantization_config") {
		return bad("quantization_config", "float weights")
	}
	var act string
	if err := f.get("hidden_act", &act); err != nil {
		return err
	}
	if act != "" && act != "silu" {
		return bad("hidden_act", `"silu" (SwiGLU)`)
	}
	hd := c.HeadDim()
	if f.has("head_dim") {
		var n int
		if err := f.get("head_dim", &n); err != nil || n != hd {
			return bad("head_dim", fmt.Sprintf("hidden_size / num_attention_heads = %d", hd))
		}
	}
	partial := 1.0
	if err := f.get("partial_rotary_factor", &partial); err != nil {
		return err
	}
	if partial != 1 {
		return bad("partial_rotary_factor", "1: rotation of the whole head")
	}
	flags := []string{"mlp_bias", "use_sliding_window"}
	if kind != "qwen2" {
		flags = append(flags, "attention_bias") // Qwen2 always has q/k/v biases
	}
	for _, name := range flags {
		var on bool
		if err := f.get(name, &on); err != nil {
			return err
		}
		if on {
			return bad(name, "false")
		}
	}
	var layers []string
	if err := f.get("layer_types", &layers); err != nil {
		return err
	}
	for _, t := range layers {
		if t != "full_attention" {
			return bad("layer_types", `"full_attention" in every layer`)
		}
	}
	return nil
}
