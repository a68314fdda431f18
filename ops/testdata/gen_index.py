#!/usr/bin/python3
"""Reference outputs for kiln's indexing ops (GatherElements, GatherND,
ScatterElements, ScatterND), written to ref_index.json in the format
gen_reference.py documents. Run from this directory:  /usr/bin/python3 gen_index.py

Gathers use torch.gather and numpy tuple indexing; scatters follow the
ONNX specification's loops literally: updates applied one at a time in
row-major order of the indices (numpy's fancy assignment leaves the order
of duplicates undefined), reductions through numpy's ufunc.at. Reduced
floats are computed in float64 and rounded once to the output dtype, so
the tolerances allow the kernels' per-update rounding. Negative indices
are normalised here before indexing (torch.gather takes none).

Attributes: GatherElements {axis}; GatherND {batch_dims};
ScatterElements {axis, reduction}; ScatterND {reduction}, reduction one of
none, add, mul, max, min.
"""

import numpy as np
import torch

from gen_reference import EXACT, ELEM, F16TOL, BF16TOL, Family, rng, rnd, uni

UFUNC = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def gather_elements(x, idx, axis):
    idx = np.where(idx < 0, idx + x.shape[axis], idx)
    t = torch.from_numpy(np.ascontiguousarray(x))
    return torch.gather(t, axis, torch.from_numpy(idx.astype(np.int64))).numpy()


def scatter_elements(data, idx, upd, axis, red):
    out = np.array(data, dtype=np.float64 if data.dtype.kind == "f" else data.dtype)
    idx = np.where(idx < 0, idx + data.shape[axis], idx)
    for p in np.ndindex(*idx.shape):
        q = list(p)
        q[axis] = idx[p]
        q = tuple(q)
        if red == "none":
            out[q] = upd[p]
        else:
            UFUNC[red].at(out, q, upd[p])
    return out


def gather_nd(x, idx, b):
    idx = np.where(idx < 0, idx + np.array(x.shape[b:b + idx.shape[-1]]), idx)
    if b == 0:
        return x[tuple(idx[..., j] for j in range(idx.shape[-1]))]
    flat_x = x.reshape((-1,) + x.shape[b:])
    flat_i = idx.reshape((-1,) + idx.shape[b:])
    parts = [gather_nd(flat_x[i], flat_i[i], 0) for i in range(flat_x.shape[0])]
    return np.stack(parts).reshape(idx.shape[:-1] + x.shape[b + idx.shape[-1]:])


def scatter_nd(data, idx, upd, red):
    out = np.array(data, dtype=np.float64 if data.dtype.kind == "f" else data.dtype)
    k = idx.shape[-1]
    idx = np.where(idx < 0, idx + np.array(data.shape[:k]), idx)
    for p in np.ndindex(*idx.shape[:-1]):
        q = tuple(idx[p])
        if red == "none":
            out[q] = upd[p]
        else:
            UFUNC[red].at(out, q, upd[p])
    return out


def gen_index():
    fam = Family("index")
    r = rng(2300)

    x = uni(r, -9, 9, (3, 4))
    for name, idx, axis, idt in (
            ("ax0", np.array([[1, 2, 0, -1], [-3, 0, 2, 1]]), 0, "i64"),
            ("ax1_longer", np.array([[3, 3, 0, -4, 1, 2, 0], [0, 1, 2, 3, -1, -2, -3]]), 1, "i32"),
            ("ax1_smaller_rows", np.array([[2, 0]]), -1, "i64"),
            ("ax0_smaller_cols", np.array([[2, 1], [0, 2], [1, 1]]), 0, "i32")):
        fam.add("GatherElements_" + name, "GatherElements", {"axis": axis}, [(x, "f32"), (idx, idt)],
                [(gather_elements(x, idx, axis), "f32")], EXACT)
    x3 = r.integers(-50, 50, (2, 3, 4))
    i3 = r.integers(-3, 3, (2, 5, 4))
    fam.add("GatherElements_3d_i64_data", "GatherElements", {"axis": 1}, [(x3, "i64"), (i3, "i64")],
            [(gather_elements(x3, i3, 1), "i64")], EXACT)
    xh = uni(r, -4, 4, (4, 3), "f16")
    ih = r.integers(-4, 4, (6, 3))
    fam.add("GatherElements_f16", "GatherElements", {"axis": 0}, [(xh, "f16"), (ih, "i32")],
            [(gather_elements(xh, ih, 0), "f16")], EXACT)
    xb = r.random((2, 5)) < 0.5
    ib = r.integers(0, 5, (2, 3))
    fam.add("GatherElements_bool", "GatherElements", {"axis": 1}, [(xb, "bool"), (ib, "i64")],
            [(gather_elements(xb, ib, 1), "bool")], EXACT)

    xn = uni(r, -9, 9, (2, 3, 4))
    for name, idx, b, idt in (
            ("tuple2", np.array([[0, 1], [1, -1], [-2, 2]]), 0, "i64"),
            ("tuple1_slices", np.array([[[1]], [[0]]]), 0, "i32"),
            ("full_tuple", np.array([[1, 2, 3], [0, -1, -4]]), 0, "i64"),
            ("batch1", np.array([[[2], [0]], [[-1], [1]]]), 1, "i64"),
            ("batch1_tuple2", np.array([[1, 3], [2, 0]]), 1, "i32"),
            ("batch2", np.array([[[1], [3], [0]], [[2], [2], [-1]]]), 2, "i64")):
        fam.add("GatherND_" + name, "GatherND", {"batch_dims": b}, [(xn, "f32"), (idx, idt)],
                [(gather_nd(xn, idx, b), "f32")], EXACT)
    xi = r.integers(-9, 9, (3, 3))
    fam.add("GatherND_i32_data", "GatherND", {"batch_dims": 0}, [(xi, "i32"), (np.array([[2, 2], [0, 1]]), "i64")],
            [(gather_nd(xi, np.array([[2, 2], [0, 1]]), 0), "i32")], EXACT)

    data = uni(r, -9, 9, (3, 4))
    idx = np.array([[1, 0, 2, -1], [1, 2, 0, 0]])
    upd = uni(r, -9, 9, (2, 4))
    for red in ("none", "add", "mul", "max", "min"):
        fam.add("ScatterElements_dup_" + red, "ScatterElements", {"axis": 0, "reduction": red},
                [(data, "f32"), (idx, "i64"), (upd, "f32")],
                [(rnd(scatter_elements(data, idx, upd, 0, red), "f32"), "f32")], EXACT if red == "none" else ELEM)
    idx1 = np.array([[3, -4], [1, 1], [0, 2]])
    upd1 = uni(r, -9, 9, (3, 2))
    fam.add("ScatterElements_ax1_smaller", "ScatterElements", {"axis": 1, "reduction": "none"},
            [(data, "f32"), (idx1, "i32"), (upd1, "f32")], [(scatter_elements(data, idx1, upd1, 1, "none"), "f32")], EXACT)
    di = r.integers(-20, 20, (4, 3))
    ii = r.integers(-4, 4, (5, 3))
    ui = r.integers(-20, 20, (5, 3))
    fam.add("ScatterElements_i32_add", "ScatterElements", {"axis": 0, "reduction": "add"},
            [(di, "i32"), (ii, "i64"), (ui, "i32")], [(scatter_elements(di, ii, ui, 0, "add"), "i32")], EXACT)
    dh = uni(r, -4, 4, (3, 4), "f16")
    uh = uni(r, -4, 4, (2, 4), "f16")
    fam.add("ScatterElements_f16_add", "ScatterElements", {"axis": 0, "reduction": "add"},
            [(dh, "f16"), (idx, "i64"), (uh, "f16")], [(scatter_elements(dh, idx, uh, 0, "add"), "f16")], F16TOL)
    db = uni(r, -4, 4, (3, 4), "bf16")
    ub = uni(r, -4, 4, (2, 4), "bf16")
    fam.add("ScatterElements_bf16_max", "ScatterElements", {"axis": -2, "reduction": "max"},
            [(db, "bf16"), (idx, "i32"), (ub, "bf16")], [(scatter_elements(db, idx, ub, 0, "max"), "bf16")], BF16TOL)

    dn = uni(r, -9, 9, (4, 3, 2))
    for name, idx, red in (
            ("rows_dup_none", np.array([[1], [-1], [1]]), "none"),
            ("rows_dup_add", np.array([[1], [-1], [1]]), "add"),
            ("rows_mul", np.array([[0], [2]]), "mul"),
            ("pairs_max", np.array([[[0, 1], [3, -1]], [[0, 1], [2, 2]]]), "max"),
            ("elements_min", np.array([[0, 0, 0], [3, 2, 1], [0, 0, 0]]), "min")):
        k = idx.shape[-1]
        upd = uni(r, -9, 9, idx.shape[:-1] + dn.shape[k:])
        fam.add("ScatterND_" + name, "ScatterND", {"reduction": red}, [(dn, "f32"), (idx, "i64"), (upd, "f32")],
                [(rnd(scatter_nd(dn, idx, upd, red), "f32"), "f32")], EXACT if red == "none" else ELEM)
    dl = r.integers(-100, 100, (2, 2, 5, 3))  # a [B, H, S, D] cache written at positions 1 and 4
    il = np.array([[[0, 0, 1], [0, 1, 1], [1, 0, 1], [1, 1, 1]], [[0, 0, 4], [0, 1, 4], [1, 0, 4], [1, 1, 4]]])
    ul = r.integers(-100, 100, (2, 4, 3))
    fam.add("ScatterND_i64_cache", "ScatterND", {"reduction": "none"}, [(dl, "i64"), (il, "i32"), (ul, "i64")],
            [(scatter_nd(dl, il, ul, "none"), "i64")], EXACT)
    fam.write()


if __name__ == "__main__":
    gen_index()
