#!/usr/bin/python3
"""Reference outputs for GridSample (torch's grid_sample), RoiAlign and
NonMaxSuppression (torchvision.ops.roi_align and nms, whose definitions
ONNX's ops follow) and Det (numpy.linalg.det), all in float64:
ref_detect.json, in gen_reference.py's format (see its docstring).

Run from this directory:  /usr/bin/python3 gen_reference_detect.py
(Debian's python3-torch 1.13 and python3-torchvision 0.14).

attrs: GridSample {mode: 0 bilinear, 1 nearest, 2 bicubic; padding: 0
       zeros, 1 border, 2 reflection; align_corners};
       RoiAlign {out_h, out_w, sampling_ratio (0: adaptive),
       spatial_scale, half_pixel}; NonMaxSuppression {max_per_class, iou,
       min_score (absent: none), center_point}; Det {}.

NonMaxSuppression's expected output is kiln's padded form: the selected
[batch, class, box] rows, then rows of -1 up to B·C·min(max, N) rows.
Scores are distinct (torchvision's sort breaks ties its own way).
"""

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

import gen_reference
from gen_reference import ACCUM, EXACT, F64TOL, Family, f32, rng, tt, uni

gen_reference.GENERATOR = "ops/testdata/gen_reference_detect.py; do not edit by hand"
torch.set_num_threads(1)


def grid_sample(x, grid, mode, padding, align):
    modes, pads = ["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"]
    return F.grid_sample(tt(x), tt(grid), mode=modes[mode], padding_mode=pads[padding],
                         align_corners=align).numpy()


def gen_grid(fam, r):
    for mode in range(3):
        for padding in range(3):
            for align in (False, True):
                x = uni(r, -2, 2, (2, 3, 5, 6))
                grid = uni(r, -1.3, 1.3, (2, 4, 7, 2))
                name = "GridSample_m%d_p%d_a%d" % (mode, padding, align)
                fam.add(name, "GridSample", {"mode": mode, "padding": padding, "align_corners": align},
                        [(x, "f32"), (grid, "f32")], [(grid_sample(x, grid, mode, padding, align), "f32")], ACCUM)
    x, grid = uni(r, -2, 2, (1, 2, 4, 3), "f64"), uni(r, -3, 3, (1, 3, 5, 2), "f64")
    fam.add("GridSample_f64_bicubic_reflection", "GridSample", {"mode": 2, "padding": 2, "align_corners": False},
            [(x, "f64"), (grid, "f64")], [(grid_sample(x, grid, 2, 2, False), "f64")], F64TOL)


def gen_roi(fam, r):
    for name, (oh, ow, sr, scale, half) in {
        "half_pixel": (3, 4, 2, 1.0, True),
        "output_half_pixel_adaptive": (2, 3, 0, 0.5, False),
        "half_pixel_adaptive_scaled": (4, 2, 0, 0.25, True),
    }.items():
        x = uni(r, -2, 2, (2, 3, 9, 8))
        x0, y0 = uni(r, -2, 10, (5, 1)), uni(r, -2, 12, (5, 1))
        rois = np.concatenate([x0, y0, x0 + uni(r, 0.5, 12, (5, 1)), y0 + uni(r, 0.5, 14, (5, 1))], axis=1)
        rois = rois / scale if scale != 1.0 else rois
        rois = rois.astype(np.float32).astype(np.float64)
        bi = np.array([0, 1, 1, 0, 1])
        boxes = torch.cat([tt(bi[:, None]), tt(rois)], dim=1)
        want = torchvision.ops.roi_align(tt(x), boxes, (oh, ow), spatial_scale=f32(scale),
                                         sampling_ratio=sr if sr > 0 else -1, aligned=half).numpy()
        fam.add("RoiAlign_" + name, "RoiAlign",
                {"out_h": oh, "out_w": ow, "sampling_ratio": sr, "spatial_scale": f32(scale), "half_pixel": half},
                [(x, "f32"), (rois, "f32"), (bi, "i64")], [(want, "f32")], ACCUM)


def nms_padded(boxes, scores, max_per_class, iou, min_score, center):
    B, C, N = scores.shape
    rows = []
    for b in range(B):
        bx = boxes[b]
        if center:
            xc, yc, w, h = bx[:, 0], bx[:, 1], bx[:, 2], bx[:, 3]
            xyxy = np.stack([xc - w / 2, yc - h / 2, xc + w / 2, yc + h / 2], axis=1)
        else:  # [y1, x1, y2, x2]
            xyxy = np.stack([np.minimum(bx[:, 1], bx[:, 3]), np.minimum(bx[:, 0], bx[:, 2]),
                             np.maximum(bx[:, 1], bx[:, 3]), np.maximum(bx[:, 0], bx[:, 2])], axis=1)
        for c in range(C):
            sc = scores[b, c]
            idx = np.arange(N) if min_score is None else np.nonzero(sc > min_score)[0]
            keep = torchvision.ops.nms(tt(xyxy[idx]), tt(sc[idx]), iou).numpy()[:max_per_class]
            rows += [[b, c, int(idx[k])] for k in keep]
    bound = B * C * min(max_per_class, N)
    return np.array(rows + [[-1, -1, -1]] * (bound - len(rows)), dtype=np.int64).reshape(bound, 3)


def gen_nms(fam, r):
    for name, (B, C, N, mx, iou, ms, center) in {
        "corners": (2, 3, 10, 4, 0.3, None, False),
        "corners_min_score": (1, 2, 12, 20, 0.5, 0.4, False),
        "center_point": (2, 1, 9, 3, 0.2, 0.1, True),
    }.items():
        if center:
            boxes = np.concatenate([uni(r, 0, 5, (B, N, 2)), uni(r, 0.5, 3, (B, N, 2))], axis=2)
        else:
            boxes = uni(r, 0, 6, (B, N, 4))  # either corner first
        scores = rng(int(N * 7 + B)).permutation(B * C * N).reshape(B, C, N) / (B * C * N) + 0.01
        scores = scores.astype(np.float32).astype(np.float64)
        attrs = {"max_per_class": mx, "iou": f32(iou), "center_point": center}
        if ms is not None:
            attrs["min_score"] = f32(ms)
        want = nms_padded(boxes, scores, mx, f32(iou), None if ms is None else f32(ms), center)
        fam.add("NonMaxSuppression_" + name, "NonMaxSuppression", attrs,
                [(boxes, "f32"), (scores, "f32")], [(want, "i64")], EXACT)


def gen_det(fam, r):
    x = uni(r, -2, 2, (2, 3, 4, 4))
    fam.add("Det_batched_4x4", "Det", {}, [(x, "f32")], [(np.linalg.det(x), "f32")], ACCUM)
    x = uni(r, -2, 2, (5, 5), "f64")
    fam.add("Det_f64_5x5", "Det", {}, [(x, "f64")], [(np.linalg.det(x), "f64")], F64TOL)
    x = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]])  # rank 2
    fam.add("Det_singular", "Det", {}, [(x, "f32")], [(np.array(0.0), "f32")], (0.0, 1e-6))


def main():
    fam = Family("detect")
    r = rng(2323)
    gen_grid(fam, r)
    gen_roi(fam, r)
    gen_nms(fam, r)
    gen_det(fam, r)
    fam.write()


if __name__ == "__main__":
    main()
