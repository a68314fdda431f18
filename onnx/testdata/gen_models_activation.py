#!/usr/bin/python3
"""The ONNX cases of the activations with attributes, the trigonometric and
hyperbolic functions, Sign, IsNaN/IsInf, Mod, BitShift, Xor and the window
generators, with numpy expectations. gen_models.py calls gen_activation last
(run that script; it rewrites every case)."""
import numpy as np
from onnx import TensorProto


def gen_activation(m):
    """Writes the cases through gen_models (m): its case, node, const and as32."""
    case, node, const, as32 = m.case, m.node, m.const, m.as32
    r = np.random.default_rng(20261205)
    x = r.uniform(-3, 3, size=(2, 5)).astype(np.float32)
    x[0, :3] = [0.0, -0.6, 0.6]
    xd = x.astype(np.float64)
    u = r.uniform(-1, 1, size=(2, 5)).astype(np.float32)
    ud = u.astype(np.float64)
    big = r.uniform(1, 5, size=(2, 5)).astype(np.float32)
    bd = big.astype(np.float64)
    unary = {
        "Softplus": (x, np.logaddexp(0, xd)), "Softsign": (x, xd / (1 + np.abs(xd))),
        "Tan": (x, np.tan(xd)), "Sinh": (x, np.sinh(xd)), "Cosh": (x, np.cosh(xd)),
        "Asin": (u, np.arcsin(ud)), "Acos": (u, np.arccos(ud)), "Atan": (x, np.arctan(xd)),
        "Asinh": (x, np.arcsinh(xd)), "Acosh": (big, np.arccosh(bd)), "Atanh": (u, np.arctanh(ud)),
        "Sign": (x, np.sign(xd)),
    }
    for op, (inp, want) in unary.items():
        case("act_" + op.lower(), [node(op, ["x"], ["y"])], {"x": inp}, {"y": as32(want)})
    xi = np.array([-7, 0, 3, -1, 12], dtype=np.int64)
    case("act_sign_int", [node("Sign", ["x"], ["y"])], {"x": xi}, {"y": np.sign(xi)})
    neg = xd < 0
    case("act_elu", [node("Elu", ["x"], ["y"], alpha=0.5)], {"x": x}, {"y": as32(np.where(neg, 0.5 * np.expm1(xd), xd))})
    case("act_selu", [node("Selu", ["x"], ["y"], alpha=2.0, gamma=3.0)], {"x": x},
         {"y": as32(3.0 * np.where(xd > 0, xd, 2.0 * np.expm1(xd)))})
    case("act_celu", [node("Celu", ["x"], ["y"], alpha=1.5)], {"x": x},
         {"y": as32(np.maximum(0, xd) + np.minimum(0, 1.5 * np.expm1(xd / 1.5)))}, opset=13)
    a = np.float64(np.float32(0.4))
    case("act_thresholdedrelu", [node("ThresholdedRelu", ["x"], ["y"], alpha=0.4)], {"x": x},
         {"y": as32(np.where(xd > a, xd, 0))})
    lam, bias = np.float64(np.float32(0.6)), np.float64(np.float32(0.2))
    case("act_shrink", [node("Shrink", ["x"], ["y"], lambd=0.6, bias=0.2)], {"x": x},
         {"y": as32(np.where(xd < -lam, xd + bias, np.where(xd > lam, xd - bias, 0)))})
    s = np.array([1.0, np.nan, np.inf, -np.inf, -0.0, 3e38], dtype=np.float32)
    case("act_isnan", [node("IsNaN", ["x"], ["y"])], {"x": s}, {"y": np.isnan(s)})
    case("act_isinf_positive", [node("IsInf", ["x"], ["y"], detect_negative=0)], {"x": s}, {"y": np.isposinf(s)})
    ma = np.array([7, -7, 7, -7, 0, 9], dtype=np.int32)
    mb = np.array([3, 3, -3, -3, 5, 9], dtype=np.int32)
    case("act_mod_int", [node("Mod", ["a", "b"], ["y"])], {"a": ma, "b": mb}, {"y": np.mod(ma, mb)})
    fa = np.array([5.5, -5.5, 5.5, -5.5, 1e10], dtype=np.float32)
    fb = np.array([2.0, 2.0, -2.0, -2.0, 3.0], dtype=np.float32)
    case("act_mod_fmod", [node("Mod", ["a", "b"], ["y"], fmod=1)], {"a": fa, "b": fb}, {"y": np.fmod(fa, fb)})
    sa = np.array([1, 255, 16, 3], dtype=np.uint8)
    sb = np.array([1, 1, 3, 9], dtype=np.uint8)
    case("act_bitshift_left", [node("BitShift", ["a", "b"], ["y"], direction="LEFT")], {"a": sa, "b": sb},
         {"y": np.left_shift(sa, sb)})
    p1 = np.array([[True, False, True], [False, False, True]])
    p2 = np.array([True, True, False])
    case("act_xor", [node("Xor", ["a", "b"], ["y"])], {"a": p1, "b": p2}, {"y": np.logical_xor(p1, p2)})
    # Windows of a constant size; numpy's hanning/blackman are symmetric,
    # the periodic window is the first N of N+1.
    n = 10
    k = np.arange(n, dtype=np.float64)
    hamming = 25 / 46 - (1 - 25 / 46) * np.cos(2 * np.pi * k / (n - 1))  # ONNX's α = 25/46, not numpy's 0.54
    case("window_hann", [const("n", np.int64(n)), node("HannWindow", ["n"], ["y"])], {}, {"y": as32(np.hanning(n + 1)[:-1])},
         opset=17)
    case("window_hamming_symmetric", [const("n", np.int32(n)),
                                      node("HammingWindow", ["n"], ["y"], periodic=0, output_datatype=TensorProto.DOUBLE)],
         {}, {"y": hamming}, opset=17)
    case("window_blackman", [const("n", np.int64(n)), node("BlackmanWindow", ["n"], ["y"])], {},
         {"y": as32(np.blackman(n + 1)[:-1])}, opset=17)
