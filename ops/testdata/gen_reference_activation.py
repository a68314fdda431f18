#!/usr/bin/python3
"""Reference outputs for the activations with attributes, the trigonometric and
hyperbolic functions, Sign, Mod/Fmod, the U8 shifts and Xor, computed with numpy
and torch: ref_activation.json, in gen_reference.py's format (see its docstring;
this script reuses its encoding and domains).

Run from this directory:  /usr/bin/python3 gen_reference_activation.py

attrs: Elu, Celu, ThresholdedRelu {alpha}; Selu {alpha, gamma};
       Shrink {lambd, bias}; every other op here {}.
"""

import numpy as np
import torch.nn.functional as F

from gen_reference import (EXACT, ELEM, F64TOL, INF, NAN, TRANS, Family, domain, f32, rnd, rng,
                           tt, uni)

SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 100.0, -100.0]


def unit(r):
    """[-1, 1] with its ends, and a few values past them (NaN)."""
    base = [-1.5, -1.0, -0.999, -0.5, -1e-6, 0.0, 1e-6, 0.3, 0.999, 1.0, 1.5]
    return np.concatenate([np.asarray(base), r.uniform(-1, 1, size=40 - len(base))])


def from_one(r):
    """[1, ∞) with 1 itself, and values below it (NaN)."""
    base = [0.0, 0.5, 1.0, 1.0 + 1e-6, 1.5, 10.0, 1e4, 1e20]
    return np.concatenate([np.asarray(base), r.uniform(1, 20, size=40 - len(base))])


def th(f):
    """A torch function applied to a float64 array."""
    return lambda a: f(tt(a)).numpy()


UNARY = {
    # op: (function on float64, domain, tolerance)
    "Tan": (np.tan, "trig", TRANS),
    "Sinh": (np.sinh, "act", TRANS),
    "Cosh": (np.cosh, "act", TRANS),
    "Asin": (np.arcsin, unit, TRANS),
    "Acos": (np.arccos, unit, TRANS),
    "Atan": (np.arctan, "wide", TRANS),
    "Asinh": (np.arcsinh, "wide", TRANS),
    "Acosh": (np.arccosh, from_one, TRANS),
    "Atanh": (np.arctanh, unit, TRANS),
    "Softplus": (lambda a: np.logaddexp(0, a), "exp", TRANS),
    "Softsign": (th(F.softsign), "wide", ELEM),
    "Sign": (np.sign, "wide", EXACT),
}

# op: (attrs, function on float64) for the ops with attributes.
ATTR = [
    ("Elu", {"alpha": f32(1.0)}, th(lambda t: F.elu(t, 1.0))),
    ("Elu", {"alpha": f32(0.3)}, th(lambda t: F.elu(t, f32(0.3)))),
    ("Selu", {"alpha": f32(1.6732632423543772), "gamma": f32(1.0507009873554805)},
     lambda a: f32(1.0507009873554805) * np.where(a > 0, a, f32(1.6732632423543772) * np.expm1(a))),
    ("Selu", {"alpha": f32(2.0), "gamma": f32(3.0)}, lambda a: 3.0 * np.where(a > 0, a, 2.0 * np.expm1(a))),
    ("Celu", {"alpha": f32(1.0)}, th(lambda t: F.celu(t, 1.0))),
    ("Celu", {"alpha": f32(2.5)}, th(lambda t: F.celu(t, 2.5))),
    ("ThresholdedRelu", {"alpha": f32(1.0)}, th(lambda t: F.threshold(t, 1.0, 0.0))),
    ("ThresholdedRelu", {"alpha": f32(-0.5)}, th(lambda t: F.threshold(t, -0.5, 0.0))),
    # torch's hardshrink is Shrink with bias 0, softshrink with bias = lambd.
    ("Shrink", {"lambd": f32(0.5), "bias": 0.0}, th(lambda t: F.hardshrink(t, 0.5))),
    ("Shrink", {"lambd": f32(1.5), "bias": f32(1.5)}, th(lambda t: F.softshrink(t, 1.5))),
]


def gen():
    fam = Family("activation")
    seed = 900
    with np.errstate(all="ignore"):
        for op, (fn, dom, tol) in UNARY.items():
            seed += 1
            r = rng(seed)
            raw = dom(r) if callable(dom) else domain(dom, r)
            x = rnd(raw, "f32")
            fam.add(op + "_f32", op, {}, [(x.reshape(4, -1), "f32")], [(fn(x).reshape(4, -1), "f32")], tol)
            fam.add(op + "_f64", op, {}, [(raw, "f64")], [(fn(raw), "f64")], F64TOL)
            s = np.asarray(SPECIAL)
            fam.add(op + "_f32_special", op, {}, [(s, "f32")], [(fn(s), "f32")], tol)
        for i, (op, attrs, fn) in enumerate(ATTR):
            r = rng(950 + i)
            x = uni(r, -6, 6, (4, 9))
            x.flat[:len(SPECIAL)] = SPECIAL
            x.flat[len(SPECIAL):len(SPECIAL) + 4] = [attrs.get("alpha", 0.5), -attrs.get("alpha", 0.5),
                                                    attrs.get("lambd", 1.0), -attrs.get("lambd", 1.0)]
            x = rnd(x, "f32")
            want = fn(x)
            if op in ("Shrink", "ThresholdedRelu"):
                # ONNX's formulas give 0 for NaN (every comparison fails);
                # torch's hardshrink and threshold pass NaN through.
                want = np.where(np.isnan(x), 0.0, want)
            fam.add("%s_f32_%d" % (op, i), op, attrs, [(x, "f32")], [(want, "f32")], TRANS)
            fam.add("%s_f64_%d" % (op, i), op, attrs, [(x, "f64")], [(want, "f64")], F64TOL)
    # Sign of integers.
    r = rng(970)
    for dt, lo, hi in (("i8", -128, 128), ("u8", 0, 256), ("i32", -1000, 1000), ("i64", -10**12, 10**12)):
        x = r.integers(lo, hi, size=(3, 5))
        x.flat[:2] = [0, hi - 1]
        fam.add("Sign_" + dt, "Sign", {}, [(x, dt)], [(np.sign(x), dt)], EXACT)
    # Mod (numpy.mod: the divisor's sign) and Fmod (numpy.fmod: the
    # dividend's), integers and floats, broadcast.
    r = rng(971)
    for dt, lo, hi in (("i8", -128, 128), ("u8", 0, 256), ("i32", -10**6, 10**6), ("i64", -10**15, 10**15),
                       ("f32", -50, 50), ("f64", -50, 50)):
        if dt.startswith("f"):
            x = rnd(r.uniform(lo, hi, size=(3, 6)), dt)
            y = rnd(r.uniform(0.5, 7, size=(6,)) * np.where(r.random(6) < 0.5, -1, 1), dt)
            x.flat[:4] = [6.0, -6.0, 6.0, -6.0]  # exact multiples: a signed zero
            y.flat[:4] = [3.0, 3.0, -3.0, -3.0]
        else:
            x = r.integers(lo, hi, size=(3, 6))
            y = r.integers(1, 12, size=(6,)) * (np.where(r.random(6) < 0.5, -1, 1) if dt != "u8" else 1)
            x.flat[:3] = [7, -7 if dt != "u8" else 0, hi - 1]
        for op, fn in (("Mod", np.mod), ("Fmod", np.fmod)):
            fam.add("%s_%s" % (op, dt), op, {}, [(x, dt), (y, dt)], [(fn(x, y), dt)], EXACT)
    with np.errstate(all="ignore"):
        x = rnd([NAN, 1.0, INF, -INF, 5.0, -5.0, 0.0, -0.0, 1e30, 3.0], "f32")
        y = rnd([2.0, NAN, 2.0, 2.0, INF, INF, 3.0, -3.0, 7.0, 0.0], "f32")
        for op, fn in (("Mod", np.mod), ("Fmod", np.fmod)):
            fam.add(op + "_f32_special", op, {}, [(x, "f32"), (y, "f32")], [(fn(x, y), "f32")], EXACT)
    # The U8 shifts; counts of 8 and more give 0.
    x = r.integers(0, 256, size=(2, 6)).astype(np.uint8)
    s = np.array([0, 1, 3, 7, 8, 200], dtype=np.uint8)
    fam.add("ShiftLeft_u8", "ShiftLeft", {}, [(x, "u8"), (s, "u8")], [(np.left_shift(x, s), "u8")], EXACT)
    fam.add("ShiftRight_u8", "ShiftRight", {}, [(x, "u8"), (s, "u8")], [(np.right_shift(x, s), "u8")], EXACT)
    # Xor, broadcast.
    a, b = r.random((3, 4)) < 0.5, r.random((4,)) < 0.5
    fam.add("Xor_bool", "Xor", {}, [(a, "bool"), (b, "bool")], [(np.logical_xor(a, b), "bool")], EXACT)
    fam.write()


if __name__ == "__main__":
    gen()
