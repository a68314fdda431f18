"""Writes the Hugging Face checkpoints of TestLoadHFMatchesTorch.

Three tiny checkpoints with seeded random weights, laid out as the Hugging
Face transformers library saves them (config.json and safetensors files,
tensors under the library's names, nn.Linear weights [out, in]):

  hf_llama/   LlamaForCausalLM, F16 weights, an untied lm_head, one
              key/value head for four query heads, sharded over two files
              with model.safetensors.index.json
  hf_qwen2/   Qwen2ForCausalLM, BF16 weights, q/k/v biases, tied
              embeddings (no lm_head.weight), rope_theta 1e6, one file
  hf_mixtral/ MixtralForCausalLM, BF16 weights, every layer's MLP a sparse
              mixture of 4 SwiGLU experts of which each token takes 2

and beside each, NAME_expected.safetensors: a prompt, the greedy ids that
follow it (each step recomputing the whole sequence, no cache) and the
logits of every row of the final sequence but the last, all computed by
PyTorch in float64 from the stored (rounded) weights. For Mixtral it also
holds topk_ids [layers, prompt, k]: the experts each layer's router chose
for each prompt token, in torch.topk's order (best first).

There is no transformers package here, so the forward pass is written out
below after modeling_llama.py and modeling_qwen2.py: RMSNorm
weight * x * rsqrt(mean(x^2) + eps); rotary embeddings with
inv_freq = theta^(-arange(0, d, 2)/d), cos/sin of cat(freqs, freqs) and
q*cos + rotate_half(q)*sin; repeat_kv; softmax(q k^T / sqrt(d) + causal)
v; o_proj; down_proj(silu(gate_proj(x)) * up_proj(x)); a final norm and
lm_head (the embedding matrix when tied). Qwen2 differs only in the
biases of q_proj, k_proj and v_proj. Mixtral's MLP, after
modeling_mixtral.py's MixtralSparseMoeBlock: router logits = gate(x),
softmax over all experts, torch.topk of k, the k weights divided by their
sum, and the sum over the chosen experts e of weight *
w2(silu(w1(x)) * w3(x)). Routing is checked to be far from ties (every
gap between neighbouring scores of a token's top k+1 above MARGIN), so
float32 rounding cannot change which experts kiln picks or their order.

    python3 internal/decode/testdata/gen_hf_decoder.py

(torch 1.13; the files are written by gen_torch_decoder.save_safetensors.)
"""
import json
import os

import torch

from gen_torch_decoder import rotate_half, save_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))

KINDS = {
    "llama": dict(
        config=dict(architectures=["LlamaForCausalLM"], model_type="llama", vocab_size=67, hidden_size=32,
                    intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1,
                    rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None, tie_word_embeddings=False,
                    max_position_embeddings=64, hidden_act="silu", attention_bias=False, mlp_bias=False,
                    attention_dropout=0.0, bos_token_id=1, eos_token_id=2, initializer_range=0.02,
                    pretraining_tp=1, torch_dtype="float16", use_cache=True, transformers_version="4.44.0"),
        dtype=torch.float16, shards=2, prompt=5, new=8, seed=251, embed_std=0.5, out_gain=1),
    "qwen2": dict(
        config=dict(architectures=["Qwen2ForCausalLM"], model_type="qwen2", vocab_size=53, hidden_size=32,
                    intermediate_size=40, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                    rms_norm_eps=1e-6, rope_theta=1000000.0, rope_scaling=None, tie_word_embeddings=True,
                    max_position_embeddings=64, hidden_act="silu", use_sliding_window=False, sliding_window=64,
                    max_window_layers=2, attention_dropout=0.0, bos_token_id=1, eos_token_id=2,
                    initializer_range=0.02, torch_dtype="bfloat16", use_cache=True, transformers_version="4.44.0"),
        dtype=torch.bfloat16, shards=1, prompt=6, new=8, seed=252,
        # Random tied models tend to repeat their last token: a smaller
        # embedding and stronger layer outputs keep the ids from being
        # one token eight times.
        embed_std=0.1, out_gain=2),
    "mixtral": dict(
        config=dict(architectures=["MixtralForCausalLM"], model_type="mixtral", vocab_size=59, hidden_size=32,
                    intermediate_size=16, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                    num_local_experts=4, num_experts_per_tok=2, rms_norm_eps=1e-5, rope_theta=1000000.0,
                    sliding_window=None, tie_word_embeddings=False, max_position_embeddings=64, hidden_act="silu",
                    output_router_logits=False, router_aux_loss_coef=0.02, router_jitter_noise=0.0,
                    attention_dropout=0.0, bos_token_id=1, eos_token_id=2, initializer_range=0.02,
                    torch_dtype="bfloat16", use_cache=True, transformers_version="4.44.0"),
        dtype=torch.bfloat16, shards=1, prompt=6, new=8, seed=253, embed_std=0.5, out_gain=1),
}

# The smallest gap allowed between neighbouring router scores of a
# token's top k+1 experts (softmax probabilities; kiln's float32 error in
# them is about 1e-6).
MARGIN = 1e-4


def weights(cfg, spec, gen):
    dtype = spec["dtype"]
    h, nh, nkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd, ffn, vocab = h // nh, cfg["intermediate_size"], cfg["vocab_size"]

    def rnd(*shape, std=1.0, mean=0.0):
        return (mean + std * torch.randn(*shape, generator=gen, dtype=torch.float64)).to(dtype)

    def linear(o, i, gain=1):
        return rnd(o, i, std=gain * i ** -0.5)

    w = {"model.embed_tokens.weight": rnd(vocab, h, std=spec["embed_std"])}
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = rnd(h, std=0.05, mean=1)
        w[p + "self_attn.q_proj.weight"] = linear(nh * hd, h)
        w[p + "self_attn.k_proj.weight"] = linear(nkv * hd, h)
        w[p + "self_attn.v_proj.weight"] = linear(nkv * hd, h)
        if cfg["model_type"] == "qwen2":
            w[p + "self_attn.q_proj.bias"] = rnd(nh * hd, std=0.3)
            w[p + "self_attn.k_proj.bias"] = rnd(nkv * hd, std=0.3)
            w[p + "self_attn.v_proj.bias"] = rnd(nkv * hd, std=0.3)
        w[p + "self_attn.o_proj.weight"] = linear(h, nh * hd, spec["out_gain"])
        w[p + "post_attention_layernorm.weight"] = rnd(h, std=0.05, mean=1)
        if cfg["model_type"] == "mixtral":
            w[p + "block_sparse_moe.gate.weight"] = linear(cfg["num_local_experts"], h, 2)
            for e in range(cfg["num_local_experts"]):
                q = p + f"block_sparse_moe.experts.{e}."
                w[q + "w1.weight"] = linear(ffn, h)
                w[q + "w3.weight"] = linear(ffn, h)
                w[q + "w2.weight"] = linear(h, ffn, spec["out_gain"])
            continue
        w[p + "mlp.gate_proj.weight"] = linear(ffn, h)
        w[p + "mlp.up_proj.weight"] = linear(ffn, h)
        w[p + "mlp.down_proj.weight"] = linear(h, ffn, spec["out_gain"])
    w["model.norm.weight"] = rnd(h, std=0.05, mean=1)
    if not cfg["tie_word_embeddings"]:
        w["lm_head.weight"] = linear(vocab, h)
    return w


def sparse_moe(cfg, w, p, h, routed):
    """Mixtral's MLP over h [s, hidden]; appends the top-k ids [s, k] to routed."""
    k = cfg["num_experts_per_tok"]
    scores = torch.softmax(torch.nn.functional.linear(h, w[p + "block_sparse_moe.gate.weight"]), dim=-1)
    top = scores.sort(dim=-1, descending=True).values[:, :k + 1]
    gap = float((top[:, :-1] - top[:, 1:]).min())
    assert gap > MARGIN, f"routing too close to a tie ({gap:.2e}): change the seed"
    weights, ids = torch.topk(scores, k, dim=-1)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    routed.append(ids)
    out = torch.zeros_like(h)
    for t in range(h.shape[0]):
        for j in range(k):
            q = p + f"block_sparse_moe.experts.{int(ids[t, j])}."
            x = h[t]
            y = torch.nn.functional.silu(x @ w[q + "w1.weight"].T) * (x @ w[q + "w3.weight"].T)
            out[t] += weights[t, j] * (y @ w[q + "w2.weight"].T)
    return out


def forward(cfg, w, ids, routed=None):
    """The logits [len(ids), vocab] of a causal forward pass, float64.
    For Mixtral, each layer's top-k expert ids go to routed (a list)."""
    routed = [] if routed is None else routed
    w = {k: v.double() for k, v in w.items()}
    s, nh, nkv = len(ids), cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg["hidden_size"] // nh
    eps = cfg["rms_norm_eps"]

    def rms(x, weight):
        return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def linear(x, name):
        return torch.nn.functional.linear(x, w[name + ".weight"], w.get(name + ".bias"))

    x = w["model.embed_tokens.weight"][torch.tensor(ids)]  # [s, h]
    inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    emb = torch.outer(torch.arange(s, dtype=torch.float64), inv_freq)
    emb = torch.cat((emb, emb), dim=-1)
    cos, sin = emb.cos(), emb.sin()  # [s, hd]
    causal = torch.full((s, s), float("-inf"), dtype=torch.float64).triu(1)
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = rms(x, w[p + "input_layernorm.weight"])
        q = linear(h, p + "self_attn.q_proj").view(s, nh, hd).transpose(0, 1)  # [nh, s, hd]
        k = linear(h, p + "self_attn.k_proj").view(s, nkv, hd).transpose(0, 1)
        v = linear(h, p + "self_attn.v_proj").view(s, nkv, hd).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        rep = nh // nkv  # repeat_kv
        k = k[:, None].expand(nkv, rep, s, hd).reshape(nh, s, hd)
        v = v[:, None].expand(nkv, rep, s, hd).reshape(nh, s, hd)
        a = torch.softmax(q @ k.transpose(1, 2) / hd ** 0.5 + causal, dim=-1) @ v
        x = x + linear(a.transpose(0, 1).reshape(s, nh * hd), p + "self_attn.o_proj")
        h = rms(x, w[p + "post_attention_layernorm.weight"])
        if cfg["model_type"] == "mixtral":
            x = x + sparse_moe(cfg, w, p, h, routed)
            continue
        mlp = torch.nn.functional.silu(linear(h, p + "mlp.gate_proj")) * linear(h, p + "mlp.up_proj")
        x = x + linear(mlp, p + "mlp.down_proj")
    head = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    return rms(x, w["model.norm.weight"]) @ head.T


def write_checkpoint(path, w, shards):
    os.makedirs(path, exist_ok=True)
    for f in os.listdir(path):
        if f.endswith(".safetensors") or f.endswith(".index.json"):
            os.remove(os.path.join(path, f))
    meta = {"format": "pt"}
    if shards == 1:
        save_safetensors(os.path.join(path, "model.safetensors"), w, meta)
        return
    # Shard 1: the embeddings and layer 0; shard 2: the rest.
    names = sorted(w)
    first = [n for n in names if n.startswith("model.embed_tokens") or n.startswith("model.layers.0.")]
    parts = [first, [n for n in names if n not in first]]
    weight_map = {}
    for i, part in enumerate(parts):
        fname = f"model-{i + 1:05d}-of-{len(parts):05d}.safetensors"
        save_safetensors(os.path.join(path, fname), {n: w[n] for n in part}, meta)
        weight_map.update({n: fname for n in part})
    total = sum(t.numel() * t.element_size() for t in w.values())
    with open(os.path.join(path, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2, sort_keys=True)
        f.write("\n")


def main():
    for kind, spec in KINDS.items():
        cfg = spec["config"]
        gen = torch.Generator().manual_seed(spec["seed"])
        w = weights(cfg, spec, gen)
        prompt = torch.randint(0, cfg["vocab_size"], (spec["prompt"],), generator=gen).tolist()
        seq, margins = list(prompt), []
        for _ in range(spec["new"]):
            last = forward(cfg, w, seq)[-1]
            top = last.topk(2).values
            margins.append(float(top[0] - top[1]))
            seq.append(int(last.argmax()))
        logits = forward(cfg, w, seq[:-1])  # row i predicts token i+1
        path = os.path.join(HERE, "hf_" + kind)
        write_checkpoint(path, w, spec["shards"])
        with open(os.path.join(path, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2, sort_keys=True)
            f.write("\n")
        expected = {
            "prompt": torch.tensor(prompt, dtype=torch.int64),
            "greedy_ids": torch.tensor(seq[len(prompt):], dtype=torch.int64),
            "logits": logits.float(),
        }
        if kind == "mixtral":
            routed = []
            forward(cfg, w, prompt, routed)  # the prefill's routing
            expected["topk_ids"] = torch.stack(routed)
        save_safetensors(os.path.join(HERE, f"hf_{kind}_expected.safetensors"), expected, {"torch": torch.__version__})
        print(f"{kind}: greedy {seq[len(prompt):]}, smallest top-2 margin {min(margins):.4f}")


if __name__ == "__main__":
    main()
