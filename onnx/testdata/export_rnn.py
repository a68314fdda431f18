#!/usr/bin/python3
"""Exports an LSTM and a GRU sequence classifier from PyTorch with fixed
seeds, for onnx/models_rnn_test.go, with PyTorch's float64 outputs as the
reference.

Needs Debian's python3-torch and python3-onnx; run with

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 export_rnn.py

It writes models/lstm/ and models/gru/ next to this script (a few tens
of kB each): model.onnx (float32, opset 14), in_x.npy (float32) and
out_<output>.npy, the outputs of the same model and input run in float64,
rounded to float32 (as export_zoo.py saves them).

The models (batch 3, sequence 7, 5 features, 4 classes):

  lstm  a 2-layer bidirectional nn.LSTM (hidden 8, batch_first), then a
        Linear head on the last step's output. Outputs logits [3, 4] and
        seq, the top layer's whole output [3, 7, 16].
  gru   the same with nn.GRU (PyTorch exports it with
        linear_before_reset=1).

The export writes each layer and direction as an ONNX LSTM or GRU node
(layout 0, with Transposes around it for batch_first), so these check
the bidirectional form, the stacked layers and initial states PyTorch
passes, against an implementation kiln's does not share.
"""
import os

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 14


class Classifier(nn.Module):
    def __init__(self, cell, features, hidden, classes):
        super().__init__()
        self.rnn = cell(features, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        seq, _ = self.rnn(x)
        return self.head(seq[:, -1]), seq


def export(name, cell, seed):
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = Classifier(cell, 5, 8, 4).eval()
    x = torch.randn(3, 7, 5, generator=gen)
    out_dir = os.path.join(HERE, "models", name)
    os.makedirs(out_dir, exist_ok=True)
    torch.onnx.export(model, (x,), os.path.join(out_dir, "model.onnx"), opset_version=OPSET,
                      do_constant_folding=True, input_names=["x"], output_names=["logits", "seq"])
    with torch.no_grad():
        outs = model.double()(x.double())
    np.save(os.path.join(out_dir, "in_x.npy"), x.numpy())
    for n, t in zip(["logits", "seq"], outs):
        np.save(os.path.join(out_dir, f"out_{n}.npy"), t.numpy().astype(np.float32))
    print(f"{out_dir}: {os.path.getsize(os.path.join(out_dir, 'model.onnx'))} bytes")


def main():
    torch.set_num_threads(1)  # deterministic reductions
    export("lstm", nn.LSTM, 21)
    export("gru", nn.GRU, 22)


if __name__ == "__main__":
    main()
