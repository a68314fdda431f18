#!/usr/bin/python3
"""Writes the RNN, GRU, LSTM and loss cases of testdata/cases (the layout
and helpers of gen_models.py), with expected outputs from the float64
numpy references below, written from the ONNX operator specs:

    /usr/bin/python3 gen_rnn_cases.py

They cover what ONNX's node suite leaves out: reverse and bidirectional
layers, sequence_lens (a run-time input, so kiln masks the steps), clip,
input_forget, peepholes, the alternative activations with their alpha
and beta, linear_before_reset both ways, layout 1 with initial states,
and the loss ops' reductions, weights, ignore_index and int32 targets.

The recurrent reference runs each batch row on its own for exactly its
sequence length (a reverse direction starting at its last valid step),
which is not how kiln's unrolled graph does it (every step, masked).
"""
import numpy as np
from onnx import TensorProto, helper

import gen_models as gm
from gen_models import as32, case, node

rng = np.random.default_rng(20261205)


def f32(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


DEFAULTS = {"affine": (1.0, 0.0), "leakyrelu": (0.01, 0.0), "thresholdedrelu": (1.0, 0.0),
            "scaledtanh": (1.0, 1.0), "hardsigmoid": (0.2, 0.5), "elu": (1.0, 0.0)}
TAKES = {"affine": (1, 1), "leakyrelu": (1, 0), "thresholdedrelu": (1, 0), "scaledtanh": (1, 1),
         "hardsigmoid": (1, 1), "elu": (1, 0)}


def activation(name, alpha, beta):
    n = name.lower()
    return {
        "relu": lambda x: np.maximum(x, 0),
        "tanh": np.tanh,
        "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "affine": lambda x: alpha * x + beta,
        "leakyrelu": lambda x: np.where(x >= 0, x, alpha * x),
        "thresholdedrelu": lambda x: np.where(x > alpha, x, 0),
        "scaledtanh": lambda x: alpha * np.tanh(beta * x),
        "hardsigmoid": lambda x: np.clip(alpha * x + beta, 0, 1),
        "elu": lambda x: np.where(x >= 0, x, alpha * (np.exp(x) - 1)),
        "softsign": lambda x: x / (1 + np.abs(x)),
        "softplus": lambda x: np.log1p(np.exp(x)),
    }[n]


def functions(names, alphas, betas):
    """The activations with alphas and betas consumed in order by the
    functions that take them."""
    alphas, betas, out = list(alphas or []), list(betas or []), []
    for s in names:
        n = s.lower()
        a, b = DEFAULTS.get(n, (0.0, 0.0))
        ta, tb = TAKES.get(n, (0, 0))
        if ta and alphas:
            a = alphas.pop(0)
        if tb and betas:
            b = betas.pop(0)
        out.append(activation(s, np.float64(np.float32(a)), np.float64(np.float32(b))))
    return out


def reference(cell, ins, hidden, direction="forward", activations=None, alphas=None, betas=None,
              clip=None, input_forget=0, lbr=0, layout=0):
    """Y, Y_h (and Y_c) of an ONNX RNN/GRU/LSTM, in float64."""
    X, W, R = (ins[k].astype(np.float64) for k in ("X", "W", "R"))
    get = lambda k: None if ins.get(k) is None else ins[k].astype(np.float64)
    B, h0, c0, P, seq = get("B"), get("initial_h"), get("initial_c"), get("P"), ins.get("sequence_lens")
    if layout:
        X = X.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    S, N, _ = X.shape
    D, H = W.shape[0], hidden
    G = {"RNN": 1, "GRU": 3, "LSTM": 4}[cell]
    n = {"RNN": 1, "GRU": 2, "LSTM": 3}[cell]
    names = activations or {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}[cell]
    if len(names) == n and D == 2:
        names = names * 2
    fns = functions(names, alphas, betas)
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    Y, Yh, Yc = np.zeros((S, D, N, H)), np.zeros((D, N, H)), np.zeros((D, N, H))
    for d in range(D):
        f, g, h = (fns[d * n:(d + 1) * n] + [None, None])[:3]
        Wb, Rb = (B[d][:G * H], B[d][G * H:]) if B is not None else (np.zeros(G * H), np.zeros(G * H))
        rev = direction == "reverse" or d == 1
        for b in range(N):
            L = S if seq is None else int(seq[b])
            hs = np.zeros(H) if h0 is None else h0[d, b].copy()
            cs = np.zeros(H) if c0 is None else c0[d, b].copy()
            for t in (range(L - 1, -1, -1) if rev else range(L)):
                x = X[t, b]
                if cell == "RNN":
                    hs = f(cl(W[d] @ x + R[d] @ hs + Wb + Rb))
                elif cell == "GRU":
                    xw = W[d] @ x
                    z = f(cl(xw[:H] + R[d][:H] @ hs + Wb[:H] + Rb[:H]))
                    r = f(cl(xw[H:2 * H] + R[d][H:2 * H] @ hs + Wb[H:2 * H] + Rb[H:2 * H]))
                    if lbr:
                        hh = g(cl(xw[2 * H:] + r * (R[d][2 * H:] @ hs + Rb[2 * H:]) + Wb[2 * H:]))
                    else:
                        hh = g(cl(xw[2 * H:] + R[d][2 * H:] @ (r * hs) + Rb[2 * H:] + Wb[2 * H:]))
                    hs = (1 - z) * hh + z * hs
                else:
                    a = W[d] @ x + R[d] @ hs + Wb + Rb
                    pi, po, pf = (P[d][:H], P[d][H:2 * H], P[d][2 * H:]) if P is not None else (0, 0, 0)
                    i = f(cl(a[:H] + pi * cs))
                    fg = 1 - i if input_forget else f(cl(a[2 * H:3 * H] + pf * cs))
                    cs = fg * cs + i * g(cl(a[3 * H:]))
                    o = f(cl(a[H:2 * H] + po * cs))
                    hs = o * h(cs)
                Y[t, d, b] = hs
            Yh[d, b], Yc[d, b] = hs, cs
    if layout:
        Y, Yh, Yc = Y.transpose(2, 0, 1, 3), Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    outs = {"Y": as32(Y), "Y_h": as32(Yh)}
    if cell == "LSTM":
        outs["Y_c"] = as32(Yc)
    return outs


def rnn_case(name, cell, S, N, I, H, direction="forward", seq=None, bias=True, h0=False, c0=False, peep=False,
             layout=0, omit_hidden=False, **attrs):
    D = 2 if direction == "bidirectional" else 1
    G = {"RNN": 1, "GRU": 3, "LSTM": 4}[cell]
    ins = {"X": f32(N, S, I) if layout else f32(S, N, I), "W": f32(D, G * H, I), "R": f32(D, G * H, H)}
    if bias:
        ins["B"] = f32(D, 2 * G * H)
    if seq is not None:
        ins["sequence_lens"] = np.array(seq, dtype=np.int32)
    state = (N, D, H) if layout else (D, N, H)
    if h0:
        ins["initial_h"] = f32(*state)
    if c0:
        ins["initial_c"] = f32(*state)
    if peep:
        ins["P"] = f32(D, 3 * H)
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
    names = [k if k in ins else "" for k in order]
    while names[-1] == "":
        names.pop()
    ref_attrs = {k: attrs[k] for k in ("activations", "clip", "input_forget") if k in attrs}
    outs = reference(cell, ins, H, direction, alphas=attrs.get("activation_alpha"),
                     betas=attrs.get("activation_beta"), lbr=attrs.get("linear_before_reset", 0),
                     layout=layout, **ref_attrs)
    if not omit_hidden:  # else the importer takes it from R's shape
        attrs["hidden_size"] = H
    nd = helper.make_node(cell, names, list(outs), name=cell.lower() + "_node",
                          direction=direction, layout=layout, **attrs)
    case(name, [nd], {k: v for k, v in ins.items()}, outs, opset=14)


def log_softmax(x):
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def nll(x, t, w=None, reduction="mean", ii=None):
    """NegativeLogLikelihoodLoss in float64, one element at a time."""
    C = x.shape[1]
    xm = np.moveaxis(x, 1, -1).reshape(-1, C)
    loss, ws = np.zeros(t.size), np.zeros(t.size)
    for k, c in enumerate(t.reshape(-1)):
        if ii is not None and c == ii:
            continue
        ws[k] = 1.0 if w is None else w[c]
        loss[k] = -xm[k, c] * ws[k]
    if reduction == "none":
        return loss.reshape(t.shape)
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / ws.sum()


def loss_cases():
    x, t = f32(3, 4, 2, 2, lo=-3, hi=0), rng.integers(0, 4, size=(3, 2, 2))
    t[0, 0, 0], t[2, 1, 0] = 2, 2  # ignored below
    w = f32(4, lo=0.2, hi=2)
    xd = x.astype(np.float64)
    case("nll_none_weight_ii", [node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["y"], reduction="none", ignore_index=2)],
         {"x": x, "t": t, "w": w}, {"y": as32(nll(xd, t, w, "none", 2))})
    t32 = rng.integers(0, 4, size=(3, 2, 2)).astype(np.int32)
    case("nll_mean_i32", [node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"])],
         {"x": x, "t": t32}, {"y": as32(nll(xd, t32))})
    s, lab = f32(5, 6, lo=-4, hi=4), rng.integers(0, 6, size=5)
    lab[1] = -1
    w6 = f32(6, lo=0.2, hi=2)
    lp = log_softmax(s.astype(np.float64))
    case("sce_mean_weight_ii_log_prob",
         [node("SoftmaxCrossEntropyLoss", ["s", "l", "w"], ["y", "lp"], ignore_index=-1)],
         {"s": s, "l": lab, "w": w6}, {"y": as32(nll(lp, lab, w6, "mean", -1)), "lp": as32(lp)})
    case("sce_sum", [node("SoftmaxCrossEntropyLoss", ["s", "l"], ["y"], reduction="sum")],
         {"s": s, "l": np.abs(lab)}, {"y": as32(nll(lp, np.abs(lab), None, "sum"))})


def main():
    rnn_case("lstm_bidir_seqlens_peep_clip", "LSTM", 4, 3, 2, 3, "bidirectional", seq=[4, 1, 3], h0=True, c0=True,
             peep=True, clip=0.8)
    rnn_case("lstm_reverse_inputforget_acts_layout1", "LSTM", 3, 2, 3, 2, "reverse", h0=True, layout=1,
             input_forget=1, activations=["HardSigmoid", "LeakyRelu", "Softplus"], activation_alpha=[0.3, 0.05],
             activation_beta=[0.6])
    rnn_case("gru_bidir_seqlens_acts", "GRU", 3, 3, 2, 4, "bidirectional", seq=[2, 3, 0], h0=True,
             activations=["Sigmoid", "ScaledTanh", "HardSigmoid", "Softsign"], activation_alpha=[1.5, 0.25],
             activation_beta=[0.7])
    rnn_case("gru_reverse_lbr_clip_layout1", "GRU", 4, 2, 3, 3, "reverse", h0=True, layout=1,
             linear_before_reset=1, clip=0.5)
    rnn_case("gru_lbr_nobias", "GRU", 3, 2, 2, 3, bias=False, linear_before_reset=1)
    rnn_case("rnn_bidir_seqlens_acts", "RNN", 3, 3, 2, 3, "bidirectional", seq=[1, 3, 2], h0=True,
             activations=["Relu", "ThresholdedRelu"], activation_alpha=[0.2])
    rnn_case("rnn_reverse_elu", "RNN", 3, 2, 2, 3, "reverse", activations=["Elu"], activation_alpha=[0.5])
    rnn_case("rnn_affine_clip", "RNN", 2, 2, 3, 2, activations=["Affine"], activation_alpha=[0.8],
             activation_beta=[-0.1], clip=1.0, omit_hidden=True)
    loss_cases()


if __name__ == "__main__":
    gm.rng = rng
    main()
