#!/usr/bin/python3
"""Independent reference outputs for kiln's kernels, computed with numpy and torch.

Run from this directory:  /usr/bin/python3 gen_reference.py
(Debian's python3-numpy 1.24 and python3-torch 1.13). Seeds are fixed and
BLAS runs on one thread, so a re-run writes byte-identical files. The Go tests
read only the JSON; they never need Python.

Files written
  ops/testdata/ref_<family>.json           one-op cases, read by ops/reference_test.go
  internal/testmodels/testdata/model_<name>.json
                                           end-to-end models, read by internal/testmodels

Op-case file: {"generator": ..., "cases": [case, ...]} with

  case = {"name":    unique name, also the Go subtest name,
          "op":      the kiln op as graph.Op.String() prints it ("Add", "Conv2D"),
          "attrs":   the builder arguments (see below),
          "inputs":  [T, ...]  fed to graph inputs in0, in1, ... in this order,
          "outputs": [T, ...]  expected outputs,
          "rtol":    float, "atol": float}
      check per element: |got - want| <= atol + rtol*|want|; NaN matches only
      NaN, an infinity only the same infinity; integer and bool outputs exact.

  T = {"dtype": "f32"|"f64"|"f16"|"bf16"|"i8"|"u8"|"i32"|"i64"|"bool",
       "shape": [dims...] ([] is a scalar),
       "b64":   base64 of the elements, little-endian, row-major
                (bool one byte 0/1; f16/bf16 their 16-bit patterns)}

  attrs by op (float attributes are stored already rounded to float32, as
  kiln's Attrs hold them):
    LeakyRelu {alpha}; Clip {min, max} (null = open side, +-Inf)
    Cast {to: dtype name}
    Gemm {alpha, beta, transA, transB}; C is the optional third input
    ReduceSum/Mean/Max/Min/Prod {axes: [...] ([] = all), keepdims}
    ArgMax/ArgMin {axis, keepdims}; Softmax/LogSoftmax {axis}
    CumSum {axis, exclusive, reverse}
    LayerNorm {axis, eps} inputs x[, scale[, bias]]; RMSNorm {axis, eps} x[, scale]
    BatchNorm {eps} inputs x, scale, bias, mean, var
    Conv2D {strides, pads [t,l,b,r], dilations, groups}; bias optional 3rd input
    MaxPool2D/AvgPool2D {kernel, strides, pads [t,l,b,r], count_pad}
    Reshape {shape} (may hold -1); Transpose {perm} (null = reverse)
    Concat {axis}; Split {axis, sizes, index}
    Slice {axes, starts, ends, steps} (graph.SliceSpec, ONNX semantics; null
          axes/steps = defaults); Gather {axis}; Expand {shape}
    Squeeze {axes}; Unsqueeze {axes}; Flatten {axis}
    Pad {pads [begins..., ends...], mode: constant|reflect|edge, value}
    Tile {reps}; Attention {causal, scale} (scale 0 = 1/sqrt(D)), mask optional
          4th input; RoPE {interleaved} inputs x, cos, sin
    every other op: {}

Where numpy/torch and kiln could differ, the expectation follows kiln's
documented rule and is computed explicitly (noted at each place): integer Div
truncates toward zero (numpy floors); float -> int Cast saturates and maps NaN
to 0 (numpy leaves that undefined); Slice uses ONNX bound clamping; Attention
is composed from torch ops (torch 1.13 has no scaled_dot_product_attention);
RMSNorm and RoPE follow their formulas. Float results are computed in float64
from the already-rounded inputs and rounded once to the output dtype.
"""

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import base64  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "internal", "testmodels", "testdata"))
GENERATOR = "ops/testdata/gen_reference.py; do not edit by hand"

NP = {
    "f32": "<f4", "f64": "<f8", "f16": "<f2", "i8": "<i1", "u8": "<u1",
    "i32": "<i4", "i64": "<i8", "bool": "<u1",
}
NAN, INF = float("nan"), float("inf")

# Tolerances by kind of computation (float32 outputs).
EXACT = (0.0, 0.0)
ELEM = (2e-6, 1e-7)        # one correctly rounded op per element
TRANS = (4e-6, 2e-6)       # transcendental functions
ACCUM = (2e-5, 2e-6)       # sums, dot products, normalisation
F64TOL = (1e-12, 1e-14)
F16TOL = (2e-3, 1e-4)      # widened through f32: one double rounding
BF16TOL = (1.6e-2, 1e-3)


# ---------------------------------------------------------------- encoding

def bf16_bits(a):
    """Round float values to bfloat16 (nearest even, via torch from f32)."""
    t = torch.from_numpy(np.ascontiguousarray(np.asarray(a, dtype=np.float32)))
    return t.to(torch.bfloat16).view(torch.int16).numpy().astype("<i2")


def T(a, dt):
    """Encode an array as a JSON tensor of kiln dtype dt."""
    a = np.asarray(a)
    if dt == "bf16":
        raw = bf16_bits(a).tobytes()
    elif dt == "bool":
        raw = np.asarray(a, dtype=bool).astype("<u1").tobytes()
    else:
        raw = np.ascontiguousarray(a.astype(NP[dt])).tobytes()
    return {"dtype": dt, "shape": [int(d) for d in a.shape], "b64": base64.b64encode(raw).decode("ascii")}


def rnd(a, dt):
    """Round float64 values to dtype dt and return them as float64 again."""
    a = np.asarray(a, dtype=np.float64)
    if dt == "f32":
        return a.astype(np.float32).astype(np.float64)
    if dt == "f16":
        return a.astype(np.float16).astype(np.float64)
    if dt == "bf16":
        t = torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
        return t.to(torch.float64).numpy()
    return a


def f32(v):
    """A Python float rounded to float32, as kiln stores float attributes."""
    return float(np.float32(v))


class Family:
    """Collects the cases of one output file."""

    def __init__(self, name):
        self.name = name
        self.cases = []

    def add(self, name, op, attrs, inputs, outputs, tol):
        rtol, atol = tol
        self.cases.append({
            "name": name, "op": op, "attrs": attrs,
            "inputs": [T(a, dt) for a, dt in inputs],
            "outputs": [T(a, dt) for a, dt in outputs],
            "rtol": rtol, "atol": atol,
        })

    def write(self):
        path = os.path.join(HERE, "ref_%s.json" % self.name)
        body = ",\n".join(json.dumps(c, allow_nan=False, separators=(",", ":")) for c in self.cases)
        with open(path, "w") as f:
            f.write('{"generator":%s,"cases":[\n%s\n]}\n' % (json.dumps(GENERATOR), body))


def rng(seed):
    return np.random.default_rng(seed)


def uni(r, lo, hi, shape, dt="f32"):
    return rnd(r.uniform(lo, hi, size=shape), dt)


def tt(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


def tol_for(dt, base):
    return {"f64": F64TOL, "f16": F16TOL, "bf16": BF16TOL}.get(dt, base)


# ---------------------------------------------------------------- unary

def erf(a):
    return torch.erf(tt(a)).numpy()


def gelu(a):
    return F.gelu(tt(a)).numpy()


def gelu_tanh(a):
    return F.gelu(tt(a), approximate="tanh").numpy()


def sigmoid(a):
    return torch.sigmoid(tt(a)).numpy()


UNARY = {
    # op: (function on float64, domain, tolerance)
    "Neg": (np.negative, "wide", ELEM),
    "Abs": (np.abs, "wide", ELEM),
    "Exp": (np.exp, "exp", TRANS),
    "Log": (np.log, "pos", TRANS),
    "Sqrt": (np.sqrt, "pos", ELEM),
    "Rsqrt": (lambda a: 1 / np.sqrt(a), "pos", ELEM),
    "Reciprocal": (lambda a: 1 / a, "nonzero", ELEM),
    "Tanh": (np.tanh, "act", TRANS),
    "Sigmoid": (sigmoid, "act", TRANS),
    "Relu": (lambda a: np.maximum(a, 0), "wide", EXACT),
    "Gelu": (gelu, "act", TRANS),
    "GeluTanh": (gelu_tanh, "act", TRANS),
    "Silu": (lambda a: a * sigmoid(a), "act", TRANS),
    "Erf": (erf, "act", TRANS),
    "Sin": (np.sin, "trig", TRANS),
    "Cos": (np.cos, "trig", TRANS),
    "Floor": (np.floor, "halves", EXACT),
    "Ceil": (np.ceil, "halves", EXACT),
    "Round": (np.round, "halves", EXACT),  # numpy rounds half to even, as kiln
}


def domain(kind, r):
    base = {
        "wide": [-1e30, -12345.678, -3.5, -1, -1e-30, 0, 1e-30, 0.25, 1, 7.5, 98765.4, 1e30],
        "exp": [-100, -87.5, -20, -1, -1e-3, 0, 1e-3, 0.5, 1, 10, 80, 88.7, 89, 100],
        "pos": [1e-30, 1e-6, 0.01, 0.5, 1, 2, 10, 12345.6, 1e20, 3e38],
        "nonzero": [-1e30, -100, -1, -0.01, -1e-20, 1e-20, 0.01, 0.5, 1, 3, 1e4, 1e30],
        "act": [-30, -10, -6, -3, -1, -0.5, -1e-4, 0, 1e-4, 0.5, 1, 3, 6, 10, 30],
        "trig": [-50, -10, -3.14159, -1, 0, 0.5, 1, 1.5707964, 3.14159, 10, 50],
        "halves": [-1e10, -3.5, -2.5, -1.5, -0.5, -0.49, 0, 0.49, 0.5, 1.5, 2.5, 3.5, 4.51, 1e10],
    }[kind]
    lo, hi = {
        "wide": (-100, 100), "exp": (-10, 10), "pos": (1e-3, 100), "nonzero": (0.1, 10),
        "act": (-8, 8), "trig": (-20, 20), "halves": (-20, 20),
    }[kind]
    n = 40 - len(base)  # 40 elements: a [4, 10] tensor
    extra = r.uniform(lo, hi, size=n)
    if kind == "nonzero":
        extra *= np.where(r.random(n) < 0.5, -1, 1)
    if kind == "halves":
        extra = np.concatenate([np.round(extra[:n // 2] * 2) / 2, extra[n // 2:]])
    return np.concatenate([np.asarray(base, dtype=np.float64), extra])


SPECIAL = [NAN, INF, -INF, 0.0, 1.0, -1.0, 0.5, -2.0]
SPECIAL_OPS = ["Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Reciprocal", "Tanh", "Sigmoid",
               "Erf", "Sin", "Floor", "Ceil", "Round"]


def gen_unary():
    fam = Family("unary")
    seed = 100
    for op, (fn, dom, tol) in UNARY.items():
        seed += 1
        r = rng(seed)
        raw = domain(dom, r)
        with np.errstate(all="ignore"):
            x = rnd(raw, "f32")
            fam.add(op + "_f32", op, {}, [(x.reshape(4, -1), "f32")], [(fn(x).reshape(4, -1), "f32")], tol)
            fam.add(op + "_f64", op, {}, [(raw, "f64")], [(fn(raw), "f64")], F64TOL)
    with np.errstate(all="ignore"):
        x = np.asarray(SPECIAL)
        for op in SPECIAL_OPS:
            fn, _, tol = UNARY[op]
            fam.add(op + "_f32_special", op, {}, [(x, "f32")], [(fn(x), "f32")], tol)
    # Ops documented for signed integers too.
    r = rng(150)
    for dt in ("i32", "i64"):
        xi = r.integers(-1000, 1000, size=(3, 5))
        xi[0, :3] = [0, -1, 1]
        if dt == "i64":
            xi[1, 0], xi[1, 1] = 5_000_000_000, -7_000_000_000
        fam.add("Neg_" + dt, "Neg", {}, [(xi, dt)], [(-xi, dt)], EXACT)
        fam.add("Abs_" + dt, "Abs", {}, [(xi, dt)], [(np.abs(xi), dt)], EXACT)
        fam.add("Relu_" + dt, "Relu", {}, [(xi, dt)], [(np.maximum(xi, 0), dt)], EXACT)
        fam.add("Clip_" + dt, "Clip", {"min": -300.0, "max": 250.0}, [(xi, dt)],
                [(np.clip(xi, -300, 250), dt)], EXACT)
        # An open side (+Inf) converts to the integer type's maximum.
        fam.add("Clip_%s_open" % dt, "Clip", {"min": -5.0, "max": None}, [(xi, dt)],
                [(np.maximum(xi, -5), dt)], EXACT)
    # LeakyRelu and Clip with attributes.
    r = rng(151)
    x = uni(r, -10, 10, (4, 6))
    x[0, 0] = 0
    for alpha in (0.01, 0.2):
        a = f32(alpha)
        fam.add("LeakyRelu_f32_a%g" % alpha, "LeakyRelu", {"alpha": a}, [(x, "f32")],
                [(np.where(x >= 0, x, a * x), "f32")], ELEM)
    fam.add("LeakyRelu_f64", "LeakyRelu", {"alpha": f32(0.1)}, [(x, "f64")],
            [(np.where(x >= 0, x, f32(0.1) * x), "f64")], F64TOL)
    lo, hi = f32(-2.5), f32(3.3)
    fam.add("Clip_f32", "Clip", {"min": lo, "max": hi}, [(x, "f32")], [(np.clip(x, lo, hi), "f32")], EXACT)
    fam.add("Clip_f32_min_only", "Clip", {"min": lo, "max": None}, [(x, "f32")],
            [(np.maximum(x, lo), "f32")], EXACT)
    fam.add("Clip_f32_max_only", "Clip", {"min": None, "max": hi}, [(x, "f32")],
            [(np.minimum(x, hi), "f32")], EXACT)
    fam.add("Clip_f64", "Clip", {"min": lo, "max": hi}, [(x, "f64")], [(np.clip(x, lo, hi), "f64")], EXACT)
    # Not.
    b = r.random((3, 4)) < 0.5
    fam.add("Not_bool", "Not", {}, [(b, "bool")], [(~b, "bool")], EXACT)
    # Half precision through the widening path.
    for dt, op in (("f16", "Relu"), ("f16", "Tanh"), ("f16", "Exp"), ("bf16", "Exp"),
                   ("bf16", "Sigmoid"), ("bf16", "Neg")):
        fn = UNARY[op][0]
        x = rnd(r.uniform(-4, 4, size=(2, 8)), dt)
        fam.add("%s_%s" % (op, dt), op, {}, [(x, dt)], [(rnd(fn(x), dt), dt)], tol_for(dt, TRANS))
    fam.write()


# ---------------------------------------------------------------- binary

BCAST = [  # name, lhs shape, rhs shape
    ("same", (3, 4), (3, 4)),
    ("scalar", (3, 4), ()),
    ("scalarlhs", (), (2, 3)),
    ("row", (3, 4), (4,)),
    ("col", (3, 4), (3, 1)),
    ("bcast3", (2, 1, 4), (3, 1)),
]


def trunc_div(x, y):
    """Integer division truncating toward zero (kiln, C, ONNX); numpy floors."""
    q = np.abs(x) // np.abs(y)
    return np.where((x < 0) != (y < 0), -q, q)


BINARY = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
    "Pow": np.power, "Max": np.maximum, "Min": np.minimum,
}


def binary_operands(op, r, sa, sb, dt):
    if op == "Div":
        x = r.uniform(-10, 10, size=sa)
        y = r.uniform(0.5, 4, size=sb) * np.where(r.random(sb) < 0.5, -1, 1)
    elif op == "Pow":
        x = r.uniform(0.1, 4, size=sa)
        y = r.uniform(-3, 3, size=sb)
    else:
        x = r.uniform(-10, 10, size=sa)
        y = r.uniform(-10, 10, size=sb)
        if op in ("Max", "Min") and sa == sb:
            y.flat[:2] = x.flat[:2]  # ties
    return rnd(x, dt), rnd(y, dt)


def gen_binary():
    fam = Family("binary")
    seed = 200
    for op, fn in BINARY.items():
        tol = TRANS if op == "Pow" else ELEM
        if op in ("Max", "Min"):
            tol = EXACT
        for bname, sa, sb in BCAST:
            seed += 1
            x, y = binary_operands(op, rng(seed), sa, sb, "f32")
            fam.add("%s_f32_%s" % (op, bname), op, {}, [(x, "f32"), (y, "f32")], [(fn(x, y), "f32")], tol)
        seed += 1
        x, y = binary_operands(op, rng(seed), (2, 3, 4), (3, 1), "f64")
        fam.add("%s_f64_bcast" % op, op, {}, [(x, "f64"), (y, "f64")], [(fn(x, y), "f64")], F64TOL)
    # Integer arithmetic (Pow is left to floats).
    r = rng(260)
    for dt in ("i32", "i64"):
        for bname, sa, sb in (("same", (3, 5), (3, 5)), ("row", (4, 5), (5,)), ("bcast3", (2, 1, 4), (3, 1))):
            x = r.integers(-50, 51, size=sa)
            y = r.integers(1, 8, size=sb) * np.where(r.random(sb) < 0.5, -1, 1)
            if sa == sb:
                x.flat[:4] = [7, -7, 7, -7]
                y.flat[:4] = [2, 2, -2, -2]
            big = 3_000_000_000 if dt == "i64" else 0
            fam.add("Add_%s_%s" % (dt, bname), "Add", {}, [(x + big, dt), (y, dt)], [(x + big + y, dt)], EXACT)
            fam.add("Sub_%s_%s" % (dt, bname), "Sub", {}, [(x, dt), (y, dt)], [(x - y, dt)], EXACT)
            fam.add("Mul_%s_%s" % (dt, bname), "Mul", {}, [(x, dt), (y, dt)], [(x * y, dt)], EXACT)
            fam.add("Div_%s_%s" % (dt, bname), "Div", {}, [(x, dt), (y, dt)], [(trunc_div(x, y), dt)], EXACT)
            fam.add("Max_%s_%s" % (dt, bname), "Max", {}, [(x, dt), (y, dt)], [(np.maximum(x, y), dt)], EXACT)
            fam.add("Min_%s_%s" % (dt, bname), "Min", {}, [(x, dt), (y, dt)], [(np.minimum(x, y), dt)], EXACT)
    # Special values: NaN propagation in Max/Min, IEEE division and powers.
    with np.errstate(all="ignore"):
        x = np.array([NAN, 1.0, NAN, INF, -INF, 0.0, 2.0, -3.0])
        y = np.array([1.0, NAN, NAN, -INF, 5.0, -0.0, INF, -INF])
        for op in ("Max", "Min", "Add", "Sub", "Mul"):
            fam.add(op + "_f32_special", op, {}, [(x, "f32"), (y, "f32")], [(BINARY[op](x, y), "f32")], EXACT)
        xd = np.array([1.0, -1.0, 0.0, 6.0, INF, NAN, -7.5, 1e30])
        yd = np.array([0.0, 0.0, 0.0, -0.5, 2.0, 1.0, INF, 1e-30])
        fam.add("Div_f32_special", "Div", {}, [(xd, "f32"), (yd, "f32")], [(xd / yd, "f32")], ELEM)
        xp = np.array([-2.0, -2.0, 0.0, 0.0, 2.0, 2.0, 1.0, NAN, -8.0, 10.0])
        yp = np.array([3.0, 0.5, 0.0, -1.0, 200.0, -200.0, NAN, 0.0, 2.0, -3.0])
        fam.add("Pow_f32_special", "Pow", {}, [(xp, "f32"), (yp, "f32")], [(np.power(xp, yp), "f32")], TRANS)
    # Half precision.
    r = rng(270)
    for dt, op in (("f16", "Add"), ("f16", "Mul"), ("bf16", "Add"), ("bf16", "Sub"), ("f16", "Div")):
        x, y = binary_operands(op, r, (3, 4), (4,), dt)
        fam.add("%s_%s_row" % (op, dt), op, {}, [(x, dt), (y, dt)], [(rnd(BINARY[op](x, y), dt), dt)], tol_for(dt, ELEM))
    fam.write()


CMP = {
    "Equal": np.equal, "Less": np.less, "LessOrEqual": np.less_equal,
    "Greater": np.greater, "GreaterOrEqual": np.greater_equal,
}


def gen_logic():
    fam = Family("logic")
    seed = 300
    for op, fn in CMP.items():
        for bname, sa, sb in BCAST[:1] + BCAST[3:]:
            seed += 1
            r = rng(seed)
            x = r.integers(-2, 3, size=sa) * 0.5  # small set of values: many ties
            y = r.integers(-2, 3, size=sb) * 0.5
            fam.add("%s_f32_%s" % (op, bname), op, {}, [(x, "f32"), (y, "f32")], [(fn(x, y), "bool")], EXACT)
        seed += 1
        r = rng(seed)
        xi = r.integers(-3, 4, size=(2, 5))
        yi = r.integers(-3, 4, size=(5,))
        fam.add("%s_i32_row" % op, op, {}, [(xi, "i32"), (yi, "i32")], [(fn(xi, yi), "bool")], EXACT)
        xl = xi + 10_000_000_000
        fam.add("%s_i64_scalar" % op, op, {}, [(xl, "i64"), (np.int64(10_000_000_001), "i64")],
                [(fn(xl, 10_000_000_001), "bool")], EXACT)
        fam.add("%s_f64_same" % op, op, {}, [(xi * 0.25, "f64"), (np.tile(yi, (2, 1)) * 0.25, "f64")],
                [(fn(xi, np.tile(yi, (2, 1))), "bool")], EXACT)
        xs = np.array([NAN, NAN, 1.0, INF, -INF, 0.0, -0.0, INF])
        ys = np.array([NAN, 1.0, NAN, INF, INF, -0.0, 0.0, 1e30])
        with np.errstate(invalid="ignore"):
            fam.add("%s_f32_special" % op, op, {}, [(xs, "f32"), (ys, "f32")], [(fn(xs, ys), "bool")], EXACT)
    r = rng(320)
    a, b = r.random((3, 4)) < 0.5, r.random((3, 4)) < 0.5
    fam.add("Equal_bool_same", "Equal", {}, [(a, "bool"), (b, "bool")], [(a == b, "bool")], EXACT)
    for bname, sa, sb in (("same", (3, 4), (3, 4)), ("row", (3, 4), (4,)), ("bcast3", (2, 1, 4), (3, 1)),
                          ("scalar", (2, 3), ())):
        x, y = r.random(sa) < 0.5, r.random(sb) < 0.5
        fam.add("And_" + bname, "And", {}, [(x, "bool"), (y, "bool")], [(x & y, "bool")], EXACT)
        fam.add("Or_" + bname, "Or", {}, [(x, "bool"), (y, "bool")], [(x | y, "bool")], EXACT)
    # Where: all three operands broadcast.
    for name, sc, sx, sy, dt in (("same", (3, 4), (3, 4), (3, 4), "f32"),
                                 ("bcast3", (2, 1, 4), (3, 1), (), "f32"),
                                 ("condrow", (4,), (3, 4), (3, 1), "f32"),
                                 ("i32", (2, 3), (2, 3), (3,), "i32"),
                                 ("i64", (2, 1), (1, 3), (2, 3), "i64"),
                                 ("f64", (3, 1), (3, 2), (2,), "f64")):
        c = r.random(sc) < 0.5
        if dt in ("i32", "i64"):
            x, y = r.integers(-100, 100, size=sx), r.integers(-100, 100, size=sy)
        else:
            x, y = uni(r, -5, 5, sx, dt), uni(r, -5, 5, sy, dt)
        fam.add("Where_" + name, "Where", {}, [(c, "bool"), (x, dt), (y, dt)], [(np.where(c, x, y), dt)], EXACT)
    bx, by = r.random((2, 3)) < 0.5, r.random((3,)) < 0.5
    c = r.random((2, 3)) < 0.5
    fam.add("Where_bool", "Where", {}, [(c, "bool"), (bx, "bool"), (by, "bool")],
            [(np.where(c, bx, by), "bool")], EXACT)
    fam.write()


# ---------------------------------------------------------------- cast

INT_RANGE = {"i8": (-128, 127), "u8": (0, 255), "i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1)}


def float_to_int(x, dt):
    """kiln's rule (tensor.Convert): truncate toward zero, saturate, NaN -> 0.
    numpy leaves out-of-range and NaN conversions undefined, so this is explicit."""
    lo, hi = INT_RANGE[dt]
    out = []
    for v in np.asarray(x, dtype=np.float64).ravel():
        if math.isnan(v):
            out.append(0)
        elif v <= lo:
            out.append(lo)
        elif v >= hi:
            out.append(hi)
        else:
            out.append(int(v))  # int() truncates toward zero
    return np.array(out, dtype=NP[dt]).reshape(np.shape(x))


def int_to_f32(v):
    """Round a Python int to the nearest float32, ties to even, in one step."""
    if v == 0:
        return 0.0
    a = abs(v)
    shift = a.bit_length() - 24
    if shift > 0:
        q, rem = divmod(a, 1 << shift)
        half = 1 << (shift - 1)
        if rem > half or (rem == half and q & 1):
            q += 1
        a = q << shift
    return math.copysign(float(a), v)


def gen_cast():
    fam = Family("cast")

    def c(name, x, src, dst, want, tol=EXACT):
        fam.add("Cast_" + name, "Cast", {"to": dst}, [(x, src)], [(want, dst)], tol)

    fr = np.array([-2.7, -1.5, -0.5, -0.0, 0.0, 0.9, 1.5, 2.5, 3.99, 1000.25, -1000.75, 123456.7])
    fr32 = rnd(fr, "f32")
    for dst in ("i32", "i64", "i8"):
        v = fr32[np.abs(fr32) < 127] if dst == "i8" else fr32
        c("f32_%s_trunc" % dst, v, "f32", dst, np.trunc(v).astype(NP[dst]))
    c("f64_i32_trunc", fr, "f64", "i32", np.trunc(fr).astype("<i4"))
    sat = np.array([NAN, INF, -INF, 3e9, -3e9, 2147483520.0, -2147483648.0, 1e20, -1e20, 300.5, -0.99])
    for src in ("f32", "f64"):
        for dst in ("i32", "i64", "u8", "i8"):
            c("%s_%s_saturate" % (src, dst), rnd(sat, src), src, dst, float_to_int(rnd(sat, src), dst))
    ints = np.array([0, 1, -1, 7, -100, 16777216, 16777217, 16777219, -16777217, 2**31 - 1, -2**31])
    c("i32_f32", ints, "i32", "f32", rnd(ints.astype(np.float64), "f32"))
    c("i32_f64", ints, "i32", "f64", ints.astype(np.float64))
    big = np.array([0, -5, 2**53, 2**53 + 1, 2**53 + 3, -(2**53) - 1, 2**62 + 2**10, 2**63 - 1, -2**63,
                    2**62 + 2**38 + 1, -(2**40 + 2**16 + 1), 16777217], dtype=np.int64)
    # Python's float(int) rounds half to even once; int_to_f32 does the same
    # for float32 (going through float64 would round twice: 2^62 + 2^38 + 1).
    c("i64_f64", big, "i64", "f64", np.array([float(int(v)) for v in big]))
    c("i64_f32", big, "i64", "f32", np.array([int_to_f32(int(v)) for v in big]))
    c("i32_i8_wrap", np.array([0, 127, 128, 255, 256, 300, -129, -1, 1000]), "i32", "i8",
      np.array([0, 127, 128, 255, 256, 300, -129, -1, 1000]).astype(np.int32).astype(np.int8))
    c("i64_i32_wrap", np.array([5, -5, 2**31, 2**32 + 7, -(2**33) - 1], dtype=np.int64), "i64", "i32",
      np.array([5, -5, 2**31, 2**32 + 7, -(2**33) - 1], dtype=np.int64).astype(np.int32))
    c("i8_u8_wrap", np.array([-1, -128, 0, 127], dtype=np.int8), "i8", "u8",
      np.array([-1, -128, 0, 127], dtype=np.int8).astype(np.uint8))
    c("u8_i64", np.array([0, 1, 200, 255], dtype=np.uint8), "u8", "i64", np.array([0, 1, 200, 255]))
    c("i8_f32", np.array([-128, -1, 0, 127], dtype=np.int8), "i8", "f32", np.array([-128, -1, 0, 127.0]))
    c("i32_i64", ints, "i32", "i64", ints.astype(np.int64))
    bools = np.array([NAN, INF, -INF, 0.0, -0.0, 1e-30, -2.5, 1.0])
    c("f32_bool", bools, "f32", "bool", bools != 0)
    c("f64_bool", bools, "f64", "bool", bools != 0)
    c("i32_bool", np.array([0, 1, -1, 256, 0]), "i32", "bool", np.array([0, 1, -1, 256, 0]) != 0)
    c("i64_bool", np.array([0, 2**40, -1]), "i64", "bool", np.array([False, True, True]))
    bb = np.array([True, False, True, True])
    c("bool_f32", bb, "bool", "f32", bb.astype(np.float64))
    c("bool_i32", bb, "bool", "i32", bb.astype(np.int32))
    c("bool_i64", bb, "bool", "i64", bb.astype(np.int64))
    f = np.array([NAN, INF, -INF, 0.1, -1e-40, 1e30, 3.4028234663852886e38, 1.5e-45])
    f = rnd(f, "f32")
    c("f32_f64", f, "f32", "f64", f)
    d = np.array([NAN, INF, 0.1, 1e300, -1e300, 1e-300, 1 + 2**-24, 1 + 2**-24 + 2**-50, 3.4028235677973366e38])
    with np.errstate(over="ignore"):
        c("f64_f32", d, "f64", "f32", d.astype(np.float32))
        hs = np.array([NAN, INF, -INF, 0.1, 65504.0, 65520.0, 1e5, 1e-8, 6e-8, 1 + 2**-11, 1 + 3 * 2**-11, -2.0])
        c("f32_f16", rnd(hs, "f32"), "f32", "f16", rnd(hs, "f32").astype(np.float16))
        # numpy converts f64 -> f16 with one rounding, as kiln documents.
        hd = np.array([1 + 2**-11 + 2**-40, 0.1, 65519.99, 2049.0, -1e-7])
        c("f64_f16", hd, "f64", "f16", hd.astype(np.float16))
    hv = rnd(np.array([0.0, 1.0, -2.5, 65504.0, 6e-8, 0.333]), "f16")
    c("f16_f32", hv, "f16", "f32", hv)
    c("f16_f64", hv, "f16", "f64", hv)
    bv = rnd(np.array([0.0, 1.0, -2.5, 3e38, 1e-38, 0.333]), "bf16")
    c("bf16_f32", bv, "bf16", "f32", bv)
    bsrc = rnd(np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, 0.1, -3.3, 3.4e38, NAN, INF]), "f32")
    c("f32_bf16", bsrc, "f32", "bf16", bsrc)  # T() rounds to bf16 with torch (nearest even)
    c("f16_bf16", hv, "f16", "bf16", hv)
    with np.errstate(over="ignore"):
        c("i32_f16", np.array([0, 1, 2049, 2051, -70000]), "i32", "f16",
          np.array([0, 1, 2049, 2051, -70000]).astype(np.float16))
    c("f32_f32_copy", f, "f32", "f32", f)
    fam.write()


# ---------------------------------------------------------------- linear algebra

def gen_linalg():
    fam = Family("linalg")
    r = rng(400)
    shapes = [
        ("2d", (3, 4), (4, 5)),
        ("batched", (2, 3, 4), (2, 4, 5)),
        ("bcast_batch", (2, 1, 3, 4), (3, 4, 5)),
        ("bcast_lhs2d", (3, 4), (2, 4, 5)),
        ("vec_mat", (4,), (4, 5)),
        ("mat_vec", (3, 4), (4,)),
        ("vec_vec", (7,), (7,)),
        ("batched_vec", (2, 3, 4), (4,)),
        ("vec_batched", (4,), (2, 4, 5)),
        ("k0", (3, 0), (0, 5)),
        ("large_k", (5, 67), (67, 9)),
    ]
    for name, sa, sb in shapes:
        a, b = uni(r, -2, 2, sa), uni(r, -2, 2, sb)
        fam.add("MatMul_" + name, "MatMul", {}, [(a, "f32"), (b, "f32")], [(np.matmul(a, b), "f32")], ACCUM)
    a, b = uni(r, -2, 2, (2, 3, 4), "f64"), uni(r, -2, 2, (4, 6), "f64")
    fam.add("MatMul_f64", "MatMul", {}, [(a, "f64"), (b, "f64")], [(np.matmul(a, b), "f64")], F64TOL)
    a, b = uni(r, -2, 2, (3, 8), "f16"), uni(r, -2, 2, (8, 2), "f16")
    fam.add("MatMul_f16", "MatMul", {}, [(a, "f16"), (b, "f16")], [(rnd(a @ b, "f16"), "f16")], (4e-3, 4e-3))
    a, b = uni(r, -2, 2, (3, 8), "bf16"), uni(r, -2, 2, (8, 2), "bf16")
    fam.add("MatMul_bf16", "MatMul", {}, [(a, "bf16"), (b, "bf16")], [(rnd(a @ b, "bf16"), "bf16")], (2e-2, 2e-2))

    M, K, N = 3, 4, 5
    cshapes = [None, (N,), (M, 1), (), (M, N), (1, N)]
    i = 0
    for ta in (False, True):
        for tb in (False, True):
            for alpha, beta in ((1.0, 0.0), (0.5, 2.0), (-1.25, 0.75)):
                cs = cshapes[i % len(cshapes)]
                i += 1
                A = uni(r, -2, 2, (K, M) if ta else (M, K))
                B = uni(r, -2, 2, (N, K) if tb else (K, N))
                al, be = f32(alpha), f32(beta)
                want = al * ((A.T if ta else A) @ (B.T if tb else B))
                ins = [(A, "f32"), (B, "f32")]
                cname = "noC"
                if cs is not None:
                    C = uni(r, -2, 2, cs)
                    want = want + be * C
                    ins.append((C, "f32"))
                    cname = "C" + "x".join(str(d) for d in cs) if cs else "Cscalar"
                name = "Gemm_%s%s_a%g_b%g_%s" % ("tA" if ta else "nA", "tB" if tb else "nB", alpha, beta, cname)
                fam.add(name, "Gemm", {"alpha": al, "beta": be, "transA": ta, "transB": tb}, ins,
                        [(want, "f32")], ACCUM)
    A, B, C = uni(r, -1, 1, (4, 6), "f64"), uni(r, -1, 1, (6, 2), "f64"), uni(r, -1, 1, (2,), "f64")
    fam.add("Gemm_f64", "Gemm", {"alpha": 2.0, "beta": f32(0.3), "transA": False, "transB": False},
            [(A, "f64"), (B, "f64"), (C, "f64")], [(2.0 * A @ B + f32(0.3) * C, "f64")], F64TOL)
    fam.write()


# ---------------------------------------------------------------- reductions

REDUCE = {
    "ReduceSum": np.sum, "ReduceMean": np.mean, "ReduceMax": np.max,
    "ReduceMin": np.min, "ReduceProd": np.prod,
}
AXES = [[], [0], [1], [2], [-1], [0, 2], [2, 0], [1, 2], [0, 1, 2]]


def gen_reduce():
    fam = Family("reduce")
    seed = 500
    for op, fn in REDUCE.items():
        tol = EXACT if op in ("ReduceMax", "ReduceMin") else ACCUM
        for axes in AXES:
            for keep in (False, True):
                seed += 1
                r = rng(seed)
                x = uni(r, 0.5, 1.5, (2, 3, 4)) if op == "ReduceProd" else uni(r, -5, 5, (2, 3, 4))
                ax = tuple(axes) if axes else None
                want = fn(x, axis=ax, keepdims=keep)
                name = "%s_f32_ax%s_%s" % (op, "".join(str(a).replace("-", "m") for a in axes) or "all",
                                          "keep" if keep else "drop")
                fam.add(name, op, {"axes": axes, "keepdims": keep}, [(x, "f32")], [(want, "f32")], tol)
        r = rng(seed + 1000)
        x = uni(r, 0.5, 1.5, (3, 5), "f64")
        fam.add(op + "_f64_ax1", op, {"axes": [1], "keepdims": False}, [(x, "f64")],
                [(fn(x, axis=1), "f64")], F64TOL)
        x = uni(r, 0.5, 1.5, (4, 6), "f16")
        fam.add(op + "_f16_ax0", op, {"axes": [0], "keepdims": True}, [(x, "f16")],
                [(rnd(fn(x, axis=0, keepdims=True), "f16"), "f16")], F16TOL)
        if op != "ReduceMean":
            for dt in ("i32", "i64"):
                xi = r.integers(-2, 3, size=(2, 3, 4)) if op == "ReduceProd" else r.integers(-1000, 1000, size=(2, 3, 4))
                for axes, keep in (([1], False), ([0, 2], True), ([], False)):
                    ax = tuple(axes) if axes else None
                    name = "%s_%s_ax%s" % (op, dt, "".join(map(str, axes)) or "all")
                    fam.add(name, op, {"axes": axes, "keepdims": keep}, [(xi, dt)],
                            [(fn(xi, axis=ax, keepdims=keep), dt)], EXACT)
    # Empty reduced axis: the identity.
    r = rng(590)
    x = np.zeros((2, 0, 3))
    fam.add("ReduceSum_empty_axis", "ReduceSum", {"axes": [1], "keepdims": False}, [(x, "f32")],
            [(np.zeros((2, 3)), "f32")], EXACT)
    fam.add("ReduceProd_empty_axis", "ReduceProd", {"axes": [1], "keepdims": True}, [(x, "f32")],
            [(np.ones((2, 1, 3)), "f32")], EXACT)
    fam.add("ReduceSum_infs", "ReduceSum", {"axes": [1], "keepdims": False},
            [(np.array([[1.0, INF, 2.0], [-INF, 3.0, 0.0]]), "f32")], [(np.array([INF, -INF]), "f32")], EXACT)
    fam.add("ReduceMax_infs", "ReduceMax", {"axes": [0], "keepdims": False},
            [(np.array([[-INF, INF, -INF], [-1e30, 3.0, -INF]]), "f32")], [(np.array([-1e30, INF, -INF]), "f32")], EXACT)

    # ArgMax / ArgMin: first index on ties.
    seed = 600
    for op, fn in (("ArgMax", np.argmax), ("ArgMin", np.argmin)):
        for axis in (0, 1, 2, -1):
            for keep in (False, True):
                seed += 1
                r = rng(seed)
                x = r.integers(-3, 4, size=(3, 4, 5)).astype(np.float64)  # many ties
                want = fn(x, axis=axis)
                if keep:
                    want = np.expand_dims(want, axis)
                fam.add("%s_f32_ax%d_%s" % (op, axis, "keep" if keep else "drop"), op,
                        {"axis": axis, "keepdims": keep}, [(x, "f32")], [(want, "i64")], EXACT)
        r = rng(seed + 50)
        xi = r.integers(-5, 5, size=(4, 6))
        fam.add(op + "_i32_ax1", op, {"axis": 1, "keepdims": False}, [(xi, "i32")], [(fn(xi, axis=1), "i64")], EXACT)
        x = uni(r, -1, 1, (4, 6), "f64")
        fam.add(op + "_f64_ax0", op, {"axis": 0, "keepdims": False}, [(x, "f64")], [(fn(x, axis=0), "i64")], EXACT)
        xs = np.array([[-INF, 1.0, INF, INF], [-INF, -INF, -1e30, 0.0]])
        fam.add(op + "_f32_infs", op, {"axis": 1, "keepdims": False}, [(xs, "f32")], [(fn(xs, axis=1), "i64")], EXACT)

    # Softmax / LogSoftmax over every axis.
    seed = 700
    for op in ("Softmax", "LogSoftmax"):
        fn = torch.softmax if op == "Softmax" else torch.log_softmax
        for axis in (0, 1, 2, -1):
            seed += 1
            r = rng(seed)
            x = uni(r, -6, 6, (2, 3, 5))
            fam.add("%s_f32_ax%d" % (op, axis), op, {"axis": axis}, [(x, "f32")],
                    [(fn(tt(x), axis).numpy(), "f32")], ACCUM)
        x = rnd(np.array([[1000.0, 1001.0, 999.0, -1000.0], [-INF, 0.0, 1.0, -INF], [3.0, 3.0, 3.0, 3.0]]), "f32")
        fam.add(op + "_f32_stability", op, {"axis": 1}, [(x, "f32")], [(fn(tt(x), 1).numpy(), "f32")], ACCUM)
        x = uni(r, -6, 6, (3, 4), "f64")
        fam.add(op + "_f64_ax0", op, {"axis": 0}, [(x, "f64")], [(fn(tt(x), 0).numpy(), "f64")], F64TOL)
        x = uni(r, -3, 3, (2, 8), "bf16")
        fam.add(op + "_bf16_ax1", op, {"axis": 1}, [(x, "bf16")],
                [(rnd(fn(tt(x), 1).numpy(), "bf16"), "bf16")], (BF16TOL[0], 2e-2))

    # CumSum: exclusive and reverse.
    seed = 800
    for axis in (0, 1, -1):
        for excl in (False, True):
            for rev in (False, True):
                seed += 1
                r = rng(seed)
                x = uni(r, -5, 5, (3, 4, 2)) if axis != 1 else uni(r, -5, 5, (3, 4))
                want = cumsum(x, axis, excl, rev)
                fam.add("CumSum_f32_ax%d%s%s" % (axis, "_excl" if excl else "", "_rev" if rev else ""),
                        "CumSum", {"axis": axis, "exclusive": excl, "reverse": rev}, [(x, "f32")],
                        [(want, "f32")], ACCUM)
    r = rng(850)
    for dt in ("i32", "i64"):
        xi = r.integers(-100, 100, size=(3, 5))
        for excl, rev in ((False, False), (True, True)):
            fam.add("CumSum_%s%s%s" % (dt, "_excl" if excl else "", "_rev" if rev else ""), "CumSum",
                    {"axis": 1, "exclusive": excl, "reverse": rev}, [(xi, dt)], [(cumsum(xi, 1, excl, rev), dt)], EXACT)
    x = uni(r, -5, 5, (6,), "f64")
    fam.add("CumSum_f64_excl_rev", "CumSum", {"axis": 0, "exclusive": True, "reverse": True}, [(x, "f64")],
            [(cumsum(x, 0, True, True), "f64")], F64TOL)

    # TopK: a stable argsort of -x (x for the smallest) keeps the lower
    # index first on ties, as ONNX specifies; many ties.
    r = rng(870)
    for dt, shape, axis, k, smallest in (("f32", (3, 7), -1, 3, False), ("f32", (5, 4), 0, 2, True),
                                        ("i32", (2, 9, 3), 1, 4, False), ("f64", (4, 6), 1, 6, True),
                                        ("i64", (2, 40), 1, 5, False)):
        x = r.integers(-4, 5, size=shape)
        order = np.argsort(x if smallest else -x, axis=axis, kind="stable")
        order = np.take(order, range(k), axis=axis)
        vals = np.take_along_axis(x, order, axis=axis)
        for out, want, wdt in ((0, vals, dt), (1, order, "i64")):
            fam.add("TopK_%s_ax%d_k%d%s_%s" % (dt, axis, k, "_smallest" if smallest else "", ("values", "indices")[out]),
                    "TopK", {"k": k, "axis": axis, "smallest": smallest, "output": out}, [(x, dt)], [(want, wdt)], EXACT)
    fam.write()


def cumsum(x, axis, exclusive, reverse):
    """Running sum built from numpy slices: flip for reverse, shift for exclusive."""
    a = np.flip(x, axis) if reverse else x
    c = np.cumsum(a, axis=axis)
    if exclusive:
        c = np.concatenate([np.zeros_like(np.take(c, [0], axis=axis)), np.take(c, range(c.shape[axis] - 1), axis=axis)],
                           axis=axis)
    return np.flip(c, axis) if reverse else c


# ---------------------------------------------------------------- normalisation

def gen_norm():
    fam = Family("norm")
    r = rng(900)
    eps = f32(1e-5)
    for name, shape, axis, with_scale, with_bias in (
            ("last_affine", (2, 3, 8), -1, True, True),
            ("ax1_affine", (2, 3, 8), 1, True, True),
            ("plain", (4, 16), 1, False, False),
            ("scale_only", (3, 5), -1, True, False),
            ("ax0", (3, 4), 0, True, True)):
        x = rnd(uni(r, -3, 3, shape) + uni(r, -2, 2, shape[:1] + (1,) * (len(shape) - 1)), "f32")
        ns = shape[axis % len(shape):]
        ins = [(x, "f32")]
        w = b = None
        if with_scale:
            w = uni(r, 0.5, 1.5, ns)
            ins.append((w, "f32"))
        if with_bias:
            b = uni(r, -1, 1, ns)
            ins.append((b, "f32"))
        want = F.layer_norm(tt(x), ns, None if w is None else tt(w), None if b is None else tt(b), eps).numpy()
        fam.add("LayerNorm_" + name, "LayerNorm", {"axis": axis, "eps": eps}, ins, [(want, "f32")], ACCUM)
        # RMSNorm by its formula: x / sqrt(mean(x^2 over [axis, rank)) + eps) * scale.
        red = tuple(range(axis % len(shape), len(shape)))
        rms = x / np.sqrt(np.mean(x * x, axis=red, keepdims=True) + eps)
        ins = [(x, "f32")]
        if with_scale:
            rms = rms * w
            ins.append((w, "f32"))
        fam.add("RMSNorm_" + name, "RMSNorm", {"axis": axis, "eps": eps}, ins, [(rms, "f32")], ACCUM)
    big_eps = f32(0.1)
    x = uni(r, -0.2, 0.2, (2, 6))
    fam.add("LayerNorm_big_eps", "LayerNorm", {"axis": 1, "eps": big_eps}, [(x, "f32")],
            [(F.layer_norm(tt(x), (6,), eps=big_eps).numpy(), "f32")], ACCUM)
    fam.add("RMSNorm_big_eps", "RMSNorm", {"axis": 1, "eps": big_eps}, [(x, "f32")],
            [(x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + big_eps), "f32")], ACCUM)
    x = uni(r, -3, 3, (3, 10), "f64")
    w, b = uni(r, 0.5, 1.5, (10,), "f64"), uni(r, -1, 1, (10,), "f64")
    fam.add("LayerNorm_f64", "LayerNorm", {"axis": -1, "eps": eps}, [(x, "f64"), (w, "f64"), (b, "f64")],
            [(F.layer_norm(tt(x), (10,), tt(w), tt(b), eps).numpy(), "f64")], F64TOL)
    fam.add("RMSNorm_f64", "RMSNorm", {"axis": -1, "eps": eps}, [(x, "f64"), (w, "f64")],
            [(x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps) * w, "f64")], F64TOL)
    x = uni(r, -3, 3, (2, 16), "bf16")
    w = uni(r, 0.5, 1.5, (16,), "bf16")
    fam.add("RMSNorm_bf16", "RMSNorm", {"axis": -1, "eps": eps}, [(x, "bf16"), (w, "bf16")],
            [(rnd(x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps) * w, "bf16"), "bf16")], BF16TOL)

    for name, shape, dt in (("nchw", (2, 3, 4, 5), "f32"), ("nc", (4, 3), "f32"), ("ncl", (2, 3, 6), "f32"),
                            ("f64", (2, 3, 2, 2), "f64")):
        x = uni(r, -3, 3, shape, dt)
        C = shape[1]
        scale, bias = uni(r, 0.5, 1.5, (C,), dt), uni(r, -1, 1, (C,), dt)
        mean, var = uni(r, -1, 1, (C,), dt), uni(r, 0.2, 2, (C,), dt)
        want = F.batch_norm(tt(x), tt(mean), tt(var), tt(scale), tt(bias), training=False, eps=eps).numpy()
        fam.add("BatchNorm_" + name, "BatchNorm", {"eps": eps},
                [(x, dt), (scale, dt), (bias, dt), (mean, dt), (var, dt)], [(want, dt)], tol_for(dt, ACCUM))

    # InstanceNorm: torch's, each [n, c] plane over its spatial elements.
    for name, shape, dt, e in (("nchw", (2, 3, 4, 5), "f32", eps), ("ncl_f64", (2, 4, 7), "f64", eps),
                               ("big_eps", (1, 2, 3, 3), "f32", big_eps)):
        x = rnd(uni(r, -3, 3, shape, dt) + uni(r, -2, 2, shape[:2] + (1,) * (len(shape) - 2), dt), dt)
        C = shape[1]
        scale, bias = uni(r, 0.5, 1.5, (C,), dt), uni(r, -1, 1, (C,), dt)
        want = F.instance_norm(tt(x), weight=tt(scale), bias=tt(bias), eps=e).numpy()
        fam.add("InstanceNorm_" + name, "InstanceNorm", {"eps": e}, [(x, dt), (scale, dt), (bias, dt)], [(want, dt)],
                tol_for(dt, ACCUM))
    fam.write()


# ---------------------------------------------------------------- convolution and pooling

def conv_ref(x, w, b, strides, pads, dil, groups):
    """torch conv2d; asymmetric pads [t, l, b, r] are applied with F.pad first."""
    t, l, bo, rr = pads
    xp = F.pad(tt(x), (l, rr, t, bo))
    return F.conv2d(xp, tt(w), None if b is None else tt(b), stride=tuple(strides),
                    dilation=tuple(dil), groups=groups).numpy()


def gen_conv():
    fam = Family("conv")
    r = rng(1000)
    cases = [  # name, x shape, w shape, bias, strides, pads, dilations, groups
        ("basic", (1, 3, 7, 7), (4, 3, 3, 3), True, [1, 1], [0, 0, 0, 0], [1, 1], 1),
        ("pad1", (2, 3, 6, 6), (5, 3, 3, 3), True, [1, 1], [1, 1, 1, 1], [1, 1], 1),
        ("stride2", (1, 2, 9, 8), (3, 2, 3, 3), True, [2, 2], [1, 1, 1, 1], [1, 1], 1),
        ("stride_hw", (1, 2, 9, 8), (3, 2, 3, 2), False, [2, 3], [0, 0, 0, 0], [1, 1], 1),
        ("asym_pads", (1, 3, 6, 7), (2, 3, 3, 3), True, [1, 1], [0, 1, 2, 1], [1, 1], 1),
        ("dilation2", (1, 2, 9, 9), (3, 2, 3, 3), True, [1, 1], [2, 2, 2, 2], [2, 2], 1),
        ("dil_stride", (2, 2, 10, 11), (2, 2, 3, 2), True, [2, 1], [1, 0, 1, 0], [2, 3], 1),
        ("groups2", (1, 4, 6, 6), (6, 2, 3, 3), True, [1, 1], [1, 1, 1, 1], [1, 1], 2),
        ("depthwise", (2, 3, 5, 5), (3, 1, 3, 3), True, [1, 1], [1, 1, 1, 1], [1, 1], 3),
        ("depthwise_mult2", (1, 3, 6, 6), (6, 1, 3, 3), False, [2, 2], [1, 1, 1, 1], [1, 1], 3),
        ("pointwise", (2, 5, 4, 4), (7, 5, 1, 1), True, [1, 1], [0, 0, 0, 0], [1, 1], 1),
        ("rect_kernel", (1, 2, 5, 8), (3, 2, 2, 4), True, [1, 2], [1, 2, 0, 1], [1, 1], 1),
        ("wide_in", (1, 16, 5, 5), (4, 16, 3, 3), True, [1, 1], [1, 1, 1, 1], [1, 1], 1),
    ]
    for name, xs, ws, has_b, st, pd, dl, gr in cases:
        x, w = uni(r, -1, 1, xs), uni(r, -1, 1, ws)
        b = uni(r, -1, 1, (ws[0],)) if has_b else None
        ins = [(x, "f32"), (w, "f32")] + ([(b, "f32")] if has_b else [])
        attrs = {"strides": st, "pads": pd, "dilations": dl, "groups": gr}
        fam.add("Conv2D_" + name, "Conv2D", attrs, ins, [(conv_ref(x, w, b, st, pd, dl, gr), "f32")], ACCUM)
    x, w, b = uni(r, -1, 1, (1, 2, 5, 5), "f64"), uni(r, -1, 1, (2, 2, 3, 3), "f64"), uni(r, -1, 1, (2,), "f64")
    fam.add("Conv2D_f64", "Conv2D", {"strides": [1, 1], "pads": [1, 1, 1, 1], "dilations": [1, 1], "groups": 1},
            [(x, "f64"), (w, "f64"), (b, "f64")], [(conv_ref(x, w, b, [1, 1], [1, 1, 1, 1], [1, 1], 1), "f64")], F64TOL)

    pools = [  # name, x shape, kernel, strides, pads
        ("k2s2", (2, 3, 8, 8), [2, 2], [2, 2], [0, 0, 0, 0]),
        ("k3s1p1", (1, 2, 5, 5), [3, 3], [1, 1], [1, 1, 1, 1]),
        ("k3s2p1", (1, 2, 7, 6), [3, 3], [2, 2], [1, 1, 1, 1]),
        ("asym", (1, 2, 5, 6), [2, 3], [1, 2], [0, 1, 1, 2]),
        ("floor_mode", (1, 1, 7, 7), [2, 2], [2, 2], [0, 0, 0, 0]),
        ("rect", (2, 1, 6, 9), [3, 2], [3, 1], [2, 0, 1, 1]),
    ]
    for name, xs, k, st, pd in pools:
        x = uni(r, -4, -1, xs) if name in ("k3s1p1", "asym") else uni(r, -3, 3, xs)  # all-negative: padding never wins
        t, l, bo, rr = pd
        X = tt(x)
        mx = F.max_pool2d(F.pad(X, (l, rr, t, bo), value=-INF), tuple(k), tuple(st)).numpy()
        fam.add("MaxPool2D_" + name, "MaxPool2D", {"kernel": k, "strides": st, "pads": pd, "count_pad": False},
                [(x, "f32")], [(mx, "f32")], EXACT)
        for cp in (False, True):
            sym = t == bo and l == rr and t <= k[0] // 2 and l <= k[1] // 2
            if sym:  # torch handles symmetric padding itself
                av = F.avg_pool2d(X, tuple(k), tuple(st), padding=(t, l), count_include_pad=cp).numpy()
            else:
                s = F.avg_pool2d(F.pad(X, (l, rr, t, bo)), tuple(k), tuple(st))
                if cp:
                    av = s.numpy()
                else:
                    ones = F.pad(torch.ones_like(X), (l, rr, t, bo))
                    av = (s / F.avg_pool2d(ones, tuple(k), tuple(st))).numpy()
            fam.add("AvgPool2D_%s_%s" % (name, "countpad" if cp else "nocountpad"), "AvgPool2D",
                    {"kernel": k, "strides": st, "pads": pd, "count_pad": cp}, [(x, "f32")], [(av, "f32")], ACCUM)
    x = uni(r, -3, 3, (1, 2, 4, 4), "f64")
    fam.add("MaxPool2D_f64", "MaxPool2D", {"kernel": [2, 2], "strides": [2, 2], "pads": [0, 0, 0, 0], "count_pad": False},
            [(x, "f64")], [(F.max_pool2d(tt(x), 2).numpy(), "f64")], EXACT)
    fam.add("AvgPool2D_f64", "AvgPool2D", {"kernel": [2, 2], "strides": [1, 1], "pads": [1, 1, 1, 1], "count_pad": False},
            [(x, "f64")], [(F.avg_pool2d(tt(x), 2, 1, padding=1, count_include_pad=False).numpy(), "f64")], F64TOL)
    for name, xs, dt in (("nchw", (2, 3, 4, 5), "f32"), ("ncl", (2, 3, 6), "f32"), ("ncdhw", (1, 2, 2, 3, 2), "f32"),
                         ("f64", (1, 2, 3, 3), "f64")):
        x = uni(r, -3, 3, xs, dt)
        want = np.mean(x, axis=tuple(range(2, len(xs))), keepdims=True)
        fam.add("GlobalAvgPool_" + name, "GlobalAvgPool", {}, [(x, dt)], [(want, dt)], tol_for(dt, ACCUM))
    fam.write()


# ---------------------------------------------------------------- shape and movement

def onnx_slice_indices(d, start, end, step):
    """ONNX Slice bounds (negative counts from the end, clamped) as an index list."""
    if start < 0:
        start += d
    if end < 0:
        end += d
    if step > 0:
        start, end = min(max(start, 0), d), min(max(end, 0), d)
    else:
        start, end = min(max(start, -1), d - 1), min(max(end, -1), d - 1)
    return list(range(start, end, step))


def slice_ref(x, axes, starts, ends, steps):
    n = len(starts)
    axes = list(range(n)) if axes is None else axes
    steps = [1] * n if steps is None else steps
    out = x
    for ax, s, e, st in zip(axes, starts, ends, steps):
        ax = ax % x.ndim
        out = np.take(out, onnx_slice_indices(x.shape[ax], s, e, st), axis=ax)
    return out


def gen_movement():
    fam = Family("movement")
    r = rng(1100)
    x = uni(r, -9, 9, (2, 3, 4))
    xi = r.integers(-100, 100, size=(2, 3, 4))
    for name, shape in (("4x6", [4, 6]), ("infer", [-1, 4]), ("flat", [24]), ("mid_infer", [2, -1, 2]),
                        ("5d", [1, 2, 3, 1, 4])):
        fam.add("Reshape_" + name, "Reshape", {"shape": shape}, [(x, "f32")], [(x.reshape(shape), "f32")], EXACT)
    fam.add("Reshape_i32", "Reshape", {"shape": [6, 4]}, [(xi, "i32")], [(xi.reshape(6, 4), "i32")], EXACT)
    fam.add("Reshape_to_scalar", "Reshape", {"shape": []}, [(np.array([2.5]), "f32")], [(np.array(2.5), "f32")], EXACT)
    fam.add("Reshape_from_scalar", "Reshape", {"shape": [1, 1]}, [(np.array(-1.5), "f32")],
            [(np.array([[-1.5]]), "f32")], EXACT)

    for name, perm in (("201", [2, 0, 1]), ("102", [1, 0, 2]), ("reverse", None), ("identity", [0, 1, 2])):
        fam.add("Transpose_" + name, "Transpose", {"perm": perm}, [(x, "f32")],
                [(np.transpose(x, perm), "f32")], EXACT)
    x4 = uni(r, -9, 9, (2, 3, 4, 5))
    fam.add("Transpose_heads", "Transpose", {"perm": [0, 2, 1, 3]}, [(x4, "f32")],
            [(np.transpose(x4, (0, 2, 1, 3)), "f32")], EXACT)
    fam.add("Transpose_4d_3120", "Transpose", {"perm": [3, 1, 2, 0]}, [(x4, "f32")],
            [(np.transpose(x4, (3, 1, 2, 0)), "f32")], EXACT)
    bx = r.random((3, 2)) < 0.5
    fam.add("Transpose_bool", "Transpose", {"perm": [1, 0]}, [(bx, "bool")], [(bx.T, "bool")], EXACT)
    fam.add("Transpose_i64", "Transpose", {"perm": [2, 1, 0]}, [(xi, "i64")], [(xi.transpose(2, 1, 0), "i64")], EXACT)

    a, b, c = uni(r, -9, 9, (2, 3)), uni(r, -9, 9, (1, 3)), uni(r, -9, 9, (4, 3))
    fam.add("Concat_ax0_three", "Concat", {"axis": 0}, [(a, "f32"), (b, "f32"), (c, "f32")],
            [(np.concatenate([a, b, c], 0), "f32")], EXACT)
    a, b = uni(r, -9, 9, (2, 3, 2)), uni(r, -9, 9, (2, 1, 2))
    fam.add("Concat_ax1", "Concat", {"axis": 1}, [(a, "f32"), (b, "f32")], [(np.concatenate([a, b], 1), "f32")], EXACT)
    a, b = r.integers(0, 9, (2, 2)), r.integers(0, 9, (2, 3))
    fam.add("Concat_axm1_i64", "Concat", {"axis": -1}, [(a, "i64"), (b, "i64")],
            [(np.concatenate([a, b], -1), "i64")], EXACT)
    e = np.zeros((0, 3))
    a = uni(r, -9, 9, (2, 3))
    fam.add("Concat_empty_piece", "Concat", {"axis": 0}, [(a, "f32"), (e, "f32"), (a, "f32")],
            [(np.concatenate([a, e, a], 0), "f32")], EXACT)
    fam.add("Concat_single", "Concat", {"axis": 1}, [(a, "f32")], [(a, "f32")], EXACT)

    xs = uni(r, -9, 9, (6, 4))
    for i, piece in enumerate(np.split(xs, [1, 3], axis=0)):
        fam.add("Split_ax0_123_piece%d" % i, "Split", {"axis": 0, "sizes": [1, 2, 3], "index": i},
                [(xs, "f32")], [(piece, "f32")], EXACT)
    for i, piece in enumerate(np.split(xs, [2], axis=1)):
        fam.add("Split_axm1_22_piece%d" % i, "Split", {"axis": -1, "sizes": [2, 2], "index": i},
                [(xs, "f32")], [(piece, "f32")], EXACT)
    fam.add("Split_empty_piece", "Split", {"axis": 1, "sizes": [4, 0], "index": 1}, [(xs, "f32")],
            [(xs[:, 4:], "f32")], EXACT)
    x3 = r.integers(-9, 9, (2, 6, 2))
    fam.add("Split_i32_mid", "Split", {"axis": 1, "sizes": [3, 1, 2], "index": 1}, [(x3, "i32")],
            [(x3[:, 3:4], "i32")], EXACT)

    xsl = uni(r, -9, 9, (5, 6))
    slices = [
        ("basic", [0], [1], [4], None),
        ("two_axes", None, [1, 2], [3, 5], None),
        ("neg_start", [1], [-3], [6], None),
        ("clamp_end", [0], [2], [100], None),
        ("reverse_all", [0], [-1], [-1000], [-1]),
        ("neg_step2", [1], [-1], [-7], [-2]),
        ("neg_step_mid", [1], [4], [1], [-1]),
        ("step2", [1], [0], [6], [2]),
        ("step3_both", [0, 1], [4, 0], [-10, 6], [-2, 3]),
        ("empty", [0], [3], [2], None),
        ("empty_neg", [0], [1], [3], [-1]),
        ("axes_neg", [-1], [-4], [-1], None),
        ("start_past_end", [1], [10], [20], None),
        ("big_neg_start", [0], [-100], [2], None),
        ("neg_step_big_start", [1], [100], [0], [-2]),
    ]
    for name, axes, starts, ends, steps in slices:
        fam.add("Slice_" + name, "Slice", {"axes": axes, "starts": starts, "ends": ends, "steps": steps},
                [(xsl, "f32")], [(slice_ref(xsl, axes, starts, ends, steps), "f32")], EXACT)
    x3f = uni(r, -9, 9, (3, 4, 5))
    fam.add("Slice_3d_mixed", "Slice", {"axes": [2, 0], "starts": [-1, 0], "ends": [0, 3], "steps": [-2, 2]},
            [(x3f, "f32")], [(slice_ref(x3f, [2, 0], [-1, 0], [0, 3], [-2, 2]), "f32")], EXACT)
    fam.add("Slice_i64", "Slice", {"axes": [1], "starts": [1], "ends": [3], "steps": None},
            [(xi, "i64")], [(xi[:, 1:3], "i64")], EXACT)

    xg = uni(r, -9, 9, (5, 3))
    for name, x_, idx, idt, axis in (
            ("ax0", xg, np.array([4, 0, 2]), "i64", 0),
            ("ax1_2d", xg, np.array([[0, 2], [1, 1]]), "i64", 1),
            ("negative", xg, np.array([-1, -5, 3]), "i64", 0),
            ("i32_idx", xg, np.array([2, 1, 0, 2]), "i32", 1),
            ("scalar_idx", xg, np.array(3), "i64", 0),
            ("3d_ax1", uni(r, -9, 9, (2, 4, 3)), np.array([[3, 0, 1]]), "i64", 1),
            ("axm1", uni(r, -9, 9, (2, 4, 3)), np.array([2, 2]), "i32", -1)):
        fam.add("Gather_" + name, "Gather", {"axis": axis}, [(x_, "f32"), (idx, idt)],
                [(np.take(x_, idx, axis=axis), "f32")], EXACT)
    xgi = r.integers(-9, 9, (4, 2))
    fam.add("Gather_i32_data", "Gather", {"axis": 0}, [(xgi, "i32"), (np.array([3, 3, 0]), "i64")],
            [(np.take(xgi, [3, 3, 0], axis=0), "i32")], EXACT)

    for name, xs_, shape in (("col_to_3d", (3, 1), [2, 3, 4]), ("vec", (1,), [3]), ("both_ways", (2, 1, 4), [3, 1]),
                             ("scalar", (), [2, 2]), ("same", (2, 3), [2, 3]), ("lower_rank", (2, 3), [3])):
        xe = uni(r, -9, 9, xs_)
        out = np.broadcast_to(xe, np.broadcast_shapes(xe.shape, tuple(shape)))
        fam.add("Expand_" + name, "Expand", {"shape": shape}, [(xe, "f32")], [(out, "f32")], EXACT)
    be = r.random((1, 3)) < 0.5
    fam.add("Expand_bool", "Expand", {"shape": [2, 3]}, [(be, "bool")], [(np.broadcast_to(be, (2, 3)), "bool")], EXACT)

    xq = uni(r, -9, 9, (1, 3, 1, 2))
    for name, axes in (("ax0", [0]), ("all", []), ("neg", [-2]), ("two", [2, 0])):
        fam.add("Squeeze_" + name, "Squeeze", {"axes": axes}, [(xq, "f32")],
                [(np.squeeze(xq, tuple(axes) if axes else None), "f32")], EXACT)
    xu = uni(r, -9, 9, (3, 4))
    for name, axes in (("front", [0]), ("back", [2]), ("two_neg", [1, -1]), ("many", [0, 3, 2])):
        fam.add("Unsqueeze_" + name, "Unsqueeze", {"axes": axes}, [(xu, "f32")],
                [(np.expand_dims(xu, tuple(axes)), "f32")], EXACT)
    fam.add("Unsqueeze_scalar", "Unsqueeze", {"axes": [0]}, [(np.array(4.0), "f32")], [(np.array([4.0]), "f32")], EXACT)

    for axis in (0, 1, 2, 3, -1):
        ax = axis % x.ndim if axis < 0 else axis
        lead = int(np.prod(x.shape[:ax]))  # prod of no dims is 1
        fam.add("Flatten_ax%s" % str(axis).replace("-", "m"), "Flatten", {"axis": axis}, [(x, "f32")],
                [(x.reshape(lead, -1), "f32")], EXACT)

    xp = uni(r, -9, 9, (3, 4))
    pads = [
        ("constant", [1, 2, 0, 1], "constant", 1.5),
        ("constant_zero", [0, 0, 2, 3], "constant", 0.0),
        ("reflect", [2, 1, 2, 3], "reflect", 0.0),
        ("edge", [2, 3, 1, 0], "edge", 0.0),
        ("no_pad", [0, 0, 0, 0], "reflect", 0.0),
    ]
    for name, p, mode, val in pads:
        width = [(p[i], p[i + 2]) for i in range(2)]
        kw = {"constant_values": val} if mode == "constant" else {}
        fam.add("Pad_" + name, "Pad", {"pads": p, "mode": mode, "value": f32(val)}, [(xp, "f32")],
                [(np.pad(xp, width, mode=mode, **kw), "f32")], EXACT)
    x3p = uni(r, -9, 9, (2, 3, 4))
    for mode in ("constant", "reflect", "edge"):
        p = [1, 0, 2, 1, 2, 3]
        width = [(p[i], p[i + 3]) for i in range(3)]
        kw = {"constant_values": -2.25} if mode == "constant" else {}
        fam.add("Pad_3d_" + mode, "Pad", {"pads": p, "mode": mode, "value": -2.25 if mode == "constant" else 0.0},
                [(x3p, "f32")], [(np.pad(x3p, width, mode=mode, **kw), "f32")], EXACT)
    xpi = r.integers(-9, 9, (2, 3))
    fam.add("Pad_i32_constant", "Pad", {"pads": [1, 1, 0, 2], "mode": "constant", "value": 7.0}, [(xpi, "i32")],
            [(np.pad(xpi, [(1, 0), (1, 2)], constant_values=7), "i32")], EXACT)

    xt = uni(r, -9, 9, (2, 3))
    for name, reps in (("21", [2, 1]), ("13", [1, 3]), ("22", [2, 2]), ("zero", [0, 2])):
        fam.add("Tile_" + name, "Tile", {"reps": reps}, [(xt, "f32")], [(np.tile(xt, reps), "f32")], EXACT)
    fam.add("Tile_3d_i64", "Tile", {"reps": [1, 2, 2]}, [(xi, "i64")], [(np.tile(xi, (1, 2, 2)), "i64")], EXACT)
    fam.write()


# ---------------------------------------------------------------- attention and RoPE

def attention_ref(q, k, v, mask, causal, scale):
    """softmax(q @ k^T * scale + mask) @ v in float64 torch. GQA repeats each
    kv head for H/Hk consecutive query heads; a causal query i sees keys
    j <= i + Sk - Sq; a bool mask keeps the true positions."""
    Q, K, V = tt(q), tt(k), tt(v)
    H, Hk = Q.shape[1], K.shape[1]
    K = K.repeat_interleave(H // Hk, dim=1)
    V = V.repeat_interleave(H // Hk, dim=1)
    if scale == 0:
        scale = 1 / math.sqrt(Q.shape[-1])
    s = Q @ K.transpose(-1, -2) * scale
    Sq, Sk = s.shape[-2], s.shape[-1]
    if mask is not None:
        if mask.dtype == bool:
            s = s.masked_fill(~torch.from_numpy(np.broadcast_to(mask, s.shape).copy()), -INF)
        else:
            s = s + tt(mask)
    if causal:
        i = torch.arange(Sq).unsqueeze(1)
        j = torch.arange(Sk).unsqueeze(0)
        s = s.masked_fill(j > i + (Sk - Sq), -INF)
    return (torch.softmax(s, dim=-1) @ V).numpy()


def gen_attention():
    fam = Family("attention")
    r = rng(1200)
    cases = [  # name, B, H, Hk, Sq, Sk, D, Dv, causal, scale, mask kind
        ("basic", 2, 2, 2, 4, 4, 8, 8, False, 0.0, None),
        ("causal_square", 1, 2, 2, 5, 5, 4, 4, True, 0.0, None),
        ("causal_bottom_right", 2, 1, 1, 3, 7, 4, 4, True, 0.0, None),
        ("decode_step", 1, 4, 4, 1, 6, 8, 8, True, 0.0, None),
        ("gqa", 1, 4, 2, 3, 5, 4, 4, False, 0.0, None),
        ("mqa_causal", 2, 3, 1, 4, 4, 4, 4, True, 0.0, None),
        ("dv_differs", 1, 2, 2, 3, 4, 4, 6, False, 0.0, None),
        ("explicit_scale", 1, 1, 1, 3, 3, 5, 5, False, 0.3, None),
        ("bool_mask_2d", 2, 2, 2, 4, 5, 4, 4, False, 0.0, "bool2d"),
        ("bool_mask_4d", 2, 2, 1, 3, 4, 4, 4, False, 0.0, "bool4d"),
        ("padding_mask", 2, 2, 2, 3, 6, 4, 4, False, 0.0, "boolpad"),
        ("float_mask", 1, 2, 2, 4, 4, 4, 4, False, 0.0, "float"),
        ("float_mask_inf", 2, 1, 1, 3, 4, 4, 4, False, 0.0, "floatinf"),
        ("causal_and_mask", 1, 2, 2, 4, 6, 4, 4, True, 0.0, "bool4d"),
        ("long_seq", 1, 1, 1, 20, 33, 16, 16, True, 0.0, None),
    ]
    for name, B, H, Hk, Sq, Sk, D, Dv, causal, scale, mk in cases:
        q, k, v = uni(r, -2, 2, (B, H, Sq, D)), uni(r, -2, 2, (B, Hk, Sk, D)), uni(r, -2, 2, (B, Hk, Sk, Dv))
        ins = [(q, "f32"), (k, "f32"), (v, "f32")]
        mask = None
        if mk == "bool2d":
            mask = r.random((Sq, Sk)) < 0.6
        elif mk == "bool4d":
            mask = r.random((B, 1, Sq, Sk)) < 0.6
        elif mk == "boolpad":
            mask = np.arange(Sk)[None, None, None, :] < np.array([Sk, Sk - 2])[:, None, None, None]
        elif mk == "float":
            mask = uni(r, -3, 1, (1, H, Sq, Sk))
        elif mk == "floatinf":
            mask = np.where(r.random((Sq, Sk)) < 0.4, -INF, 0.0)
        if mask is not None:
            mask[..., 0] = True if mask.dtype == bool else 0.0  # every query keeps a key
            ins.append((mask, "bool" if mask.dtype == bool else "f32"))
        sc = f32(scale)
        fam.add("Attention_" + name, "Attention", {"causal": causal, "scale": sc}, ins,
                [(attention_ref(q, k, v, mask, causal, sc), "f32")], ACCUM)
    q, k, v = uni(r, -2, 2, (1, 2, 3, 4), "f64"), uni(r, -2, 2, (1, 2, 5, 4), "f64"), uni(r, -2, 2, (1, 2, 5, 4), "f64")
    fam.add("Attention_f64_causal", "Attention", {"causal": True, "scale": 0.0}, [(q, "f64"), (k, "f64"), (v, "f64")],
            [(attention_ref(q, k, v, None, True, 0.0), "f64")], F64TOL)

    # RoPE: pairs (i, i + D/2) or (2i, 2i + 1) rotated by the angle whose cos
    # and sin sit at [s, i]: (a, b) -> (a cos - b sin, a sin + b cos).
    for name, shape, inter, dt in (("half_4d", (2, 3, 5, 8), False, "f32"), ("interleaved_4d", (2, 3, 5, 8), True, "f32"),
                                   ("half_2d", (6, 4), False, "f32"), ("interleaved_3d", (2, 4, 6), True, "f32"),
                                   ("half_f64", (1, 2, 3, 4), False, "f64"), ("interleaved_f64", (3, 6), True, "f64")):
        S, D = shape[-2], shape[-1]
        x = uni(r, -2, 2, shape, dt)
        inv = 10000.0 ** (-np.arange(D // 2) * 2.0 / D)
        ang = np.arange(S)[:, None] * inv[None, :] + 0.1
        cos, sin = rnd(np.cos(ang), dt), rnd(np.sin(ang), dt)
        if inter:
            a, b = x[..., 0::2], x[..., 1::2]
        else:
            a, b = x[..., :D // 2], x[..., D // 2:]
        ra, rb = a * cos - b * sin, a * sin + b * cos
        out = np.empty_like(x)
        if inter:
            out[..., 0::2], out[..., 1::2] = ra, rb
        else:
            out[..., :D // 2], out[..., D // 2:] = ra, rb
        fam.add("RoPE_" + name, "RoPE", {"interleaved": inter}, [(x, dt), (cos, dt), (sin, dt)],
                [(out, dt)], tol_for(dt, ACCUM))
    fam.write()


# ---------------------------------------------------------------- end-to-end models

def write_model(name, config, inputs, params, outputs, tol):
    obj = {
        "generator": GENERATOR, "name": name, "config": config, "tol": tol,
        "inputs": {k: T(v, "f32") for k, v in inputs.items()},
        "params": {k: T(v, "f32") for k, v in params.items()},
        "outputs": [T(o, "f32") for o in outputs],
    }
    os.makedirs(MODEL_DIR, exist_ok=True)
    with open(os.path.join(MODEL_DIR, "model_%s.json" % name), "w") as f:
        json.dump(obj, f, allow_nan=False, indent=1)
        f.write("\n")


def lin(r, fan_in, shape):
    b = 1 / math.sqrt(fan_in)
    return uni(r, -b, b, shape)


def gen_models():
    # (a) MLP: relu(x @ w1 + b1) @ w2 + b2.
    r = rng(2000)
    B, I, Hd, O = 8, 64, 32, 10
    p = {"w1": lin(r, I, (I, Hd)), "b1": lin(r, I, (Hd,)), "w2": lin(r, Hd, (Hd, O)), "b2": lin(r, Hd, (O,))}
    x = uni(r, -1, 1, (B, I))
    h = torch.relu(tt(x) @ tt(p["w1"]) + tt(p["b1"]))
    y = h @ tt(p["w2"]) + tt(p["b2"])
    write_model("mlp", {"batch": B, "in": I, "hidden": Hd, "out": O}, {"x": x}, p, [y.numpy()], 1e-5)

    # (b) CNN block: conv 3x3 pad 1 -> batchnorm (eval) -> relu -> maxpool 2x2.
    r = rng(2001)
    N, C, M, Hh, W = 2, 3, 8, 8, 8
    eps = f32(1e-5)
    p = {"conv_w": lin(r, C * 9, (M, C, 3, 3)), "conv_b": lin(r, C * 9, (M,)),
         "bn_scale": uni(r, 0.5, 1.5, (M,)), "bn_bias": uni(r, -0.5, 0.5, (M,)),
         "bn_mean": uni(r, -0.3, 0.3, (M,)), "bn_var": uni(r, 0.5, 1.5, (M,))}
    x = uni(r, -1, 1, (N, C, Hh, W))
    y = F.conv2d(tt(x), tt(p["conv_w"]), tt(p["conv_b"]), padding=1)
    y = F.batch_norm(y, tt(p["bn_mean"]), tt(p["bn_var"]), tt(p["bn_scale"]), tt(p["bn_bias"]), training=False, eps=eps)
    y = F.max_pool2d(torch.relu(y), 2, 2)
    write_model("cnn", {"batch": N, "in_ch": C, "out_ch": M, "height": Hh, "width": W}, {"x": x}, p, [y.numpy()], 1e-5)

    # (c) Post-LN transformer encoder layer.
    r = rng(2002)
    B, S, Hd, nh, Ff = 2, 16, 32, 4, 64
    p = {}
    for n in ("q", "k", "v", "o"):
        p["w" + n] = lin(r, Hd, (Hd, Hd))
        p["b" + n] = lin(r, Hd, (Hd,))
    p["ln1_scale"], p["ln1_bias"] = uni(r, 0.8, 1.2, (Hd,)), uni(r, -0.1, 0.1, (Hd,))
    p["w_ff1"], p["b_ff1"] = lin(r, Hd, (Hd, Ff)), lin(r, Hd, (Ff,))
    p["w_ff2"], p["b_ff2"] = lin(r, Ff, (Ff, Hd)), lin(r, Ff, (Hd,))
    p["ln2_scale"], p["ln2_bias"] = uni(r, 0.8, 1.2, (Hd,)), uni(r, -0.1, 0.1, (Hd,))
    x = uni(r, -1, 1, (B, S, Hd))
    P = {k: tt(v) for k, v in p.items()}
    X = tt(x)

    def heads(t):
        return t.reshape(B, S, nh, Hd // nh).permute(0, 2, 1, 3)

    q, k, v = (heads(X @ P["w" + n] + P["b" + n]) for n in ("q", "k", "v"))
    a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(Hd // nh), dim=-1) @ v
    a = a.permute(0, 2, 1, 3).reshape(B, S, Hd) @ P["wo"] + P["bo"]
    h = F.layer_norm(X + a, (Hd,), P["ln1_scale"], P["ln1_bias"], eps)
    f = F.gelu(h @ P["w_ff1"] + P["b_ff1"]) @ P["w_ff2"] + P["b_ff2"]
    y = F.layer_norm(h + f, (Hd,), P["ln2_scale"], P["ln2_bias"], eps)
    write_model("encoder", {"batch": B, "seq": S, "hidden": Hd, "heads": nh, "ffn": Ff}, {"x": x}, p, [y.numpy()], 1e-5)


def main():
    gen_unary()
    gen_binary()
    gen_logic()
    gen_cast()
    gen_linalg()
    gen_reduce()
    gen_norm()
    gen_conv()
    gen_movement()
    gen_attention()
    gen_models()


if __name__ == "__main__":
    main()
