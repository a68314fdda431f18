#!/usr/bin/python3
"""Cases for the indexing and Einsum-family ONNX ops (issue 23), in the
layout and with the helpers of gen_models.py, which calls gen() from its
own main; run alone it rewrites only these cases:

    /usr/bin/python3 gen_index_models.py

Expected values come from numpy (np.einsum, np.unique, np.nonzero, the
ONNX specification's loops in ops/testdata/gen_index.py), never from kiln.
Models that must fail to import with a reason go under special/.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from gen_models import SPECIAL, case, const, i64, node

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "ops", "testdata"))
from gen_index import gather_elements, gather_nd, scatter_elements, scatter_nd  # noqa: E402

rng = np.random.default_rng(2323)


def f32(*shape):
    return rng.uniform(-2, 2, size=shape).astype(np.float32)


def gen():
    x = f32(3, 4)
    gi = np.array([[2, -1, 0, 1], [0, 0, -3, 2]], np.int64)
    case("gather_elements", [node("GatherElements", ["x", "i"], ["y"], axis=0)], {"x": x, "i": gi},
         {"y": gather_elements(x, gi, 0)})
    xn = f32(2, 3, 4)
    ni = np.array([[[2], [0]], [[-1], [1]]], np.int64)
    case("gathernd_batch", [node("GatherND", ["x", "i"], ["y"], batch_dims=1)], {"x": xn, "i": ni},
         {"y": gather_nd(xn, ni, 1)})
    si = np.array([[1, 0, 2, -1], [1, 2, 0, 0]], np.int64)
    su = f32(2, 4)
    case("scatter_elements_max", [node("ScatterElements", ["x", "i", "u"], ["y"], axis=0, reduction="max")],
         {"x": x, "i": si, "u": su}, {"y": scatter_elements(x, si, su, 0, "max").astype(np.float32)}, opset=18)
    case("scatter_deprecated", [node("Scatter", ["x", "i", "u"], ["y"], axis=0)], {"x": x, "u": su},
         {"y": scatter_elements(x, si, su, 0, "none").astype(np.float32)}, inits={"i": si}, opset=11)
    # A KV cache [B, H, S, D] written at position 2: the exported form of a
    # decoder's past-key update.
    cache = f32(1, 2, 5, 3)
    ki = np.array([[[[0, 0, 2]], [[0, 1, 2]]]], np.int64)
    ku = f32(1, 2, 1, 3)
    case("scatternd_kv_cache", [node("ScatterND", ["cache", "i", "u"], ["y"])], {"cache": cache, "u": ku},
         {"y": scatter_nd(cache, ki, ku, "none").astype(np.float32)}, inits={"i": ki}, opset=16)
    cond = np.array([True, False, True, True, False])
    xc = f32(2, 5)
    case("compress_initializer", [node("Compress", ["x", "c"], ["y"], axis=1)], {"x": xc},
         {"y": np.compress(cond, xc, axis=1)}, inits={"c": cond}, opset=11)
    case("compress_flat", [node("Compress", ["x", "c"], ["y"])], {"x": xc},
         {"y": np.compress(cond[:3], xc)}, inits={"c": cond[:3]}, opset=11)
    xr = f32(3, 4, 2)  # batch_axis 0, time_axis 1
    lens = i64(4, 1, 2)
    want = xr.copy()
    for b, n in enumerate(lens):
        want[b, :n] = xr[b, :n][::-1]
    case("reversesequence_batch_first", [node("ReverseSequence", ["x", "l"], ["y"], batch_axis=0, time_axis=1)],
         {"x": xr}, {"y": want}, inits={"l": lens}, opset=11)
    xd = f32(2, 18, 2, 3)
    b = 3
    dcr = xd.reshape(2, b, b, 2, 2, 3).transpose(0, 3, 4, 1, 5, 2).reshape(2, 2, 6, 9)
    crd = xd.reshape(2, 2, b, b, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 9)
    case("depthtospace_dcr", [node("DepthToSpace", ["x"], ["y"], blocksize=3)], {"x": xd}, {"y": dcr})
    case("depthtospace_crd", [node("DepthToSpace", ["x"], ["y"], blocksize=3, mode="CRD")], {"x": xd}, {"y": crd})
    xs = f32(1, 2, 6, 9)
    s2d = xs.reshape(1, 2, 2, 3, 3, 3).transpose(0, 3, 5, 1, 2, 4).reshape(1, 18, 2, 3)
    case("spacetodepth", [node("SpaceToDepth", ["x"], ["y"], blocksize=3)], {"x": xs}, {"y": s2d})

    d = lambda *s: rng.uniform(-2, 2, size=s)  # noqa: E731  (float64 operands: exact references)
    for name, eq, shapes in (
            ("batch_matmul", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
            ("attention_scores", "bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
            ("diagonal", "ii->i", [(4, 4)]),
            ("transpose", "ij->ji", [(3, 4)]),
            ("inner", "i,i->", [(5,), (5,)]),
            ("chain3", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
            ("implicit_outer", "i,j", [(3,), (2,)]),
            ("ellipsis_matmul", "...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)]),
            ("trace_sum", "bii->b", [(2, 3, 3)]),
            ("contract_two", "abc,cbd->ad", [(2, 3, 4), (4, 3, 2)])):
        ops = [d(*s) for s in shapes]
        names = ["x%d" % i for i in range(len(ops))]
        case("einsum_" + name, [node("Einsum", names, ["y"], equation=eq)], dict(zip(names, ops)),
             {"y": np.einsum(eq, *ops)}, opset=12)

    xz = np.array([[0, 3, 0], [-2, 0, 7]], np.int32)
    case("nonzero_initializer", [node("NonZero", ["x"], ["i"]), node("Cast", ["i"], ["y"], to=TensorProto.FLOAT)],
         {}, {"y": np.array(np.nonzero(xz), np.float32)}, inits={"x": xz})
    xu = np.array([[1, 2], [3, 4], [1, 2], [0, 9]], np.int64)
    y, idx, inv, cnt = np.unique(xu, axis=0, return_index=True, return_inverse=True, return_counts=True)
    case("unique_initializer", [node("Unique", ["x"], ["y", "i", "v", "c"], axis=0)], {},
         {"y": y, "i": idx.astype(np.int64), "v": inv.astype(np.int64), "c": cnt.astype(np.int64)}, inits={"x": xu})

    # Data-dependent shapes over run-time inputs: refused at import.
    g = helper.make_graph([
        helper.make_node("Compress", ["x", "c"], ["a"], axis=0, name="compress_runtime"),
        helper.make_node("NonZero", ["x"], ["b"], name="nonzero_runtime"),
        helper.make_node("Unique", ["x"], ["u"], name="unique_runtime"),
    ], "datadep", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3]),
                   helper.make_tensor_value_info("c", TensorProto.BOOL, [3])],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("b", TensorProto.INT64, None),
         helper.make_tensor_value_info("u", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    os.makedirs(SPECIAL, exist_ok=True)
    onnx.save(m, os.path.join(SPECIAL, "datadep.onnx"))


if __name__ == "__main__":
    gen()
