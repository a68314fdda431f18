"""Writes decoder_tiny.safetensors, the fixture of TestDecodeMatchesTorch.

It holds seeded random weights for kiln's demo.DecoderTiny under kiln's
param names (matrices [in, out], as the graph's MatMul takes them), a
prompt, and what PyTorch computes from them in float64: the greedy ids
generated after the prompt (each step recomputing the whole sequence,
no cache) and the logits of every row of the final sequence. The forward
pass follows the Hugging Face Llama modelling code: RMSNorm
x * rsqrt(mean(x^2) + eps) * w, rotary embeddings with rotate_half and
inv_freq = theta^(-arange(0, d, 2)/d), key/value heads repeated to the
query heads (repeat_kv), a causal mask, SwiGLU down(silu(gate(x)) * up(x)).

    python3 internal/decode/testdata/gen_torch_decoder.py

(torch 1.13; the safetensors file is written by save_safetensors below,
the format being an 8-byte header length, a JSON header and the raw
little-endian data. Rerun only when the config changes.)
"""
import json
import os
import struct

import torch

CFG = dict(vocab=61, hidden=32, layers=2, heads=4, kv_heads=2, ffn=48, max_seq=24, rope_theta=10000.0, eps=1e-5)
PROMPT, NEW = 8, 12


def weights(gen):
    c = CFG
    h, hd = c["hidden"], c["hidden"] // c["heads"]

    def mat(i, o):
        return (torch.randn(i, o, generator=gen, dtype=torch.float64) / i ** 0.5).float()

    def scale(n):
        return (1 + 0.05 * torch.randn(n, generator=gen, dtype=torch.float64)).float()

    w = {"embeddings.word": (0.5 * torch.randn(c["vocab"], h, generator=gen, dtype=torch.float64)).float()}
    for l in range(c["layers"]):
        p = f"layer{l}."
        w[p + "attn_norm.scale"] = scale(h)
        w[p + "q.weight"] = mat(h, c["heads"] * hd)
        w[p + "k.weight"] = mat(h, c["kv_heads"] * hd)
        w[p + "v.weight"] = mat(h, c["kv_heads"] * hd)
        w[p + "o.weight"] = mat(c["heads"] * hd, h)
        w[p + "mlp_norm.scale"] = scale(h)
        w[p + "gate.weight"] = mat(h, c["ffn"])
        w[p + "up.weight"] = mat(h, c["ffn"])
        w[p + "down.weight"] = mat(c["ffn"], h)
    w["final_norm.scale"] = scale(h)
    w["lm_head.weight"] = mat(h, c["vocab"])
    return w


def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + CFG["eps"]) * w


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def forward(w, ids):
    c = CFG
    s, nh, nkv = len(ids), c["heads"], c["kv_heads"]
    hd = c["hidden"] // nh
    w = {k: v.double() for k, v in w.items()}
    x = w["embeddings.word"][torch.tensor(ids)]  # [s, h]
    inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    freqs = torch.outer(torch.arange(s, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()  # [s, hd]
    causal = torch.full((s, s), float("-inf"), dtype=torch.float64).triu(1)
    for l in range(c["layers"]):
        p = f"layer{l}."
        h = rms(x, w[p + "attn_norm.scale"])
        q = (h @ w[p + "q.weight"]).view(s, nh, hd).transpose(0, 1)  # [nh, s, hd]
        k = (h @ w[p + "k.weight"]).view(s, nkv, hd).transpose(0, 1)
        v = (h @ w[p + "v.weight"]).view(s, nkv, hd).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        rep = nh // nkv  # repeat_kv: query head i reads key/value head i // rep
        k = k[:, None].expand(nkv, rep, s, hd).reshape(nh, s, hd)
        v = v[:, None].expand(nkv, rep, s, hd).reshape(nh, s, hd)
        a = torch.softmax(q @ k.transpose(1, 2) / hd ** 0.5 + causal, dim=-1) @ v
        x = x + a.transpose(0, 1).reshape(s, nh * hd) @ w[p + "o.weight"]
        h = rms(x, w[p + "mlp_norm.scale"])
        x = x + (torch.nn.functional.silu(h @ w[p + "gate.weight"]) * (h @ w[p + "up.weight"])) @ w[p + "down.weight"]
    return rms(x, w["final_norm.scale"]) @ w["lm_head.weight"]


def save_safetensors(path, tensors, metadata):
    dtypes = {torch.float32: "F32", torch.int64: "I64", torch.float16: "F16", torch.bfloat16: "BF16"}
    header, blobs, off = {"__metadata__": metadata}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        # numpy has no bfloat16: its bits go out as int16.
        b = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()
        header[name] = {"dtype": dtypes[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def main():
    gen = torch.Generator().manual_seed(25)
    w = weights(gen)
    prompt = torch.randint(0, CFG["vocab"], (PROMPT,), generator=gen).tolist()
    seq = list(prompt)
    for _ in range(NEW):
        seq.append(int(forward(w, seq)[-1].argmax()))
    logits = forward(w, seq[:-1])  # row i predicts token i+1
    out = dict(w)
    out["prompt"] = torch.tensor(prompt, dtype=torch.int64)
    out["greedy_ids"] = torch.tensor(seq[PROMPT:], dtype=torch.int64)
    out["logits"] = logits.float()
    meta = {"config": json.dumps(CFG), "torch": torch.__version__}
    save_safetensors(os.path.join(os.path.dirname(os.path.abspath(__file__)), "decoder_tiny.safetensors"), out, meta)


if __name__ == "__main__":
    main()
