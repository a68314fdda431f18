#!/usr/bin/python3
"""Reference outputs for the mixture-of-experts ops GroupedMatMul and MoE,
computed with torch in float64 from the float32-rounded inputs:
ref_moe.json, in gen_reference.py's format (see its docstring).

Run from this directory:  /usr/bin/python3 gen_reference_moe.py

GroupedMatMul inputs: x [T, K] or [T, k, K], w [E, K, N], ids [T, k]
(i64 or i32); output [T, k, N] with row (t, j) = x's row times
w[ids[t, j]] (torch.einsum over the gathered expert matrices).
MoE inputs: x [T, H], ids [T, k], weights [T, k], gate and up [E, H, F],
down [E, F, H]; output sum_j weights[t, j] * (silu(x gate_e) * (x up_e))
down_e, the SwiGLU expert of Mixtral's MixtralBlockSparseTop2MLP with
e = ids[t, j], written with torch.nn.functional.silu.
"""

import numpy as np
import torch
import torch.nn.functional as F

import gen_reference
from gen_reference import ACCUM, F64TOL, Family, rng, tt, uni

gen_reference.GENERATOR = "ops/testdata/gen_reference_moe.py; do not edit by hand"
torch.set_num_threads(1)


def grouped(x, w, ids):
    x, w, ids = tt(x), tt(w), torch.from_numpy(np.asarray(ids, dtype=np.int64))
    if x.dim() == 2:
        x = x[:, None, :].expand(-1, ids.shape[1], -1)
    return torch.einsum("tjk,tjkn->tjn", x, w[ids]).numpy()


def moe(x, ids, wts, gate, up, down):
    x, wts = tt(x), tt(wts)
    ids = torch.from_numpy(np.asarray(ids, dtype=np.int64))
    gate, up, down = tt(gate), tt(up), tt(down)
    xs = x[:, None, :].expand(-1, ids.shape[1], -1)
    h = F.silu(torch.einsum("tjh,tjhf->tjf", xs, gate[ids])) * torch.einsum("tjh,tjhf->tjf", xs, up[ids])
    y = torch.einsum("tjf,tjfh->tjh", h, down[ids])
    return (wts[:, :, None] * y).sum(1).numpy()


def gen_grouped(fam, r):
    for name, (xs, e, n, k, idt, dt) in {
        "rows_i64": ((5, 3), 4, 7, 2, "i64", "f32"),
        "slots_i32": ((4, 2, 6), 3, 5, 2, "i32", "f32"),
        "rows_k3_f64": ((6, 4), 5, 3, 3, "i64", "f64"),
        "one_expert": ((3, 9), 1, 17, 1, "i64", "f32"),
    }.items():
        t, kk = xs[0], xs[-1]
        x = uni(r, -2, 2, xs, dt)
        w = uni(r, -1, 1, (e, kk, n), dt)
        ids = r.integers(0, e, size=(t, k))
        fam.add("GroupedMatMul_" + name, "GroupedMatMul", {}, [(x, dt), (w, dt), (ids, idt)],
                [(grouped(x, w, ids), dt)], F64TOL if dt == "f64" else ACCUM)


def gen_moe(fam, r):
    for name, (t, h, f, e, k, idt, dt, skew) in {
        "mixtral_like_i64": (6, 8, 12, 4, 2, "i64", "f32", False),
        "k1_i32": (5, 6, 4, 3, 1, "i32", "f32", False),
        "skewed_f64": (7, 5, 6, 8, 2, "i64", "f64", True),
    }.items():
        x = uni(r, -2, 2, (t, h), dt)
        gate, up = uni(r, -1, 1, (e, h, f), dt), uni(r, -1, 1, (e, h, f), dt)
        down = uni(r, -1, 1, (e, f, h), dt)
        if skew:  # every token's first slot on one expert, a repeat within a token too
            ids = np.stack([np.full(t, 2), r.integers(0, e, size=t)], axis=1)
            ids[0, 1] = 2
        else:
            ids = np.stack([r.permutation(e)[:k] for _ in range(t)])
        wts = uni(r, 0, 1, (t, k), dt)
        fam.add("MoE_" + name, "MoE", {}, [(x, dt), (ids, idt), (wts, dt), (gate, dt), (up, dt), (down, dt)],
                [(moe(x, ids, wts, gate, up, down), dt)], F64TOL if dt == "f64" else ACCUM)


def main():
    fam = Family("moe")
    r = rng(2626)
    gen_grouped(fam, r)
    gen_moe(fam, r)
    fam.write()


if __name__ == "__main__":
    main()
