#!/usr/bin/python3
"""Writes a dynamically quantized copy of an ONNX model the way ONNX Runtime's
quantize_dynamic does (that tool is not installable here): every MatMul whose
second input is a 2-D float initializer W becomes

    DynamicQuantizeLinear(x) -> q, s, z
    MatMulInteger(q, Wq, z, Wz) -> Cast(float) -> Mul(., Mul(s, Ws))

with W quantized to int8 symmetrically (Wz = 0), per tensor or, with
--per-channel, per column. Gemm nodes with transB=1, alpha=1 and beta=1 (how
torch exports nn.Linear on 2-D inputs) are first rewritten as MatMul + Add.

    quantize_dynamic.py IN_DIR OUT_DIR [--per-channel]

IN_DIR holds model.onnx and its in_*.npy/out_*.npy (export_models.py's
layout); OUT_DIR gets the quantized model.onnx, the inputs, and the float
model's outputs as float_<name>.npy (what the quantized model approximates).
The quantized model's own references, out_<name>.npy, come from ONNX
Runtime: `node bench/onnx/ort_run.js OUT_DIR/model.onnx OUT_DIR OUT_DIR`
(onnx/quant_models_test.go compares kiln with both).

The committed models (onnx/testdata/models/*_dynq) were made with

    for m in mlp bert; do
      /usr/bin/python3 onnx/testdata/quantize_dynamic.py onnx/testdata/models/$m onnx/testdata/models/${m}_dynq
      node bench/onnx/ort_run.js onnx/testdata/models/${m}_dynq/model.onnx onnx/testdata/models/${m}_dynq onnx/testdata/models/${m}_dynq
    done
"""
import argparse
import glob
import os
import shutil

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def quantize_weight(w, per_channel):
    axis = 0 if per_channel else None
    amax = np.max(np.abs(w), axis=axis, keepdims=False)
    scale = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    zero = np.zeros_like(scale, dtype=np.int8)
    return q, scale, zero


def gemm_to_matmul(graph, inits):
    out = []
    for n in graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if (n.op_type == "Gemm" and attrs.get("transB", 0) == 1 and attrs.get("transA", 0) == 0
                and attrs.get("alpha", 1.0) == 1.0 and attrs.get("beta", 1.0) == 1.0 and n.input[1] in inits):
            w = numpy_helper.to_array(inits[n.input[1]]).T.copy()
            name = n.input[1] + "_t"
            inits[name] = numpy_helper.from_array(w, name)
            mm = n.output[0] + "_mm" if len(n.input) > 2 else n.output[0]
            out.append(helper.make_node("MatMul", [n.input[0], name], [mm], name=n.name + "_mm"))
            if len(n.input) > 2:
                out.append(helper.make_node("Add", [mm, n.input[2]], [n.output[0]], name=n.name + "_bias"))
            continue
        out.append(n)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--per-channel", action="store_true")
    a = ap.parse_args()
    m = onnx.load(os.path.join(a.src, "model.onnx"))
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    nodes = gemm_to_matmul(g, inits)
    new, done = [], 0
    for n in nodes:
        if n.op_type != "MatMul" or n.input[1] not in inits:
            new.append(n)
            continue
        w = numpy_helper.to_array(inits[n.input[1]])
        if w.ndim != 2 or w.dtype != np.float32:
            new.append(n)
            continue
        x, base = n.input[0], n.output[0]
        q, s, z = quantize_weight(w, a.per_channel)
        for suffix, arr in (("_q", q), ("_scale", s), ("_zero", z)):
            inits[n.input[1] + suffix] = numpy_helper.from_array(arr, n.input[1] + suffix)
        xq, xs, xz = x + "_quantized", x + "_scale", x + "_zero_point"
        if not any(o == xq for k in new for o in k.output):
            new.append(helper.make_node("DynamicQuantizeLinear", [x], [xq, xs, xz], name=x + "_QuantizeLinear"))
        new.append(helper.make_node("MatMulInteger", [xq, n.input[1] + "_q", xz, n.input[1] + "_zero"], [base + "_int"], name=n.name + "_quant"))
        new.append(helper.make_node("Mul", [xs, n.input[1] + "_scale"], [base + "_scales"], name=n.name + "_scales"))
        new.append(helper.make_node("Cast", [base + "_int"], [base + "_float"], to=TensorProto.FLOAT, name=n.name + "_cast"))
        new.append(helper.make_node("Mul", [base + "_float", base + "_scales"], [base], name=n.name + "_dequant"))
        done += 1
    used = {i for n in new for i in n.input}
    del g.node[:]
    g.node.extend(new)
    del g.initializer[:]
    g.initializer.extend(v for k, v in inits.items() if k in used)
    onnx.checker.check_model(m)
    os.makedirs(a.dst, exist_ok=True)
    onnx.save(m, os.path.join(a.dst, "model.onnx"))
    for f in glob.glob(os.path.join(a.src, "in_*.npy")):
        shutil.copy(f, a.dst)
    for f in glob.glob(os.path.join(a.src, "out_*.npy")):
        shutil.copy(f, os.path.join(a.dst, "float_" + os.path.basename(f)[4:]))
    print(f"{a.src}: {done} MatMuls quantized -> {a.dst}")


if __name__ == "__main__":
    main()
