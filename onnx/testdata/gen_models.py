#!/usr/bin/python3
"""Builds the small ONNX models onnx/*_test.go import, with expected outputs.

Run from this directory with Debian's python3-onnx and python3-numpy:

    /usr/bin/python3 gen_models.py

Each case is written in the layout of ONNX's own node tests:
cases/<name>/model.onnx and cases/<name>/test_data_set_0/{input,output}_<i>.pb
(serialized TensorProtos, named after the graph's inputs and outputs). The
expected outputs are computed here with numpy in float64, independently of
both kiln and any ONNX runtime, then rounded to the output dtype. Inputs are
seeded, so reruns produce the same bytes.

Models that need special handling (external data, symbolic dims, an
unsupported-op listing) are written under special/.
"""
import math
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
SPECIAL = os.path.join(HERE, "special")
rng = np.random.default_rng(20240601)

NP2ONNX = {
    np.dtype("float32"): TensorProto.FLOAT, np.dtype("float64"): TensorProto.DOUBLE,
    np.dtype("float16"): TensorProto.FLOAT16, np.dtype("int64"): TensorProto.INT64,
    np.dtype("int32"): TensorProto.INT32, np.dtype("int8"): TensorProto.INT8,
    np.dtype("uint8"): TensorProto.UINT8, np.dtype("bool"): TensorProto.BOOL,
}


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def i64(*vals):
    return np.array(vals, dtype=np.int64)


def vinfo(name, arr, dims=None):
    return helper.make_tensor_value_info(name, NP2ONNX[arr.dtype], list(arr.shape) if dims is None else dims)


def make(nodes, inputs, outputs, opset=13, inits=None, name="case", in_dims=None):
    """inputs/outputs: dicts name -> array (outputs: expected values)."""
    inits = inits or {}
    in_dims = in_dims or {}
    g = helper.make_graph(
        nodes, name,
        [vinfo(k, v, in_dims.get(k)) for k, v in inputs.items()],
        [vinfo(k, v) for k, v in outputs.items()],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="kiln-gen")
    m.ir_version = 8
    return m


def save_case(name, model, inputs, outputs, root=CASES):
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (k, v) in enumerate(inputs.items()):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v, k).SerializeToString())
    for i, (k, v) in enumerate(outputs.items()):
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v, k).SerializeToString())


def case(name, nodes, inputs, outputs, opset=13, inits=None):
    outputs = {k: np.asarray(v) for k, v in outputs.items()}
    save_case(name, make(nodes, inputs, outputs, opset, inits, name), inputs, outputs)


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=op.lower() + "_node", **attrs)


def const(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(arr), name))


def as32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32)


erf = np.vectorize(math.erf)


# ---- elementwise -----------------------------------------------------------

def gen_elementwise():
    x = f32(2, 3)
    pos = f32(2, 3, lo=0.1, hi=3.0)
    xd = x.astype(np.float64)
    unary = {
        "Neg": (x, -xd), "Abs": (x, np.abs(xd)), "Exp": (x, np.exp(xd)), "Log": (pos, np.log(pos.astype(np.float64))),
        "Sqrt": (pos, np.sqrt(pos.astype(np.float64))), "Reciprocal": (pos, 1 / pos.astype(np.float64)),
        "Tanh": (x, np.tanh(xd)), "Sigmoid": (x, 1 / (1 + np.exp(-xd))), "Relu": (x, np.maximum(xd, 0)),
        "Erf": (x, erf(xd)), "Floor": (x, np.floor(xd)), "Ceil": (x, np.ceil(xd)), "Sin": (x, np.sin(xd)),
        "Cos": (x, np.cos(xd)),
    }
    for op, (inp, want) in unary.items():
        case("unary_" + op.lower(), [node(op, ["x"], ["y"])], {"x": inp}, {"y": as32(want)})
    r = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4, -0.6], dtype=np.float32)
    case("unary_round", [node("Round", ["x"], ["y"])], {"x": r}, {"y": np.round(r)})
    b = np.array([True, False, True])
    case("unary_not", [node("Not", ["x"], ["y"])], {"x": b}, {"y": ~b})
    xi = np.array([-3, 0, 5], dtype=np.int64)
    case("unary_abs_int", [node("Abs", ["x"], ["y"])], {"x": xi}, {"y": np.abs(xi)})

    case("leakyrelu", [node("LeakyRelu", ["x"], ["y"], alpha=0.1)], {"x": x}, {"y": as32(np.where(xd >= 0, xd, 0.1 * xd))})
    case("leakyrelu_default", [node("LeakyRelu", ["x"], ["y"])], {"x": x}, {"y": as32(np.where(xd >= 0, xd, 0.01 * xd))})
    case("gelu_erf", [node("Gelu", ["x"], ["y"])], {"x": x}, {"y": as32(xd / 2 * (1 + erf(xd / math.sqrt(2))))}, opset=20)
    tanh_gelu = 0.5 * xd * (1 + np.tanh(math.sqrt(2 / math.pi) * (xd + 0.044715 * xd ** 3)))
    case("gelu_tanh", [node("Gelu", ["x"], ["y"], approximate="tanh")], {"x": x}, {"y": as32(tanh_gelu)}, opset=20)
    case("clip_const", [const("lo", np.float32(-0.5)), const("hi", np.float32(0.7)), node("Clip", ["x", "lo", "hi"], ["y"])],
         {"x": x}, {"y": np.clip(x, -0.5, 0.7)})
    case("clip_min_only", [const("lo", np.float32(0.2)), node("Clip", ["x", "lo"], ["y"])], {"x": x}, {"y": np.maximum(x, 0.2)})
    case("clip_max_only", [const("hi", np.float32(0.1)), node("Clip", ["x", "", "hi"], ["y"])], {"x": x}, {"y": np.minimum(x, 0.1)})
    lo = np.float32(0.25)
    case("clip_runtime_min", [node("Clip", ["x", "lo"], ["y"])], {"x": x, "lo": lo}, {"y": np.maximum(x, lo)})
    # min > max: every element becomes max (ONNX and numpy agree).
    case("clip_inverted", [const("lo", np.float32(1.0)), const("hi", np.float32(-1.0)), node("Clip", ["x", "lo", "hi"], ["y"])],
         {"x": x}, {"y": np.full_like(x, -1.0)})
    xi8 = np.array([-100, -3, 0, 7, 120], dtype=np.int64)
    case("clip_int", [const("lo", np.int64(-5)), const("hi", np.int64(10)), node("Clip", ["x", "lo", "hi"], ["y"])],
         {"x": xi8}, {"y": np.clip(xi8, -5, 10)})
    slope = f32(3, lo=0.0, hi=0.5)
    case("prelu", [node("PRelu", ["x", "s"], ["y"])], {"x": x, "s": slope},
         {"y": as32(np.where(xd < 0, xd * slope, xd))})
    case("hardsigmoid", [node("HardSigmoid", ["x"], ["y"], alpha=0.3, beta=0.4)], {"x": x},
         {"y": as32(np.clip(0.3 * xd + 0.4, 0, 1))})
    xs = (4 * x).astype(np.float32)  # across both bends, at ±3
    xsd = xs.astype(np.float64)
    case("hardswish", [node("HardSwish", ["x"], ["y"])], {"x": xs},
         {"y": as32(xsd * np.clip(xsd + 3, 0, 6) / 6)}, opset=14)

    a, bb = f32(2, 3), f32(3)
    ad, bd = a.astype(np.float64), bb.astype(np.float64)
    binary = {"Add": ad + bd, "Sub": ad - bd, "Mul": ad * bd, "Div": ad / bd}
    for op, want in binary.items():
        case("binary_" + op.lower(), [node(op, ["a", "b"], ["y"])], {"a": a, "b": bb}, {"y": as32(want)})
    ia = np.array([7, -7, 9, -9], dtype=np.int64)
    ib = np.array([2, 2, -4, -4], dtype=np.int64)
    case("div_int", [node("Div", ["a", "b"], ["y"])], {"a": ia, "b": ib}, {"y": np.trunc(ia / ib).astype(np.int64)})
    p = f32(2, 3, lo=0.5, hi=2.0)
    e = f32(2, 3, lo=-1.5, hi=1.5)
    case("pow", [node("Pow", ["a", "b"], ["y"])], {"a": p, "b": e}, {"y": as32(p.astype(np.float64) ** e.astype(np.float64))})
    case("pow_int_exponent", [const("e", np.int64(3)), node("Pow", ["a", "e"], ["y"])], {"a": a}, {"y": as32(ad ** 3)})
    u = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    v = np.array([1.0, 3.0, 2.0, 4.0], dtype=np.float32)
    cmp = {"Equal": u == v, "Less": u < v, "Greater": u > v, "LessOrEqual": u <= v, "GreaterOrEqual": u >= v}
    for op, want in cmp.items():
        case("cmp_" + op.lower(), [node(op, ["a", "b"], ["y"])], {"a": u, "b": v}, {"y": want}, opset=13)
    p1 = np.array([True, True, False, False])
    p2 = np.array([True, False, True, False])
    case("logic_and", [node("And", ["a", "b"], ["y"])], {"a": p1, "b": p2}, {"y": p1 & p2})
    case("logic_or", [node("Or", ["a", "b"], ["y"])], {"a": p1, "b": p2}, {"y": p1 | p2})
    cond = np.array([[True, False, True], [False, False, True]])
    case("where", [node("Where", ["c", "a", "b"], ["y"])], {"c": cond, "a": a, "b": bb}, {"y": np.where(cond, a, bb)})
    m1, m2, m3 = f32(2, 3), f32(3), f32(1, 3)
    case("max_variadic", [node("Max", ["a", "b", "c"], ["y"])], {"a": m1, "b": m2, "c": m3}, {"y": np.maximum(np.maximum(m1, m2), m3)})
    case("min_variadic", [node("Min", ["a", "b"], ["y"])], {"a": m1, "b": m2}, {"y": np.minimum(m1, m2)})
    case("sum_variadic", [node("Sum", ["a", "b", "c"], ["y"])], {"a": m1, "b": m2, "c": m3},
         {"y": as32(m1.astype(np.float64) + m2 + m3)})
    case("mean_variadic", [node("Mean", ["a", "b", "c"], ["y"])], {"a": m1, "b": m2, "c": m3},
         {"y": as32((m1.astype(np.float64) + m2 + m3) / 3)})
    c = np.array([-1.7, -0.2, 0.0, 2.9, 300.5], dtype=np.float32)
    case("cast_f32_i64", [node("Cast", ["x"], ["y"], to=TensorProto.INT64)], {"x": c}, {"y": np.trunc(c).astype(np.int64)})
    case("cast_f32_bool", [node("Cast", ["x"], ["y"], to=TensorProto.BOOL)], {"x": c}, {"y": c != 0})
    case("cast_i64_f32", [node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)], {"x": ia}, {"y": ia.astype(np.float32)})
    case("cast_f32_f16", [node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)], {"x": c}, {"y": c.astype(np.float16)})
    case("castlike", [node("CastLike", ["x", "t"], ["y"])], {"x": ia, "t": np.zeros(1, np.float32)},
         {"y": ia.astype(np.float32)}, opset=15)
    case("identity", [node("Identity", ["x"], ["y"])], {"x": x}, {"y": x})
    case("dropout_mask", [node("Dropout", ["x"], ["y", "mask"])], {"x": x}, {"y": x, "mask": np.ones(x.shape, bool)})
    case("dropout_inference_inputs", [const("r", np.float32(0.3)), const("t", np.array(False)),
                                      node("Dropout", ["x", "r", "t"], ["y"])], {"x": x}, {"y": x})


# ---- linear algebra, reductions, normalisation ------------------------------

def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def gen_math():
    a, b = f32(3, 4), f32(4, 5)
    case("matmul", [node("MatMul", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": as32(a.astype(np.float64) @ b)})
    ba, bb = f32(2, 1, 3, 4), f32(3, 4, 2)
    case("matmul_batched", [node("MatMul", ["a", "b"], ["y"])], {"a": ba, "b": bb}, {"y": as32(ba.astype(np.float64) @ bb)})
    v = f32(4)
    case("matmul_vec", [node("MatMul", ["a", "v"], ["y"])], {"a": a, "v": v}, {"y": as32(a.astype(np.float64) @ v)})
    ga, gb, gc = f32(4, 3), f32(5, 4), f32(5)
    want = 0.5 * (ga.astype(np.float64).T @ gb.astype(np.float64).T) + 2.0 * gc
    case("gemm", [node("Gemm", ["a", "b", "c"], ["y"], alpha=0.5, beta=2.0, transA=1, transB=1)],
         {"a": ga, "b": gb, "c": gc}, {"y": as32(want)})
    case("gemm_noc", [node("Gemm", ["a", "b"], ["y"])], {"a": a, "b": b}, {"y": as32(a.astype(np.float64) @ b)})
    w, bias = f32(4, 6), f32(6)
    # A layer with weight initializers: they become params that SetParams fills.
    case("gemm_params", [node("Gemm", ["x", "w", "b"], ["y"])], {"x": a}, {"y": as32(a.astype(np.float64) @ w + bias)},
         inits={"w": w, "b": bias})

    x = f32(2, 3, 4)
    xd = x.astype(np.float64)
    # opset 11 coerces to 2-D at axis: rows over all of dims 1 and 2.
    flat = softmax(xd.reshape(2, 12), 1).reshape(2, 3, 4)
    case("softmax_11_axis1", [node("Softmax", ["x"], ["y"], axis=1)], {"x": x}, {"y": as32(flat)}, opset=11)
    case("softmax_11_default", [node("Softmax", ["x"], ["y"])], {"x": x}, {"y": as32(flat)}, opset=11)
    case("softmax_13_axis1", [node("Softmax", ["x"], ["y"], axis=1)], {"x": x}, {"y": as32(softmax(xd, 1))}, opset=13)
    case("softmax_13_default", [node("Softmax", ["x"], ["y"])], {"x": x}, {"y": as32(softmax(xd, -1))}, opset=13)
    case("logsoftmax_11_axis1", [node("LogSoftmax", ["x"], ["y"], axis=1)], {"x": x}, {"y": as32(np.log(flat))}, opset=11)
    case("logsoftmax_13", [node("LogSoftmax", ["x"], ["y"], axis=1)], {"x": x}, {"y": as32(np.log(softmax(xd, 1)))}, opset=13)

    case("reducesum_11_attr", [node("ReduceSum", ["x"], ["y"], axes=[0, 2], keepdims=0)], {"x": x},
         {"y": as32(xd.sum(axis=(0, 2)))}, opset=11)
    case("reducesum_13_input", [const("axes", i64(-1)), node("ReduceSum", ["x", "axes"], ["y"])], {"x": x},
         {"y": as32(xd.sum(axis=-1, keepdims=True))}, opset=13)
    case("reducesum_13_all", [node("ReduceSum", ["x"], ["y"], keepdims=0)], {"x": x}, {"y": as32(xd.sum())}, opset=13)
    case("reducesum_13_noop", [node("ReduceSum", ["x"], ["y"], noop_with_empty_axes=1)], {"x": x}, {"y": x}, opset=13)
    case("reducemean_13_attr", [node("ReduceMean", ["x"], ["y"], axes=[1])], {"x": x},
         {"y": as32(xd.mean(axis=1, keepdims=True))}, opset=13)
    case("reducemean_18_input", [const("axes", i64(1, 2)), node("ReduceMean", ["x", "axes"], ["y"], keepdims=0)], {"x": x},
         {"y": as32(xd.mean(axis=(1, 2)))}, opset=18)
    case("reducemax", [node("ReduceMax", ["x"], ["y"], axes=[1], keepdims=0)], {"x": x}, {"y": x.max(axis=1)})
    case("reducemax_18_input", [const("axes", i64(0)), node("ReduceMax", ["x", "axes"], ["y"])], {"x": x},
         {"y": x.max(axis=0, keepdims=True)}, opset=18)
    case("reducemin", [node("ReduceMin", ["x"], ["y"], axes=[2])], {"x": x}, {"y": x.min(axis=2, keepdims=True)})
    case("reduceprod", [node("ReduceProd", ["x"], ["y"], axes=[1], keepdims=0)], {"x": x}, {"y": as32(xd.prod(axis=1))})

    t = np.array([[1, 5, 5, 2], [7, 7, 0, 7]], dtype=np.float32)
    case("argmax", [node("ArgMax", ["x"], ["y"], axis=1)], {"x": t}, {"y": np.argmax(t, axis=1)[:, None]})
    last = t.shape[1] - 1 - np.argmax(np.flip(t, 1), axis=1)  # ties: [2, 3]
    case("argmax_last", [node("ArgMax", ["x"], ["y"], axis=1, keepdims=0, select_last_index=1)], {"x": t}, {"y": last})
    case("argmin", [node("ArgMin", ["x"], ["y"], axis=0, keepdims=0)], {"x": t}, {"y": np.argmin(t, axis=0)})

    cs = f32(2, 4)
    csd = cs.astype(np.float64)
    case("cumsum", [const("ax", np.int64(1)), node("CumSum", ["x", "ax"], ["y"])], {"x": cs}, {"y": as32(np.cumsum(csd, 1))})
    excl = np.concatenate([np.zeros((2, 1)), np.cumsum(csd, 1)[:, :-1]], axis=1)
    case("cumsum_exclusive", [const("ax", np.int32(-1)), node("CumSum", ["x", "ax"], ["y"], exclusive=1)], {"x": cs},
         {"y": as32(excl)})
    rev = np.flip(np.cumsum(np.flip(csd, 0), 0), 0)
    case("cumsum_reverse", [const("ax", np.int64(0)), node("CumSum", ["x", "ax"], ["y"], reverse=1)], {"x": cs},
         {"y": as32(rev)})

    ln_x, g, bt = f32(2, 3, 4), f32(4), f32(4)
    mu = ln_x.astype(np.float64).mean(-1, keepdims=True)
    var = ((ln_x - mu) ** 2).mean(-1, keepdims=True)
    want = (ln_x - mu) / np.sqrt(var + 1e-5) * g + bt
    case("layernorm", [node("LayerNormalization", ["x", "g", "b"], ["y"])], {"x": ln_x}, {"y": as32(want)}, opset=17,
         inits={"g": g, "b": bt})
    g2 = f32(3, 4)
    mu2 = ln_x.astype(np.float64).mean(axis=(1, 2), keepdims=True)
    var2 = ((ln_x - mu2) ** 2).mean(axis=(1, 2), keepdims=True)
    case("layernorm_axis1", [node("LayerNormalization", ["x", "g"], ["y"], axis=1, epsilon=1e-3)], {"x": ln_x},
         {"y": as32((ln_x - mu2) / np.sqrt(var2 + 1e-3) * g2)}, opset=17, inits={"g": g2})

    # Scale and bias that only broadcast to the normalised shape.
    sb, bb2 = f32(1), f32(1, 4)
    want = (ln_x - mu) / np.sqrt(var + 1e-5) * sb + bb2
    case("layernorm_broadcast", [node("LayerNormalization", ["x", "g", "b"], ["y"])], {"x": ln_x}, {"y": as32(want)},
         opset=17, inits={"g": sb, "b": bb2})

    bx = f32(2, 3, 2, 2)
    sc, bi, mean, vr = f32(3), f32(3), f32(3), f32(3, lo=0.5, hi=2)
    sh = (1, 3, 1, 1)
    want = (bx - mean.reshape(sh)) / np.sqrt(vr.reshape(sh).astype(np.float64) + 1e-3) * sc.reshape(sh) + bi.reshape(sh)
    case("batchnorm", [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)], {"x": bx},
         {"y": as32(want)}, inits={"s": sc, "b": bi, "m": mean, "v": vr})
    # Opset 15 lets the statistics have their own type.
    case("batchnorm_15_f64_stats", [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)], {"x": bx},
         {"y": as32(want)}, opset=15,
         inits={"s": sc, "b": bi, "m": mean.astype(np.float64), "v": vr.astype(np.float64)})


# ---- convolution and pooling ------------------------------------------------

def conv2d(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), group=1):
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, hh, ww = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (hh + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) // strides[0] + 1
    ow = (ww + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) // strides[1] + 1
    out = np.zeros((n, m, oh, ow))
    mg = m // group
    for o in range(m):
        gi = o // mg
        for i in range(oh):
            for j in range(ow):
                r0, c0 = i * strides[0], j * strides[1]
                patch = xp[:, gi * cg:(gi + 1) * cg, r0:r0 + (kh - 1) * dil[0] + 1:dil[0], c0:c0 + (kw - 1) * dil[1] + 1:dil[1]]
                out[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3))
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def pool2d(x, k, strides, pads, kind, count_pad=False, extra=(0, 0)):
    """extra: additional end padding (ceil_mode) that never counts."""
    x = x.astype(np.float64)
    n, c, hh, ww = x.shape
    pb, pe = (pads[0], pads[1]), (pads[2] + extra[0], pads[3] + extra[1])
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (pb[0], pe[0]), (pb[1], pe[1])), constant_values=fill)
    inside = np.pad(np.ones((hh, ww)), ((pb[0], pe[0]), (pb[1], pe[1])))
    counted = np.pad(np.ones((hh + pads[0] + pads[2], ww + pads[1] + pads[3])), ((0, extra[0]), (0, extra[1])))
    oh = (xp.shape[2] - k[0]) // strides[0] + 1
    ow = (xp.shape[3] - k[1]) // strides[1] + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * strides[0], j * strides[1]
            win = xp[:, :, r0:r0 + k[0], c0:c0 + k[1]]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                mask = (counted if count_pad else inside)[r0:r0 + k[0], c0:c0 + k[1]]
                out[:, :, i, j] = win.sum(axis=(2, 3)) / mask.sum()
    return out


def gen_conv():
    x = f32(1, 4, 5, 6)
    w = f32(6, 2, 3, 3)
    b = f32(6)
    case("conv_grouped", [node("Conv", ["x", "w", "b"], ["y"], strides=[2, 1], pads=[1, 0, 1, 2], dilations=[1, 2], group=2)],
         {"x": x}, {"y": as32(conv2d(x, w, b, (2, 1), (1, 0, 1, 2), (1, 2), 2))}, inits={"w": w, "b": b})
    w1 = f32(3, 4, 3, 2)
    # SAME_UPPER, stride 2 on 5x6: out 3x3, pads total (2,0): (1,1) rows, (0,0) cols.
    case("conv_same_upper", [node("Conv", ["x", "w"], ["y"], strides=[2, 2], auto_pad="SAME_UPPER")], {"x": x, "w": w1},
         {"y": as32(conv2d(x, w1, None, (2, 2), (1, 0, 1, 0)))})
    # SAME_LOWER with a 2-wide kernel: total pad 1 per axis at stride 1 goes to the start.
    w2 = f32(2, 4, 2, 2)
    case("conv_same_lower", [node("Conv", ["x", "w"], ["y"], auto_pad="SAME_LOWER")], {"x": x, "w": w2},
         {"y": as32(conv2d(x, w2, None, (1, 1), (1, 1, 0, 0)))})
    x1, wk = f32(2, 3, 7), f32(4, 3, 3)
    want = conv2d(x1[:, :, None, :], wk[:, :, None, :], None, (1, 2), (0, 1, 0, 1))[:, :, 0, :]
    case("conv_1d", [node("Conv", ["x", "w"], ["y"], strides=[2], pads=[1, 1])], {"x": x1, "w": wk}, {"y": as32(want)})

    px = f32(1, 2, 5, 5)
    case("maxpool", [node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])], {"x": px},
         {"y": as32(pool2d(px, (3, 3), (2, 2), (1, 1, 1, 1), "max"))})
    # ceil_mode on 5x5, kernel 2, stride 2: floor gives 2, ceil 3 (one extra end pad).
    case("maxpool_ceil", [node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)], {"x": px},
         {"y": as32(pool2d(px, (2, 2), (2, 2), (0, 0, 0, 0), "max", extra=(1, 1)))})
    case("maxpool_same", [node("MaxPool", ["x"], ["y"], kernel_shape=[2, 3], auto_pad="SAME_UPPER")], {"x": px},
         {"y": as32(pool2d(px, (2, 3), (1, 1), (0, 1, 1, 1), "max"))})
    p1 = f32(1, 3, 8)
    case("maxpool_1d", [node("MaxPool", ["x"], ["y"], kernel_shape=[3], strides=[2])], {"x": p1},
         {"y": as32(pool2d(p1[:, :, None, :], (1, 3), (1, 2), (0, 0, 0, 0), "max")[:, :, 0, :])})
    case("avgpool", [node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])], {"x": px},
         {"y": as32(pool2d(px, (3, 3), (2, 2), (1, 1, 1, 1), "avg"))})
    case("avgpool_countpad", [node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)],
         {"x": px}, {"y": as32(pool2d(px, (3, 3), (1, 1), (1, 1, 1, 1), "avg", count_pad=True))})
    # ceil_mode that changes nothing (5 - 3) / 1: accepted for AveragePool.
    case("avgpool_ceil_noop", [node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], ceil_mode=1)], {"x": px},
         {"y": as32(pool2d(px, (3, 3), (1, 1), (0, 0, 0, 0), "avg"))})
    case("globalavgpool", [node("GlobalAveragePool", ["x"], ["y"])], {"x": px},
         {"y": as32(px.astype(np.float64).mean(axis=(2, 3), keepdims=True))})
    case("globalmaxpool", [node("GlobalMaxPool", ["x"], ["y"])], {"x": px}, {"y": px.max(axis=(2, 3), keepdims=True)})


# ---- shapes and data movement -----------------------------------------------

def gen_shape():
    x = f32(2, 3, 4)
    emb = f32(5, 3)
    idx = np.array([[0, 4], [-1, 2]], dtype=np.int64)
    case("gather_embedding", [node("Gather", ["e", "i"], ["y"])], {"i": idx}, {"y": emb[idx]}, inits={"e": emb})
    case("gather_axis1", [const("i", np.array([2, 0], np.int32)), node("Gather", ["x", "i"], ["y"], axis=1)], {"x": x},
         {"y": x[:, [2, 0], :]})
    # Shape sub-graph: [d0, -1] from Shape/Gather/Unsqueeze/Concat, then Reshape.
    case("shape_fold_reshape", [
        node("Shape", ["x"], ["s"]),
        const("zero", np.int64(0)),
        helper.make_node("Gather", ["s", "zero"], ["d0"], name="g0"),
        helper.make_node("Unsqueeze", ["d0", "ax0"], ["d0v"], name="u0"),
        const("ax0", i64(0)),
        const("minus1", i64(-1)),
        helper.make_node("Concat", ["d0v", "minus1"], ["target"], axis=0, name="cat"),
        node("Reshape", ["x", "target"], ["y"]),
    ], {"x": x}, {"y": x.reshape(2, 12)})
    case("shape_slice_15", [node("Shape", ["x"], ["y"], start=-2)], {"x": x}, {"y": i64(3, 4)}, opset=15)
    case("size", [node("Size", ["x"], ["y"])], {"x": x}, {"y": np.int64(24)})
    c = f32(3, 4)
    xx = f32(3, 4)
    case("constant_tensor", [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(c)), node("Add", ["x", "c"], ["y"])],
         {"x": xx}, {"y": as32(xx.astype(np.float64) + c)})
    case("constant_value_float", [helper.make_node("Constant", [], ["c"], value_float=2.5), node("Mul", ["x", "c"], ["y"])],
         {"x": xx}, {"y": as32(xx.astype(np.float64) * 2.5)})
    case("constant_value_ints", [helper.make_node("Constant", [], ["s"], value_ints=[4, 3]), node("Reshape", ["x", "s"], ["y"])],
         {"x": xx}, {"y": xx.reshape(4, 3)})
    case("constantofshape", [node("Shape", ["x"], ["s"]),
                             helper.make_node("ConstantOfShape", ["s"], ["y"], value=numpy_helper.from_array(np.array([7], np.int64)))],
         {"x": x}, {"y": np.full(x.shape, 7, np.int64)})
    zx = f32(2, 2)
    case("constantofshape_default", [const("s", i64(2, 2)), helper.make_node("ConstantOfShape", ["s"], ["z"], name="cos"),
                                     node("Add", ["x", "z"], ["y"])], {"x": zx}, {"y": zx})
    case("reshape_zero_minus1", [const("s", i64(0, -1, 2)), node("Reshape", ["x", "s"], ["y"])], {"x": x}, {"y": x.reshape(2, 6, 2)})
    ez = np.zeros((0, 3), np.float32)
    case("reshape_allowzero", [const("s", i64(3, 0)), node("Reshape", ["x", "s"], ["y"], allowzero=1)], {"x": ez},
         {"y": ez.reshape(3, 0)}, opset=14)
    case("transpose", [node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], {"x": x}, {"y": x.transpose(2, 0, 1)})
    case("transpose_default", [node("Transpose", ["x"], ["y"])], {"x": x}, {"y": x.transpose()})
    x2 = f32(2, 1, 4)
    case("concat", [node("Concat", ["a", "b"], ["y"], axis=-2)], {"a": x, "b": x2}, {"y": np.concatenate([x, x2], axis=1)})
    sp = f32(2, 6)
    case("split_11_attr", [node("Split", ["x"], ["a", "b"], axis=1, split=[2, 4])], {"x": sp},
         {"a": sp[:, :2], "b": sp[:, 2:]}, opset=11)
    case("split_13_input", [const("s", i64(1, 5)), node("Split", ["x", "s"], ["a", "b"], axis=-1)], {"x": sp},
         {"a": sp[:, :1], "b": sp[:, 1:]}, opset=13)
    case("split_13_equal", [node("Split", ["x"], ["a", "b", "c"], axis=1)], {"x": sp},
         {"a": sp[:, :2], "b": sp[:, 2:4], "c": sp[:, 4:]}, opset=13)
    s7 = f32(7, 2)
    case("split_18_num_outputs", [node("Split", ["x"], ["a", "b", "c"], num_outputs=3)], {"x": s7},
         {"a": s7[:3], "b": s7[3:6], "c": s7[6:]}, opset=18)
    big = np.iinfo(np.int64).max
    case("slice", [const("st", i64(1, -1)), const("en", i64(big, -big)), const("ax", i64(1, 2)), const("sp", i64(1, -2)),
                   node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], {"x": x}, {"y": x[:, 1:, ::-2][:, :, :]})
    case("slice_default_axes", [const("st", i64(0, 1)), const("en", i64(1, 3)), node("Slice", ["x", "st", "en"], ["y"])],
         {"x": x}, {"y": x[0:1, 1:3]})
    q = f32(1, 3, 1, 2)
    case("squeeze_11_attr", [node("Squeeze", ["x"], ["y"], axes=[2])], {"x": q}, {"y": q.squeeze(2)}, opset=11)
    case("squeeze_13_input", [const("a", i64(0, -2)), node("Squeeze", ["x", "a"], ["y"])], {"x": q}, {"y": q.squeeze((0, 2))}, opset=13)
    case("squeeze_all", [node("Squeeze", ["x"], ["y"])], {"x": q}, {"y": q.squeeze()}, opset=13)
    w = f32(3, 2)
    case("unsqueeze_11_attr", [node("Unsqueeze", ["x"], ["y"], axes=[0, 3])], {"x": w}, {"y": w.reshape(1, 3, 2, 1)}, opset=11)
    case("unsqueeze_13_input", [const("a", i64(-1, 1)), node("Unsqueeze", ["x", "a"], ["y"])], {"x": w},
         {"y": w.reshape(3, 1, 2, 1)}, opset=13)
    case("flatten", [node("Flatten", ["x"], ["y"], axis=2)], {"x": x}, {"y": x.reshape(6, 4)})
    case("flatten_default", [node("Flatten", ["x"], ["y"])], {"x": x}, {"y": x.reshape(2, 12)})
    e1 = f32(3, 1)
    case("expand", [const("s", i64(2, 1, 4)), node("Expand", ["x", "s"], ["y"])], {"x": e1}, {"y": np.broadcast_to(e1, (2, 3, 4))})
    case("tile", [const("r", i64(2, 1, 3)), node("Tile", ["x", "r"], ["y"])], {"x": x}, {"y": np.tile(x, (2, 1, 3))})
    pd = f32(2, 3)
    case("pad_constant", [const("p", i64(0, 1, 1, 2)), const("v", np.float32(1.5)), node("Pad", ["x", "p", "v"], ["y"])],
         {"x": pd}, {"y": np.pad(pd, ((0, 1), (1, 2)), constant_values=1.5)})
    case("pad_reflect", [const("p", i64(1, 2, 1, 2)), node("Pad", ["x", "p"], ["y"], mode="reflect")], {"x": pd},
         {"y": np.pad(pd, ((1, 1), (2, 2)), mode="reflect")})
    case("pad_edge", [const("p", i64(0, 2, 1, 0)), node("Pad", ["x", "p"], ["y"], mode="edge")], {"x": pd},
         {"y": np.pad(pd, ((0, 1), (2, 0)), mode="edge")})
    case("pad_negative", [const("p", i64(0, -1, 1, 2)), node("Pad", ["x", "p"], ["y"])], {"x": pd},
         {"y": np.pad(pd[:, 1:], ((0, 1), (0, 2)))})
    case("pad_18_axes", [const("p", i64(2, 1)), const("a", i64(-1)), node("Pad", ["x", "p", "", "a"], ["y"])], {"x": pd},
         {"y": np.pad(pd, ((0, 0), (2, 1)))}, opset=18)
    # Range over a folded shape, then a comparison mask and Where: the
    # pattern exporters use for attention masks.
    rx = f32(2, 5)
    pos = np.arange(5)
    case("range_mask_where", [
        node("Shape", ["x"], ["s"]),
        const("one", i64(1)),
        helper.make_node("Gather", ["s", "one"], ["n"], name="gn"),
        const("zero", np.int64(0)), const("step", np.int64(1)),
        node("Range", ["zero", "n", "step"], ["pos"]),
        const("lim", np.int64(3)),
        node("Less", ["pos", "lim"], ["keep"]),
        node("Not", ["keep"], ["drop"]),
        const("neg", np.float32(-100.0)),
        node("Where", ["drop", "neg", "x"], ["y"]),
    ], {"x": rx}, {"y": np.where(pos >= 3, np.float32(-100), rx)})
    rf = f32(3)
    case("range_float", [const("a", np.float32(0.5)), const("b", np.float32(2.0)), const("d", np.float32(0.5)),
                         node("Range", ["a", "b", "d"], ["r"]), node("Add", ["x", "r"], ["y"])],
         {"x": rf}, {"y": as32(rf.astype(np.float64) + np.array([0.5, 1.0, 1.5]))})
    case("equal_int", [node("Equal", ["a", "b"], ["y"])], {"a": i64(1, 2, 3), "b": i64(1, 0, 3)}, {"y": np.array([True, False, True])})


def gen_block():
    """A tiny self-attention block as torch exports it (opset 13)."""
    b, s, d, h = 1, 4, 8, 2
    hd = d // h
    x = f32(b, s, d)
    wq, wk, wv, wo = (f32(d, d, lo=-0.5, hi=0.5) for _ in range(4))
    mask = np.array([[1, 1, 1, 0]], dtype=np.int64)
    xd = x.astype(np.float64)

    def heads(t):
        return t.reshape(b, s, h, hd).transpose(0, 2, 1, 3)
    q, k, v = heads(xd @ wq), heads(xd @ wk), heads(xd @ wv)
    sc = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd)
    sc = np.where(mask[:, None, None, :] == 0, -1e9, sc)
    att = softmax(sc, -1) @ v
    want = att.transpose(0, 2, 1, 3).reshape(b, s, d) @ wo
    shape4 = i64(0, 0, h, hd)
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q0"], name="mq"),
        helper.make_node("MatMul", ["x", "wk"], ["k0"], name="mk"),
        helper.make_node("MatMul", ["x", "wv"], ["v0"], name="mv"),
        const("shape4", shape4),
        helper.make_node("Reshape", ["q0", "shape4"], ["q1"], name="rq"),
        helper.make_node("Reshape", ["k0", "shape4"], ["k1"], name="rk"),
        helper.make_node("Reshape", ["v0", "shape4"], ["v1"], name="rv"),
        helper.make_node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3], name="tq"),
        helper.make_node("Transpose", ["k1"], ["kt"], perm=[0, 2, 3, 1], name="tk"),
        helper.make_node("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3], name="tv"),
        helper.make_node("MatMul", ["q", "kt"], ["s0"], name="qk"),
        const("scale", np.float32(math.sqrt(hd))),
        helper.make_node("Div", ["s0", "scale"], ["s1"], name="div"),
        const("ax12", i64(1, 2)),
        helper.make_node("Unsqueeze", ["mask", "ax12"], ["m4"], name="um"),
        const("zero", np.int64(0)),
        helper.make_node("Equal", ["m4", "zero"], ["pad"], name="eq"),
        const("ninf", np.float32(-1e9)),
        helper.make_node("Where", ["pad", "ninf", "s1"], ["s2"], name="wh"),
        helper.make_node("Softmax", ["s2"], ["p"], axis=-1, name="sm"),
        helper.make_node("MatMul", ["p", "v"], ["a0"], name="pv"),
        helper.make_node("Transpose", ["a0"], ["a1"], perm=[0, 2, 1, 3], name="ta"),
        helper.make_node("Shape", ["x"], ["xs"], name="shx"),
        helper.make_node("Reshape", ["a1", "xs"], ["a2"], name="ra"),
        helper.make_node("MatMul", ["a2", "wo"], ["y"], name="mo"),
    ]
    case("attention_block", nodes, {"x": x, "mask": mask}, {"y": as32(want)},
         inits={"wq": wq, "wk": wk, "wv": wv, "wo": wo})


# ---- special models ----------------------------------------------------------

def gen_special():
    os.makedirs(SPECIAL, exist_ok=True)
    # External data: the weights live in weights.bin beside the model.
    x, w, b = f32(2, 4), f32(4, 3), f32(3)
    outs = {"y": as32(np.maximum(x.astype(np.float64) @ w + b, 0))}
    m = make([node("MatMul", ["x", "w"], ["xw"]), node("Add", ["xw", "b"], ["z"]), node("Relu", ["z"], ["y"])],
             {"x": x}, outs, inits={"w": w, "b": b})
    d = os.path.join(SPECIAL, "external")
    os.makedirs(d, exist_ok=True)
    convert_model_to_external_data(m, all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    onnx.save(m, os.path.join(d, "model.onnx"))
    save_case("external", m, {"x": x}, outs, root=SPECIAL)  # rewrites model.onnx identically
    # Symbolic dims: x is [batch, seq, 4], mask is [batch, seq].
    xs, ms = f32(2, 3, 4), np.array([[1, 1, 0], [1, 0, 0]], dtype=np.float32)
    want = {"y": as32((xs.astype(np.float64) * ms[:, :, None]).sum(axis=1))}
    m = make([node("Unsqueeze", ["m", "ax"], ["m3"]), const("ax", i64(-1)), node("Mul", ["x", "m3"], ["p"]),
              const("one", i64(1)), node("ReduceSum", ["p", "one"], ["y"], keepdims=0)],
             {"x": xs, "m": ms}, want, in_dims={"x": ["batch", "seq", 4], "m": ["batch", "seq"]})
    m.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    save_case("symbolic", m, {"x": xs, "m": ms}, want, root=SPECIAL)
    # Unsupported ops: several, in different domains, with a supported one between.
    g = helper.make_graph([
        helper.make_node("Col2Im", ["x"], ["r"], name="col2im_1"),
        helper.make_node("Relu", ["r"], ["a"], name="relu_ok"),
        helper.make_node("StringNormalizer", ["a"], ["l"], name="strings_1"),
        helper.make_node("FusedMatMul", ["l", "l"], ["y"], name="ms_fused", domain="com.microsoft"),
        helper.make_node("LayerNormalization", ["y"], ["z"], name="ln_too_new"),
    ], "unsupported", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    onnx.save(m, os.path.join(SPECIAL, "unsupported.onnx"))
    # Known ops with unsupported features, each reported, the rest imported.
    g = helper.make_graph([
        helper.make_node("Pad", ["x", "p"], ["a"], mode="wrap", name="pad_wrap"),
        helper.make_node("MaxPool", ["x4"], ["b", "idx"], kernel_shape=[2, 2], name="pool_indices"),
        helper.make_node("Relu", ["x"], ["c"], name="fine"),
        helper.make_node("Cast", ["c"], ["d"], to=TensorProto.STRING, name="cast_string"),
    ], "features", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2]),
                    helper.make_tensor_value_info("x4", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ["a", "b"]] +
        [helper.make_tensor_value_info("idx", TensorProto.INT64, None),
         helper.make_tensor_value_info("d", TensorProto.STRING, None)],
        initializer=[numpy_helper.from_array(i64(1, 1, 1, 1), "p")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, os.path.join(SPECIAL, "features.onnx"))


# ---- composite reductions, Hardmax, TopK, Trilu, EyeLike, OneHot, norms ----
# (drawn after every other case, so adding them left the earlier inputs
# as they were)

def gen_reduce_norm_topk():
    x = f32(3, 4, 5)
    xd = x.astype(np.float64)
    case("reduce_l1", [node("ReduceL1", ["x"], ["y"], axes=[1], keepdims=0)], {"x": x},
         {"y": as32(np.abs(xd).sum(1))})
    case("reduce_l2", [node("ReduceL2", ["x"], ["y"], axes=[0, -1])], {"x": x},
         {"y": as32(np.sqrt((xd * xd).sum((0, 2), keepdims=True)))})
    pos = f32(2, 3, lo=0.5, hi=3.0)
    case("reduce_logsum", [node("ReduceLogSum", ["x"], ["y"], keepdims=0)], {"x": pos},
         {"y": as32(np.log(pos.astype(np.float64).sum()))})
    big = (x + np.float32(80)).astype(np.float32)  # exp(85) overflows float32
    bd = big.astype(np.float64)
    case("reduce_logsumexp", [node("ReduceLogSumExp", ["x"], ["y"], axes=[2], keepdims=0)], {"x": big},
         {"y": as32(np.log(np.exp(bd).sum(2)))})
    # Opset 18: axes as an input, and noop_with_empty_axes with none.
    case("reduce_sumsquare_18", [const("ax", i64(0, 2)), node("ReduceSumSquare", ["x", "ax"], ["y"], keepdims=1)],
         {"x": x}, {"y": as32((xd * xd).sum((0, 2), keepdims=True))}, opset=18)
    case("reduce_sumsquare_noop", [node("ReduceSumSquare", ["x"], ["y"], noop_with_empty_axes=1)], {"x": x},
         {"y": as32(xd * xd)}, opset=18)

    # Hardmax: at opset 11 over the input flattened at the axis, from 13
    # along the axis alone. Ties (integers) pick the first.
    h = rng.integers(0, 4, size=(2, 3, 4)).astype(np.float32)

    def hardmax(v, axis):
        am = np.expand_dims(np.argmax(v, axis), axis)
        return (np.arange(v.shape[axis]).reshape([-1 if i == axis else 1 for i in range(v.ndim)]) == am).astype(np.float32)
    case("hardmax_11", [node("Hardmax", ["x"], ["y"], axis=1)], {"x": h},
         {"y": hardmax(h.reshape(2, 12), 1).reshape(2, 3, 4)}, opset=11)
    case("hardmax_13", [node("Hardmax", ["x"], ["y"], axis=1)], {"x": h}, {"y": hardmax(h, 1)})

    # TopK: ties broken by the lower index (a stable sort of -x, or x).
    t = rng.integers(0, 5, size=(3, 10)).astype(np.float32)
    order = np.argsort(-t, axis=1, kind="stable")[:, :3]
    case("topk", [const("k", i64(3)), node("TopK", ["x", "k"], ["v", "i"], axis=-1)], {"x": t},
         {"v": np.take_along_axis(t, order, 1), "i": order.astype(np.int64)})
    order = np.argsort(t, axis=0, kind="stable")[:2]
    case("topk_smallest_axis0", [const("k", i64(2)), node("TopK", ["x", "k"], ["v", "i"], axis=0, largest=0)],
         {"x": t}, {"v": np.take_along_axis(t, order, 0), "i": order.astype(np.int64)})

    tr = f32(2, 3, 4)
    case("trilu_lower", [const("k", np.int64(-1)), node("Trilu", ["x", "k"], ["y"], upper=0)], {"x": tr},
         {"y": np.tril(tr, -1)}, opset=14)
    case("trilu_upper", [node("Trilu", ["x"], ["y"])], {"x": tr}, {"y": np.triu(tr)}, opset=14)
    e = f32(3, 5)
    case("eyelike", [node("EyeLike", ["x"], ["y"], k=-1, dtype=TensorProto.DOUBLE)], {"x": e},
         {"y": np.eye(3, 5, -1, dtype=np.float64)})
    idx = np.array([[0, -1, 4], [7, -5, 2]], dtype=np.int64)
    vals = np.array([-1, 3], dtype=np.float32)
    oh = np.full((2, 5, 3), -1, dtype=np.float32)
    for a in range(2):
        for c in range(3):
            i = idx[a, c] + 5 if idx[a, c] < 0 else idx[a, c]
            if 0 <= i < 5:
                oh[a, i, c] = 3
    case("onehot", [const("d", np.float32(5)), node("OneHot", ["i", "d", "v"], ["y"], axis=1)],
         {"i": idx, "v": vals}, {"y": oh}, opset=11)

    m = f32(2, 3, 4, 2)
    md = m.astype(np.float64)
    mean = md.mean((0, 2, 3), keepdims=True)
    std = np.sqrt(((md - mean) ** 2).mean((0, 2, 3), keepdims=True))
    case("mvn", [node("MeanVarianceNormalization", ["x"], ["y"])], {"x": m}, {"y": as32((md - mean) / (std + 1e-9))})
    s, b = f32(3), f32(3)
    mean = md.mean((2, 3), keepdims=True)
    var = ((md - mean) ** 2).mean((2, 3), keepdims=True)
    inorm = (md - mean) / np.sqrt(var + 1e-3) * s.astype(np.float64).reshape(3, 1, 1) + b.astype(np.float64).reshape(3, 1, 1)
    case("instancenorm", [node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3)],
         {"x": m, "s": s, "b": b}, {"y": as32(inorm)})
    lx = f32(2, 5, 3, 3)
    ld = lx.astype(np.float64)
    sq = np.zeros_like(ld)
    for c in range(5):
        sq[:, c] = (ld[:, max(0, c - 1):min(5, c + 2)] ** 2).sum(1)  # size 3: one channel each side
    case("lrn", [node("LRN", ["x"], ["y"], size=3, alpha=1e-2, beta=0.75, bias=1.5)], {"x": lx},
         {"y": as32(ld / (1.5 + 1e-2 / 3 * sq) ** 0.75)})


if __name__ == "__main__":
    for d in (CASES, SPECIAL):
        shutil.rmtree(d, ignore_errors=True)
    gen_elementwise()
    gen_math()
    gen_conv()
    gen_shape()
    gen_block()
    gen_special()
    gen_reduce_norm_topk()
    # Activations, trig/hyperbolic, Sign, IsNaN/IsInf, Mod, BitShift, Xor,
    # windows: their own file, and their own seed, so the cases above keep
    # their bytes.
    import gen_models_activation
    gen_models_activation.gen_activation(sys.modules[__name__])
    import gen_index_models  # the indexing and Einsum-family cases (issue 23)
    gen_index_models.gen()
