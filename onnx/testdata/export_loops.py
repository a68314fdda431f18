#!/usr/bin/python3
"""Exports models whose ONNX Loop has a trip count or condition known only
at run time, from torch.jit.script functions, for onnx/models_loop_test.go,
with PyTorch's float64 outputs as the reference.

Needs Debian's python3-torch and python3-onnx; run with

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 export_loops.py

It writes models/<name>/ next to this script (a few kB each): model.onnx
(float32, opset 14), in_<input>.npy and out_<output>.npy, the outputs of
the same function run in float64, rounded to float32.

The models:

  loop_for    x [4, 6]: n = the number of positive elements of x's first
              row (a tensor-dependent count, 0 to 6); for i in range(n):
              x = tanh(x · W + i), W a fixed [6, 6] weight. Outputs the
              final x.
  loop_while  x [5]: while the sum of |x| is above 1 (a condition the
              body computes), x = 0.5·x − 0.1·sign(x)... kept simple: x
              = 0.6·x; also counts the iterations. Outputs x and the
              count (int64).
"""
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 14


class LoopFor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        gen = torch.Generator().manual_seed(23)
        self.w = torch.nn.Parameter(torch.randn(6, 6, generator=gen) * 0.5)

    def forward(self, x):
        n = int((x[0] > 0).sum())
        for i in range(n):
            x = torch.tanh(torch.matmul(x, self.w) + float(i))
        return x


class LoopWhile(torch.nn.Module):
    def forward(self, x):
        count = torch.zeros([], dtype=torch.int64)
        while bool(x.abs().sum() > 1.0):
            x = x * 0.6
            count = count + 1
        return x, count


def export(name, model, inputs, input_names, output_names):
    model = torch.jit.script(model.eval())
    out_dir = os.path.join(HERE, "models", name)
    os.makedirs(out_dir, exist_ok=True)
    torch.onnx.export(model, inputs, os.path.join(out_dir, "model.onnx"), opset_version=OPSET,
                      input_names=input_names, output_names=output_names)
    with torch.no_grad():
        outs = model.double()(*[t.double() if t.is_floating_point() else t for t in inputs])
    if not isinstance(outs, tuple):
        outs = (outs,)
    for n, t in zip(input_names, inputs):
        np.save(os.path.join(out_dir, "in_" + n + ".npy"), t.numpy())
    for n, t in zip(output_names, outs):
        a = t.numpy()
        np.save(os.path.join(out_dir, "out_" + n + ".npy"), a.astype(np.float32) if a.dtype == np.float64 else a)


def main():
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(4, 6, generator=gen)
    export("loop_for", LoopFor(), (x,), ["x"], ["y"])
    export("loop_while", LoopWhile(), (torch.tensor([3.0, -2.0, 0.5, 1.0, -4.0]),), ["x"], ["y", "count"])


if __name__ == "__main__":
    main()
