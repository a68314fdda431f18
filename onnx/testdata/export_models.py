#!/usr/bin/python3
"""Builds small PyTorch models with fixed seeds, exports them to ONNX and
saves PyTorch's outputs, for onnx/models_test.go and the benchmarks.

Needs Debian's python3-torch and python3-onnx; run with

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 export_models.py [--bench DIR]

Without --bench it writes the test models (each well under 1 MB) to
models/<name>/ next to this script: model.onnx, in_<input>.npy and
out_<output>.npy. With --bench it writes the larger benchmark variants
(a MiniLM-sized encoder at sequence 128, a wider MLP and CNN; see
bench_models) to DIR, with a symbolic batch dim, and each input set with
PyTorch's outputs under DIR/<model>/<set>/.

The models:

  mlp   Linear-ReLU-Linear-GELU-Linear on [4, 32] -> [4, 10].
  bert  a BERT-style encoder written out by hand: token and position
        embeddings, LayerNorm, 2 layers of 4-head self-attention with an
        additive padding mask and a GELU (erf) feed-forward, a tanh pooler
        on the first token; vocab 100, hidden 64, sequence 16, batch 2.
        Inputs input_ids (int64) and attention_mask (int64, 1 = keep).
  cnn   ResNet-style: conv-bn-relu stem, a residual block, a strided
        block with a 1x1 projection shortcut, max pooling, global average
        pooling and a linear head, on [1, 3, 32, 32]. BatchNorm runs in
        eval mode with non-trivial running statistics.

Exports use opset 14 and do_constant_folding=True, as users do.
"""
import argparse
import math
import os

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 14


class MLP(nn.Module):
    def __init__(self, d_in, hidden, d_out):
        super().__init__()
        self.l1 = nn.Linear(d_in, hidden)
        self.l2 = nn.Linear(hidden, hidden)
        self.l3 = nn.Linear(hidden, d_out)

    def forward(self, x):
        return self.l3(nn.functional.gelu(self.l2(torch.relu(self.l1(x)))))


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads, self.dh = heads, hidden // heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.up = nn.Linear(hidden, ffn)
        self.down = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.dh).transpose(1, 2)

    def forward(self, x, mask_add):
        b, s, h = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.dh) + mask_add
        ctx = torch.softmax(scores, dim=-1) @ v
        ctx = ctx.transpose(1, 2).reshape(b, s, h)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.down(nn.functional.gelu(self.up(x))))


class Bert(nn.Module):
    def __init__(self, vocab, hidden, layers, heads, ffn, max_seq):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_seq, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, ffn) for _ in range(layers))
        self.pool = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        x = self.ln(self.tok(input_ids) + self.pos(pos))
        mask_add = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_add)
        return x, torch.tanh(self.pool(x[:, 0]))


class Block(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.c1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(c_out)
        self.c2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(c_out)
        self.short = None
        if stride != 1 or c_in != c_out:
            self.short = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x):
        y = self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))
        return torch.relu(y + (x if self.short is None else self.short(x)))


class CNN(nn.Module):
    def __init__(self, widths, classes):
        super().__init__()
        w0, w1, w2 = widths
        self.stem = nn.Sequential(nn.Conv2d(3, w0, 3, 1, 1, bias=False), nn.BatchNorm2d(w0), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.blocks = nn.Sequential(Block(w0, w0, 1), Block(w0, w1, 2), Block(w1, w2, 2))
        self.head = nn.Linear(w2, classes)

    def forward(self, x):
        x = self.blocks(self.pool(self.stem(x)))
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def randomize_bn(model, gen):
    """Eval-mode BatchNorm with running stats far from (0, 1), so a wrong
    mapping cannot pass as the identity."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=gen) * 0.5)
            m.running_var.copy_(torch.rand(c, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(c, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(c, generator=gen) * 0.2)


def export(model, inputs, in_names, out_names, out_dir, dynamic_batch=False):
    os.makedirs(out_dir, exist_ok=True)
    model.eval()
    with torch.no_grad():
        outs = model(*inputs)
    if isinstance(outs, torch.Tensor):
        outs = (outs,)
    axes = None
    if dynamic_batch:
        axes = {n: {0: "batch"} for n in in_names + out_names}
    torch.onnx.export(model, tuple(inputs), os.path.join(out_dir, "model.onnx"), opset_version=OPSET,
                      do_constant_folding=True, input_names=in_names, output_names=out_names,
                      dynamic_axes=axes)
    for n, t in zip(in_names, inputs):
        np.save(os.path.join(out_dir, f"in_{n}.npy"), t.numpy())
    for n, t in zip(out_names, outs):
        np.save(os.path.join(out_dir, f"out_{n}.npy"), t.numpy())
    print(f"{out_dir}: {os.path.getsize(os.path.join(out_dir, 'model.onnx'))} bytes")


def bert_inputs(gen, vocab, batch, seq):
    ids = torch.randint(0, vocab, (batch, seq), generator=gen)
    mask = torch.ones(batch, seq, dtype=torch.int64)
    for b in range(1, batch):  # later rows padded at the end
        mask[b, seq - seq // (b + 2):] = 0
    return ids, mask


def small(root):
    gen = torch.Generator().manual_seed(1)
    torch.manual_seed(1)
    export(MLP(32, 64, 10), [torch.randn(4, 32, generator=gen)], ["x"], ["y"], os.path.join(root, "mlp"))

    torch.manual_seed(2)
    gen = torch.Generator().manual_seed(2)
    bert = Bert(vocab=100, hidden=64, layers=2, heads=4, ffn=256, max_seq=16)
    export(bert, list(bert_inputs(gen, 100, 2, 16)), ["input_ids", "attention_mask"],
           ["last_hidden_state", "pooled"], os.path.join(root, "bert"))

    torch.manual_seed(3)
    gen = torch.Generator().manual_seed(3)
    cnn = CNN((8, 16, 32), 10)
    randomize_bn(cnn, gen)
    export(cnn, [torch.randn(1, 3, 32, 32, generator=gen)], ["x"], ["logits"], os.path.join(root, "cnn"))


def bench_models(only=None):
    """The benchmark variants, built from fixed seeds (bench/onnx's
    torch_bench.py rebuilds them here to time PyTorch on the same
    weights): name -> (module, input sets, input names, output names).

    bert: MiniLM-sized (hidden 384, 6 layers, 12 heads, FFN 1536; vocab
          cut to 1000, which changes only the embedding table's size) at
          sequence 128, batch 1 and 8;
    mlp:  1024-2048-2048-1024 at batch 16;
    cnn:  the ResNet-style CNN with widths 32/64/128 on 3x128x128.

    Each model is seeded on its own, so building only one (only="bert")
    gives the same weights."""
    out = {}
    if only in (None, "bert"):
        torch.manual_seed(11)
        gen = torch.Generator().manual_seed(11)
        bert = Bert(vocab=1000, hidden=384, layers=6, heads=12, ffn=1536, max_seq=128)
        out["bert"] = (bert, {"b1": list(bert_inputs(gen, 1000, 1, 128)), "b8": list(bert_inputs(gen, 1000, 8, 128))},
                       ["input_ids", "attention_mask"], ["last_hidden_state", "pooled"])
    if only in (None, "mlp"):
        torch.manual_seed(12)
        gen = torch.Generator().manual_seed(12)
        out["mlp"] = (MLP(1024, 2048, 1024), {"b16": [torch.randn(16, 1024, generator=gen)]}, ["x"], ["y"])
    if only in (None, "cnn"):
        torch.manual_seed(13)
        gen = torch.Generator().manual_seed(13)
        cnn = CNN((32, 64, 128), 1000)
        randomize_bn(cnn, gen)
        out["cnn"] = (cnn, {"b1": [torch.randn(1, 3, 128, 128, generator=gen)]}, ["x"], ["logits"])
    for m, *_ in out.values():
        m.eval()
    return out


def bench(root):
    """Writes DIR/<model>/model.onnx (batch dim symbolic) and, per input
    set, DIR/<model>/<set>/in_*.npy and out_*.npy."""
    for name, (model, sets, in_names, out_names) in bench_models().items():
        first = next(iter(sets.values()))
        export(model, first, in_names, out_names, os.path.join(root, name), dynamic_batch=True)
        for f in os.listdir(os.path.join(root, name)):
            if f.endswith(".npy"):
                os.remove(os.path.join(root, name, f))
        for set_name, inputs in sets.items():
            d = os.path.join(root, name, set_name)
            os.makedirs(d, exist_ok=True)
            with torch.no_grad():
                outs = model(*inputs)
            if isinstance(outs, torch.Tensor):
                outs = (outs,)
            for n, t in zip(in_names, inputs):
                np.save(os.path.join(d, f"in_{n}.npy"), t.numpy())
            for n, t in zip(out_names, outs):
                np.save(os.path.join(d, f"out_{n}.npy"), t.numpy())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", metavar="DIR", help="write the benchmark variants to DIR")
    args = ap.parse_args()
    torch.set_num_threads(1)  # deterministic reductions
    if args.bench:
        bench(args.bench)
    else:
        small(os.path.join(HERE, "models"))


if __name__ == "__main__":
    main()
