#!/usr/bin/python3
"""Writes a statically quantized (QDQ) copy of an ONNX model in the form ONNX
Runtime's quantize_static writes with QuantFormat.QDQ (that tool is not
installable here): every Conv, Gemm and MatMul with a float initializer as
its weight reads

    x -> QuantizeLinear(x, sx, zx) -> DequantizeLinear(., sx, zx)     uint8, per tensor
    W -> DequantizeLinear(Wq, sw, 0, axis)                            int8, per channel
    b -> DequantizeLinear(bq, sx*sw, 0, axis=0)                       int32 (Conv, Gemm)

with the activations' scales and zero points calibrated on random inputs
(min/max over the batches, widened to hold 0, asymmetric uint8) and the
weights quantized symmetrically per output channel (axis 0 of a Conv's or a
transB Gemm's weight, axis 1 of a MatMul's [K, N]); a MatMul's bias Add
stays float. Products of two activations (attention's) stay float.

Calibration runs the float model with ONNX Runtime (onnxruntime-node,
bench/onnx/ort_run.js) on CALIB random batches drawn like the model's own
in_*.npy (floats: their mean and spread; integers: their range), so the
script needs only numpy, onnx and node:

    quantize_static.py IN_DIR OUT_DIR [--calib 8] [--seed 0] [--inputs DIR]

(--inputs: where the in_*.npy to draw like are, IN_DIR by default; the
benchmark models keep theirs in per-batch folders such as b1.)

IN_DIR holds model.onnx and its in_*.npy/out_*.npy (export_models.py's
layout); OUT_DIR gets the quantized model.onnx, the inputs, and the float
model's outputs as float_<name>.npy. The quantized model's references,
out_<name>.npy, come from ONNX Runtime as for quantize_dynamic.py. The
committed models (onnx/testdata/models/*_qdq) were made with

    export NODE_PATH=$PWD/bench/onnx/node_modules
    for m in mlp bert cnn; do
      /usr/bin/python3 onnx/testdata/quantize_static.py onnx/testdata/models/$m onnx/testdata/models/${m}_qdq
      node bench/onnx/ort_run.js onnx/testdata/models/${m}_qdq/model.onnx onnx/testdata/models/${m}_qdq onnx/testdata/models/${m}_qdq
    done
"""
import argparse
import glob
import os
import shutil
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "..", "bench", "onnx", "ort_run.js")


def products(graph, inits):
    """(node, weight axis) for every Conv, Gemm and MatMul with a float
    initializer weight; the axis is the weight's output-channel axis."""
    out = []
    for n in graph.node:
        if len(n.input) < 2 or n.input[1] not in inits:
            continue
        w = numpy_helper.to_array(inits[n.input[1]])
        if w.dtype != np.float32:
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if n.op_type == "Conv" and w.ndim == 4:
            out.append((n, 0))
        elif n.op_type == "Gemm" and w.ndim == 2 and attrs.get("transA", 0) == 0 and attrs.get("alpha", 1.0) == 1.0 and attrs.get("beta", 1.0) == 1.0:
            out.append((n, 0 if attrs.get("transB", 0) else 1))
        elif n.op_type == "MatMul" and w.ndim == 2:
            out.append((n, 1))
    return out


def random_like(a, rng):
    if a.dtype.kind == "f":
        return (rng.standard_normal(a.shape) * (a.std() or 1) + a.mean()).astype(a.dtype)
    return rng.integers(a.min(), a.max() + 1, size=a.shape).astype(a.dtype)


def calibrate(model, names, inputs, batches, seed):
    """The smallest and largest value of each named float tensor over
    batches random inputs, from ONNX Runtime running the float model."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for i, t in enumerate(names):
        m.graph.node.append(helper.make_node("Identity", [t], [f"cal_{i}"]))
        m.graph.output.append(helper.make_tensor_value_info(f"cal_{i}", TensorProto.FLOAT, None))
    rng = np.random.default_rng(seed)
    given = {os.path.basename(f)[3:-4]: np.load(f) for f in glob.glob(os.path.join(inputs, "in_*.npy"))}
    if not given:
        raise SystemExit(f"{inputs}: no in_*.npy to draw calibration inputs like")
    lo, hi = np.full(len(names), np.inf), np.full(len(names), -np.inf)
    with tempfile.TemporaryDirectory() as tmp:
        onnx.save(m, os.path.join(tmp, "model.onnx"))
        for _ in range(batches):
            for k, a in given.items():
                np.save(os.path.join(tmp, f"in_{k}.npy"), random_like(a, rng))
            subprocess.run(["node", ORT_RUN, os.path.join(tmp, "model.onnx"), tmp, tmp], check=True)
            for i in range(len(names)):
                v = np.load(os.path.join(tmp, f"out_cal_{i}.npy"))
                lo[i], hi[i] = min(lo[i], v.min()), max(hi[i], v.max())
    return lo, hi


def activation_params(lo, hi):
    """ONNX Runtime's asymmetric uint8 min/max parameters."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    zero = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
    return scale, zero


def weight_params(w, axis):
    """Symmetric int8 per channel along axis (127 levels each side)."""
    red = tuple(i for i in range(w.ndim) if i != axis)
    amax = np.max(np.abs(w), axis=red)
    scale = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.rint(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--calib", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--inputs")
    a = ap.parse_args()
    m = onnx.load(os.path.join(a.src, "model.onnx"))
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    prods = products(g, inits)
    acts = sorted({n.input[0] for n, _ in prods})
    lo, hi = calibrate(m, acts, a.inputs or a.src, a.calib, a.seed)
    aparams = {t: activation_params(lo[i], hi[i]) for i, t in enumerate(acts)}

    def init(name, arr):
        inits[name] = numpy_helper.from_array(arr, name)
        return name

    qdq = []  # the activations' Q/DQ pairs, placed where each activation is made
    for t in acts:
        s, z = aparams[t]
        base = t.replace("/", "_").strip("_")
        init(base + "_scale", np.array(s, np.float32))
        init(base + "_zero_point", np.array(z, np.uint8))
        qdq.append((t, [
            helper.make_node("QuantizeLinear", [t, base + "_scale", base + "_zero_point"], [base + "_quantized"], name=base + "_QuantizeLinear"),
            helper.make_node("DequantizeLinear", [base + "_quantized", base + "_scale", base + "_zero_point"], [base + "_dequantized"], name=base + "_DequantizeLinear"),
        ]))
    made = dict(qdq)
    rewired = {}
    for n, axis in prods:
        t = n.input[0]
        sx = float(aparams[t][0])
        wname = n.input[1]
        q, sw = weight_params(numpy_helper.to_array(inits[wname]), axis)
        init(wname + "_quantized", q)
        init(wname + "_scale", sw if sw.size > 1 else sw.reshape(()))
        init(wname + "_zero_point", np.zeros(sw.shape, np.int8))
        dq = [helper.make_node("DequantizeLinear", [wname + "_quantized", wname + "_scale", wname + "_zero_point"], [wname + "_dequantized"],
                               name=wname + "_DequantizeLinear", axis=axis)]
        ins = [made[t][1].output[0], wname + "_dequantized"]
        if len(n.input) > 2 and n.input[2] in inits:  # Conv's and Gemm's bias: int32 at scale sx·sw
            bname = n.input[2]
            bs = (np.float32(sx) * sw).astype(np.float32)
            b = numpy_helper.to_array(inits[bname])
            init(bname + "_quantized", np.clip(np.rint(b / bs), -2**31, 2**31 - 1).astype(np.int32))
            init(bname + "_scale", bs)
            init(bname + "_zero_point", np.zeros(bs.shape, np.int32))
            dq.append(helper.make_node("DequantizeLinear", [bname + "_quantized", bname + "_scale", bname + "_zero_point"], [bname + "_dequantized"],
                                       name=bname + "_DequantizeLinear", axis=0))
            ins.append(bname + "_dequantized")
        rewired[id(n)] = (dq, ins)
    new = []
    for t in g.input:  # Q/DQ of graph inputs first
        new.extend(made.get(t.name, []))
    for n in g.node:
        if id(n) in rewired:
            dq, ins = rewired[id(n)]
            new.extend(dq)
            del n.input[:]
            n.input.extend(ins)
        new.append(n)
        for o in n.output:
            new.extend(made.get(o, []))
    used = {i for n in new for i in n.input}
    del g.node[:]
    g.node.extend(new)
    del g.initializer[:]
    g.initializer.extend(v for k, v in inits.items() if k in used)
    for op in m.opset_import:
        if op.domain in ("", "ai.onnx") and op.version < 13:  # per-axis DequantizeLinear
            op.version = 13
    onnx.checker.check_model(m)
    os.makedirs(a.dst, exist_ok=True)
    onnx.save(m, os.path.join(a.dst, "model.onnx"))
    for f in glob.glob(os.path.join(a.src, "in_*.npy")):
        shutil.copy(f, a.dst)
    for f in glob.glob(os.path.join(a.src, "out_*.npy")):
        shutil.copy(f, os.path.join(a.dst, "float_" + os.path.basename(f)[4:]))
    print(f"{a.src}: {len(prods)} products, {len(acts)} activations quantized -> {a.dst}")


if __name__ == "__main__":
    main()
