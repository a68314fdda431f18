#!/usr/bin/python3
"""Builds small PyTorch models with fixed seeds, exports them to ONNX and
saves PyTorch's outputs, for onnx/models_test.go and the benchmarks.

Needs Debian's python3-torch and python3-onnx; run with

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 export_models.py [--bench DIR]

Without --bench it writes the test models (each well under 1 MB) to
models/<name>/ next to this script: model.onnx, in_<input>.npy and
out_<output>.npy. With --bench it writes the larger benchmark variants
(a MiniLM-sized encoder at sequence 128, a wider MLP and CNN, and
torchvision's ResNet-18, MobileNetV2, EfficientNet-B0 and ViT-B/16 with
random weights; see bench_models) to DIR, with a symbolic batch dim, and
each input set with PyTorch's outputs under DIR/<model>/<set>/. Names
after DIR export only those models (also mobilenet_v3_small, which is
not exported by default: kiln lacks its HardSwish op).

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


def calibrate_bn(model, gen, shape):
    """Random BatchNorm scale and shift as in randomize_bn, with running
    statistics measured on a batch of random images of SHAPE: in deep
    networks randomize_bn's arbitrary statistics (or torchvision's (0, 1)
    ones) let activations shrink layer by layer until the logits no longer
    depend on the input (MobileNetV2's and EfficientNet-B0's change by 2e-7
    of their size between two random images), which would make comparing
    runtimes' outputs meaningless. Measured at one thread, so that every
    rebuild gives the same bits."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    for m in bns:
        c = m.num_features
        m.weight.data.copy_(torch.rand(c, generator=gen) + 0.5)
        m.bias.data.copy_(torch.randn(c, generator=gen) * 0.2)
    x = torch.randn(*shape, generator=gen)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    model.eval()
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average: one batch sets the statistics
        m.train()
    with torch.no_grad():
        model(x)
    for m in bns:
        m.momentum = 0.1
    model.eval()
    torch.set_num_threads(threads)


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
    cnn:  the ResNet-style CNN with widths 32/64/128 on 3x128x128;
    resnet18, mobilenet_v2, efficientnet_b0, vit_b_16: torchvision's, with
          random weights, on 3x224x224 (see torchvision_model);
          mobilenet_v3_small only when asked for by name.

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
    for name, seed in TORCHVISION_SEEDS.items():
        if only in (None, name) and (only == name or name in BENCH_DEFAULT):
            out[name] = torchvision_model(name, seed)
    for m, *_ in out.values():
        m.eval()
    return out


# The torchvision benchmark models (torchvision's own architectures,
# which kiln was not tuned on) and their seeds. mobilenet_v3_small is
# built only when asked for by name: kiln cannot import its HardSwish.
TORCHVISION_SEEDS = {"resnet18": 14, "mobilenet_v2": 15, "efficientnet_b0": 16, "vit_b_16": 17,
                     "mobilenet_v3_small": 18}
BENCH_DEFAULT = ["bert", "mlp", "cnn", "resnet18", "mobilenet_v2", "efficientnet_b0", "vit_b_16"]


def torchvision_model(name, seed):
    """torchvision's NAME with random weights (weights=None: nothing is
    downloaded) from SEED, BatchNorm with random scale and shift and
    running statistics measured on random images (calibrate_bn; with
    torchvision's (0, 1) statistics and unit scale BN is an identity and
    the CNNs' logits shrink to ~1e-9), on one 3x224x224 image (set b1).

    resnet18:           ResNet-18, 11.7M parameters, 1.8 G multiply-adds.
    mobilenet_v2:       MobileNetV2 (width 1.0), depthwise 3x3 convolutions,
                        ReLU6 (Clip), 3.5M parameters, 0.3 G multiply-adds.
    efficientnet_b0:    EfficientNet-B0, depthwise 3x3 and 5x5 convolutions,
                        SiLU, squeeze-excite, 5.3M parameters, 0.4 G
                        multiply-adds.
    vit_b_16:           ViT-B/16 (patch 16, 12 layers, hidden 768, 12 heads,
                        MLP 3072), 86.6M parameters, 17.6 G multiply-adds; its
                        classifier head, zero at init in torchvision, gets
                        nn.Linear's default random init.
    mobilenet_v3_small: MobileNetV3-Small, HardSwish, HardSigmoid
                        squeeze-excite, 5x5 depthwise, 2.5M parameters."""
    import torchvision  # only the torchvision models need it

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = getattr(torchvision.models, name)(weights=None)
    calibrate_bn(model, gen, (4, 3, 224, 224))
    if name.startswith("vit"):
        model.heads.head.reset_parameters()
    return model, {"b1": [torch.randn(1, 3, 224, 224, generator=gen)]}, ["x"], ["logits"]


def bench(root, names=None):
    """Writes DIR/<model>/model.onnx (batch dim symbolic) and, per input
    set, DIR/<model>/<set>/in_*.npy and out_*.npy, for NAMES (default:
    BENCH_DEFAULT)."""
    for name in names or BENCH_DEFAULT:
        if name not in BENCH_DEFAULT and name not in TORCHVISION_SEEDS:
            raise SystemExit(f"export_models.py: no benchmark model {name!r}")
        model, sets, in_names, out_names = bench_models(only=name)[name]
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
    ap.add_argument("names", nargs="*", help="with --bench: only these models")
    args = ap.parse_args()
    torch.set_num_threads(1)  # deterministic reductions
    if args.bench:
        bench(args.bench, args.names)
    else:
        small(os.path.join(HERE, "models"))


if __name__ == "__main__":
    main()
