#!/usr/bin/python3
"""Writes the .npy files npy_test.go reads, with NumPy (Debian python3-numpy).

Every array is a simple formula of its flat index i so the Go test can
recompute it independently: floats are i*0.5 - 1.25, ints are i*37 - 100
wrapped to the type, bools are i % 3 == 0, and bf16 holds the top 16 bits
of the float32 formula. Run from this directory: /usr/bin/python3 gen.py
"""
import numpy as np

def floats(shape, dt):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float64) * 0.5 - 1.25).astype(dt).reshape(shape)

def ints(shape, dt):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.int64) * 37 - 100).astype(dt).reshape(shape)

arrays = {
    "f4": floats((2, 3), "<f4"),
    "f2": floats((4,), "<f2"),
    "f8": floats((2, 2, 2), "<f8"),
    "i1": ints((5,), "i1"),
    "u1": ints((5,), "u1"),
    "i4": ints((3, 2), "<i4"),
    "i8": ints((2, 3), "<i8"),
    "b1": (np.arange(7) % 3 == 0),
    "scalar_f4": floats((), "<f4"),
    "empty_f4": np.zeros((0, 3), dtype="<f4"),
    "bf16": (floats((6,), "<f4").view(np.uint32) >> 16).astype("<u2"),
}
for name, a in arrays.items():
    np.save(name + ".npy", a)

# Variants the reader must handle or refuse.
np.save("big_f4.npy", floats((2, 3), ">f4"))
np.save("big_i8.npy", ints((4,), ">i8"))
with open("v2_f4.npy", "wb") as f:
    np.lib.format.write_array(f, floats((2, 3), "<f4"), version=(2, 0))
np.save("fortran_f4.npy", np.asfortranarray(floats((2, 3), "<f4")))
np.save("u4.npy", np.arange(3, dtype="<u4"))
np.save("c8.npy", np.arange(3, dtype="<c8"))
