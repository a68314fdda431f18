#!/usr/bin/python3
"""A Mixtral-style mixture-of-experts model in torch, float64, with random
weights: moe_torch.json, read by the kiln package's TestMoETorch.

Run from this directory:  /usr/bin/python3 gen_moe_torch.py
(Debian's python3-torch 1.13). The seed is fixed, so a re-run writes the
same file.

The model is the MoE half of Mixtral's decoder layer, twice:

    h = x
    for each layer:  h = h + SparseMoeBlock(RMSNorm(h))

SparseMoeBlock is Mixtral's (transformers' MixtralSparseMoeBlock,
written out here): router logits = gate(x) (a bias-free Linear H -> E),
softmax over the E experts, torch.topk(k), the k weights divided by
their sum, and each selected expert's w2(silu(w1 x) * w3 x) (bias-free
Linears, H -> F -> H) summed with those weights. RMSNorm is
x * rsqrt(mean(x^2) + eps) * weight.

Weights and inputs are drawn in float32 and the model runs in float64 on
those values. The file holds the weights in kiln's layout (router
[H, E]; gate and up [E, H, F], the Linears' weights transposed and
stacked; down [E, F, H]), the input x [B, S, H], the output, and each
layer's torch.topk indices [B*S, k] (largest first).

Ties in torch.topk are broken differently on different devices and
versions, and kiln's TopK puts the lower index first; so the script
checks that no two selected scores, nor the k-th and the next, are
within 1e-4 of each other (kiln computes the scores in float32), and
fails otherwise.
"""

import base64
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))

B, S, H, FF, E, K, LAYERS, EPS = 2, 5, 16, 24, 8, 2, 2, 1e-5
MARGIN = 1e-4


def enc(a, dt):
    a = np.ascontiguousarray(np.asarray(a).astype({"f32": "<f4", "i64": "<i8"}[dt]))
    return {"dtype": dt, "shape": [int(d) for d in a.shape], "b64": base64.b64encode(a.tobytes()).decode("ascii")}


def f32(r, shape, scale):
    return torch.from_numpy((r.standard_normal(shape) * scale).astype(np.float32).astype(np.float64))


def rmsnorm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


def moe_block(x, lay):
    """Mixtral's sparse MoE block over tokens x [T, H]; returns the output
    and the top-k indices."""
    logits = x @ lay["router"]  # gate(x): Linear(H, E) with weight router^T
    probs = F.softmax(logits, dim=1)
    top, idx = torch.topk(probs, K, dim=-1)
    s = torch.sort(probs, dim=-1, descending=True).values
    gaps = s[:, :K] - s[:, 1:K + 1]
    assert float(gaps.min()) > MARGIN, "routing too close to a tie: change the seed"
    top = top / top.sum(dim=-1, keepdim=True)
    out = torch.zeros_like(x)
    for t in range(x.shape[0]):
        for j in range(K):
            e = int(idx[t, j])
            h = F.silu(x[t] @ lay["gate"][e]) * (x[t] @ lay["up"][e])
            out[t] += top[t, j] * (h @ lay["down"][e])
    return out, idx


def main():
    r = np.random.default_rng(2626)
    layers = []
    for _ in range(LAYERS):
        layers.append({
            "norm": 1 + f32(r, (H,), 0.1),
            "router": f32(r, (H, E), 1.0),
            "gate": f32(r, (E, H, FF), H ** -0.5),
            "up": f32(r, (E, H, FF), H ** -0.5),
            "down": f32(r, (E, FF, H), FF ** -0.5),
        })
    x = f32(r, (B, S, H), 1.0)
    h = x.reshape(B * S, H)
    ids = []
    for lay in layers:
        y, idx = moe_block(rmsnorm(h, lay["norm"]), lay)
        h = h + y
        ids.append(idx)
    tensors = {"x": enc(x.numpy(), "f32"), "y": enc(h.reshape(B, S, H).numpy(), "f32")}
    for i, lay in enumerate(layers):
        for name, v in lay.items():
            tensors["%s%d" % (name, i)] = enc(v.numpy(), "f32")
        tensors["topk%d" % i] = enc(ids[i].numpy(), "i64")
    doc = {"generator": "internal/testmodels/testdata/gen_moe_torch.py; do not edit by hand",
           "config": {"batch": B, "seq": S, "hidden": H, "ffn": FF, "experts": E, "k": K, "layers": LAYERS, "eps": EPS},
           "tensors": tensors}
    with open(os.path.join(HERE, "moe_torch.json"), "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
