#!/usr/bin/python3
"""Writes the safetensors files safetensors_test.go reads.

The format is written by hand here (json + struct, as the specification
describes it) so the test data does not come from kiln's own writer. Every
tensor is a formula of its flat index i: floats i*0.5 - 1.25, ints
i*37 - 100 wrapped to the type, bools i % 3 == 0, bf16 the top 16 bits of
the float32 formula. Run from this directory: /usr/bin/python3 gen.py
"""
import json
import struct

import numpy as np


def floats(n, dt):
    return (np.arange(n, dtype=np.float64) * 0.5 - 1.25).astype(dt)


def ints(n, dt):
    return (np.arange(n, dtype=np.int64) * 37 - 100).astype(dt)


tensors = [  # (name, dtype, shape, little-endian bytes); data in this order
    ("layer.bias", "F16", [4], floats(4, "<f2").tobytes()),
    ("layer.weight", "F32", [2, 3], floats(6, "<f4").tobytes()),
    ("emb", "BF16", [3, 2], (floats(6, "<f4").view(np.uint32) >> 16).astype("<u2").tobytes()),
    ("ids", "I64", [2], ints(2, "<i8").tobytes()),
    ("scale", "F64", [], floats(1, "<f8").tobytes()),
    ("mask", "BOOL", [5], (np.arange(5) % 3 == 0).tobytes()),
    ("small", "I8", [3], ints(3, "i1").tobytes()),
    ("bytes", "U8", [3], ints(3, "u1").tobytes()),
    ("count", "I32", [2, 1], ints(2, "<i4").tobytes()),
    ("empty", "F32", [0, 4], b""),
    ("halfwords", "U16", [2], np.array([1, 2], "<u2").tobytes()),
]


def write(path, entries, metadata=None, pad=True):
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dt, shape, raw in entries:
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    if pad:
        h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


write("model.safetensors", tensors, {"format": "pt"})
# A two-layer MLP's weights for the SetParams test: w1 [3,4], b1 [4], w2 [4,2].
mlp = [
    ("w1", "BF16", [3, 4], (floats(12, "<f4").view(np.uint32) >> 16).astype("<u2").tobytes()),
    ("b1", "F32", [4], floats(4, "<f4").tobytes()),
    ("w2", "F16", [4, 2], floats(8, "<f2").tobytes()),
    ("unused.extra", "F32", [1], floats(1, "<f4").tobytes()),
]
write("mlp.safetensors", mlp)
