#!/usr/bin/python3
"""Exports kiln's model zoo: torchvision and torch.nn models kiln was not
shaped around, with random weights (fixed seeds), each with an input and
PyTorch's float64 outputs, for onnx/zoo_test.go and bench/onnx.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 export_zoo.py DIR [name ...]

writes DIR/<name>/model.onnx, in_<input>.npy and out_<output>.npy (the
outputs of the same model run in float64, rounded to float32; integer
outputs as int64). The files are regenerated rather than committed (about
60 MB). Needs Debian's python3-torch (1.13), python3-torchvision (0.14)
and python3-onnx. Names restrict the export to those models.

The zoo (opset in brackets; what each brings that the others do not):

  mobilenet_v2   torchvision [13]: depthwise 3x3, ReLU6 (Clip), 224x224
  squeezenet1_1  torchvision [13]: ceil-mode MaxPool, Concat of fire
                 modules, global AveragePool
  shufflenet_v2  torchvision x0.5 [13]: channel shuffle (Reshape,
                 Transpose), Split, strided depthwise
  densenet121    torchvision [13]: dense Concat chains, BatchNorm-ReLU
                 before convs, AveragePool 2x2; 64x64 input
  segment        FCN/DeepLab-style head [13]: dilated 3x3 convs (ASPP-lite)
                 on a small strided backbone, bilinear Resize back to the
                 input size (align_corners False)
  unet           small U-Net [13]: ConvTranspose 2x2 stride 2 upsampling,
                 skip Concat, 1x1 head
  lstm           sequence classifier [14]: 2-layer bidirectional LSTM over
                 an embedding, last step to a linear head
  gru            sequence classifier [14]: 1-layer GRU, mean over time
  gpt            GPT-2-style causal decoder [14]: 2 pre-LN blocks, causal
                 mask from Trilu (triu) and Where, GELU (tanh) MLP, tied
                 LM head, present key/values out via Concat with a past
  yolo           YOLO-style detector head [13]: two strided scales,
                 nearest Resize upsampling, Concat, Sigmoid, and the top-k
                 scoring boxes (TopK, Gather)
  dcgan          DCGAN-style generator [13]: a latent vector through
                 ConvTranspose 4x4 (stride 1, then stride 2 pad 1 up to
                 64x64), BatchNorm-ReLU between, Tanh
"""
import math
import os
import sys

import numpy as np
import torch
import torchvision
from torch import nn
from torch.nn import functional as F


def seeded(seed):
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed + 1)


def randomize_bn(model, gen):
    """Gives BatchNorms non-trivial running statistics and affine terms,
    which fresh models lack (mean 0, var 1 would hide folding errors)."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)
    return model


# --- torch.nn models of our own ---------------------------------------------

class Segment(nn.Module):
    """Strided backbone, ASPP-lite (dilations 1, 2, 4), bilinear upsampling."""

    def __init__(self, classes=5):
        super().__init__()
        def cbr(i, o, s=1, d=1):
            return nn.Sequential(nn.Conv2d(i, o, 3, s, d, dilation=d, bias=False), nn.BatchNorm2d(o), nn.ReLU())
        self.backbone = nn.Sequential(cbr(3, 16, 2), cbr(16, 32, 2), cbr(32, 48, 2))
        self.aspp = nn.ModuleList(cbr(48, 24, 1, d) for d in (1, 2, 4))
        self.head = nn.Conv2d(72, classes, 1)

    def forward(self, x):
        f = self.backbone(x)
        f = torch.cat([a(f) for a in self.aspp], dim=1)
        return F.interpolate(self.head(f), size=x.shape[-2:], mode="bilinear", align_corners=False)


class UNet(nn.Module):
    def __init__(self, c=16, classes=3):
        super().__init__()
        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, 1, 1), nn.ReLU(), nn.Conv2d(o, o, 3, 1, 1), nn.ReLU())
        self.d1, self.d2, self.mid = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, 2)
        self.u2 = block(4 * c, 2 * c)
        self.up1 = nn.ConvTranspose2d(2 * c, c, 2, 2)
        self.u1 = block(2 * c, c)
        self.head = nn.Conv2d(c, classes, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        m = self.mid(F.max_pool2d(b, 2))
        b = self.u2(torch.cat([self.up2(m), b], dim=1))
        a = self.u1(torch.cat([self.up1(b), a], dim=1))
        return self.head(a)


class SeqLSTM(nn.Module):
    def __init__(self, vocab=50, emb=32, hidden=48, classes=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, ids):
        y, _ = self.rnn(self.emb(ids))
        return self.head(y[:, -1])


class SeqGRU(nn.Module):
    def __init__(self, vocab=50, emb=32, hidden=64, classes=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, ids):
        y, _ = self.rnn(self.emb(ids))
        return self.head(y.mean(dim=1))


class GPTBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, past_k, past_v):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        heads = lambda t: t.view(b, s, self.h, self.dh).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        t = k.shape[2]
        # query i (at absolute position t-s+i) sees keys 0..t-s+i
        future = torch.triu(torch.ones(s, t, dtype=torch.bool), diagonal=t - s + 1)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.dh)
        att = torch.where(future, torch.full_like(att, -1e4), att)
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(y)
        x = x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))
        return x, k, v


class GPT(nn.Module):
    def __init__(self, vocab=96, d=64, heads=4, layers=2, ctx=64):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(GPTBlock(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)

    def forward(self, ids, past_k, past_v):
        s, p = ids.shape[1], past_k.shape[3]
        x = self.tok(ids) + self.pos(torch.arange(p, p + s))
        ks, vs = [], []
        for i, blk in enumerate(self.blocks):
            x, k, v = blk(x, past_k[i], past_v[i])
            ks.append(k)
            vs.append(v)
        logits = self.ln(x) @ self.tok.weight.t()
        return logits, torch.stack(ks), torch.stack(vs)


class YOLOHead(nn.Module):
    """Two scales of a strided backbone, FPN-style nearest upsampling, a
    per-cell objectness/box/class prediction, the top-k cells by score."""

    def __init__(self, classes=3, k=20):
        super().__init__()
        def cbs(i, o, s):
            return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.SiLU())
        self.s1 = nn.Sequential(cbs(3, 16, 2), cbs(16, 32, 2), cbs(32, 32, 2))   # /8
        self.s2 = cbs(32, 64, 2)                                                 # /16
        self.lat = nn.Conv2d(64, 32, 1)
        self.pred = nn.Conv2d(64, 5 + classes, 1)
        self.k = k

    def forward(self, x):
        p8 = self.s1(x)
        p16 = self.s2(p8)
        up = F.interpolate(self.lat(p16), scale_factor=2.0, mode="nearest")
        out = self.pred(torch.cat([p8, up], dim=1)).sigmoid()     # [b, 5+c, h, w]
        b, c = out.shape[:2]
        cells = out.view(b, c, -1).transpose(1, 2)               # [b, hw, 5+c]
        score = cells[..., 4] * cells[..., 5:].max(dim=-1).values
        top, idx = score.topk(self.k, dim=1)
        boxes = torch.gather(cells[..., :4], 1, idx.unsqueeze(-1).expand(-1, -1, 4))
        return top, boxes


class DCGANGenerator(nn.Module):
    """The DCGAN generator (Radford et al.) at half width: 1x1 to 64x64."""

    def __init__(self, z=64, g=32, out=3):
        super().__init__()
        def up(i, o, s, p):
            return [nn.ConvTranspose2d(i, o, 4, s, p, bias=False), nn.BatchNorm2d(o), nn.ReLU()]
        self.net = nn.Sequential(*up(z, 8 * g, 1, 0), *up(8 * g, 4 * g, 2, 1), *up(4 * g, 2 * g, 2, 1),
                                 *up(2 * g, g, 2, 1), nn.ConvTranspose2d(g, out, 4, 2, 1), nn.Tanh())

    def forward(self, z):
        return self.net(z)


# --- the zoo -------------------------------------------------------------------

def image(gen, b, c, h, w):
    return torch.rand(b, c, h, w, generator=gen) * 2 - 1


def tokens(gen, b, s, vocab):
    return torch.randint(0, vocab, (b, s), generator=gen)


def zoo():
    """name -> (builder(gen) -> (model, inputs, in_names, out_names), opset)"""
    def tv(ctor, h, w, **kw):
        def build(gen):
            m = randomize_bn(ctor(weights=None, **kw), gen)
            return m, [image(gen, 1, 3, h, w)], ["x"], ["logits"]
        return build

    def ours(ctor, inputs, in_names, out_names):
        def build(gen):
            m = ctor()
            randomize_bn(m, gen)
            return m, inputs(gen), in_names, out_names
        return build

    def gpt_inputs(gen):
        past = torch.randn(2, 1, 4, 8, 16, generator=gen) * 0.5
        return [tokens(gen, 1, 8, 96), past, torch.randn(2, 1, 4, 8, 16, generator=gen) * 0.5]

    return {
        "mobilenet_v2": (tv(torchvision.models.mobilenet_v2, 224, 224), 13),
        "squeezenet1_1": (tv(torchvision.models.squeezenet1_1, 224, 224), 13),
        "shufflenet_v2": (tv(torchvision.models.shufflenet_v2_x0_5, 224, 224), 13),
        "densenet121": (tv(torchvision.models.densenet121, 64, 64), 13),
        "segment": (ours(Segment, lambda g: [image(g, 1, 3, 96, 128)], ["x"], ["masks"]), 13),
        "unet": (ours(UNet, lambda g: [image(g, 1, 3, 64, 64)], ["x"], ["masks"]), 13),
        "lstm": (ours(SeqLSTM, lambda g: [tokens(g, 2, 12, 50)], ["ids"], ["logits"]), 14),
        "gru": (ours(SeqGRU, lambda g: [tokens(g, 2, 12, 50)], ["ids"], ["logits"]), 14),
        "gpt": (ours(GPT, gpt_inputs, ["ids", "past_k", "past_v"], ["logits", "present_k", "present_v"]), 14),
        "yolo": (ours(YOLOHead, lambda g: [image(g, 1, 3, 128, 160)], ["x"], ["scores", "boxes"]), 13),
        "dcgan": (ours(DCGANGenerator, lambda g: [torch.randn(1, 64, 1, 1, generator=g)], ["z"], ["image"]), 13),
    }


def export(name, build, opset, root):
    gen = seeded(sum(map(ord, name)))
    model, inputs, in_names, out_names = build(gen)
    model.eval()
    out_dir = os.path.join(root, name)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "model.onnx")
    torch.onnx.export(model, tuple(inputs), path, opset_version=opset, do_constant_folding=True,
                      input_names=in_names, output_names=out_names)
    # The reference: the same weights and inputs in float64.
    ref = model.double()
    with torch.no_grad():
        outs = ref(*[t.double() if t.is_floating_point() else t for t in inputs])
    if isinstance(outs, torch.Tensor):
        outs = (outs,)
    for n, t in zip(in_names, inputs):
        np.save(os.path.join(out_dir, f"in_{n}.npy"), t.numpy())
    for n, t in zip(out_names, outs):
        a = t.numpy()
        np.save(os.path.join(out_dir, f"out_{n}.npy"), a.astype(np.float32) if a.dtype == np.float64 else a)
    print(f"{name}: opset {opset}, {os.path.getsize(path)} bytes")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root, names = sys.argv[1], sys.argv[2:]
    models = zoo()
    for n in names:
        if n not in models:
            sys.exit(f"unknown model {n}; the zoo: {', '.join(models)}")
    torch.set_num_threads(1)
    for name, (build, opset) in models.items():
        if not names or name in names:
            export(name, build, opset, root)


if __name__ == "__main__":
    main()
