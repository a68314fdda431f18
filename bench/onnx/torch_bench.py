#!/usr/bin/python3
"""PyTorch side of compare.sh: times one benchmark model in eager mode.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 torch_bench.py NAME SETDIR THREADS RUNS WARMUP

NAME is bert, mlp or cnn: the module is rebuilt from the same seeds as the
exported ONNX file (onnx/testdata/export_models.py), so the weights are
identical, and runs under torch.inference_mode() on SETDIR's in_*.npy
inputs with torch.set_num_threads(THREADS). Prints one JSON object.

Debian's torch does its matrix products in OpenBLAS (BLAS_INFO=generic),
whose own thread pool torch.set_num_threads does not size: left alone it
uses every core, so a "1 thread" PyTorch run measured 2.0 CPU seconds per
wall second. OPENBLAS_NUM_THREADS is therefore set to THREADS before
numpy or torch loads OpenBLAS.
"""
import json
import os
import sys
import time

if __name__ == "__main__" and len(sys.argv) > 3:
    os.environ["OPENBLAS_NUM_THREADS"] = sys.argv[3]

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "onnx", "testdata"))
import export_models  # noqa: E402


def main():
    name, set_dir, threads, runs, warmup = sys.argv[1:6]
    torch.set_num_threads(int(threads))
    torch.set_num_interop_threads(1)
    model, _, in_names, _ = export_models.bench_models(only=name)[name]
    inputs = [torch.from_numpy(np.load(os.path.join(set_dir, f"in_{n}.npy"))) for n in in_names]
    times = []
    with torch.inference_mode():
        for _ in range(int(warmup)):
            model(*inputs)
        for _ in range(int(runs)):
            t = time.perf_counter()
            model(*inputs)
            times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    n = len(times)
    median = times[n // 2] if n % 2 else (times[n // 2 - 1] + times[n // 2]) / 2
    print(json.dumps({"median_ms": median, "p90_ms": times[-(-9 * n // 10) - 1], "min_ms": times[0],
                      "runs": n, "version": torch.__version__}))


if __name__ == "__main__":
    main()
