"""Times OpenBLAS SGEMM through Debian's numpy (np.matmul on float32) on the
shapes bench/gemm/compare.sh passes, printing one line per measurement
window:  openblas <shape> <threads> <GFLOP/s> <GFLOP/cpu-s> (the second per
second of process CPU time, unmoved by time slices lost to other processes).  The thread count comes from
OPENBLAS_NUM_THREADS, which the script sets."""
import os
import sys
import time

import numpy as np


def measure(run, flops, budget, windows):
    t0 = time.perf_counter()
    run()
    one = time.perf_counter() - t0
    inner = max(1, int(0.020 / max(one, 1e-6)))
    out = []
    start = time.perf_counter()
    while len(out) < windows and (not out or time.perf_counter() - start < budget):
        t, c = time.perf_counter(), time.process_time()
        for _ in range(inner):
            run()
        dc = time.process_time() - c
        out.append((flops * inner / (time.perf_counter() - t) / 1e9, flops * inner / dc / 1e9 if dc > 0 else 0.0))
    return out


def main():
    shapes, budget, windows = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "?")
    rng = np.random.default_rng(1)
    for s in shapes.split(","):
        name, dims = s.split(":")
        m, k, n = (int(x) for x in dims.split("x"))
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        c = np.empty((m, n), np.float32)
        for g, cg in measure(lambda: np.matmul(a, b, out=c), 2.0 * m * n * k, budget, windows):
            print(f"openblas {name} {threads} {g:.3f} {cg:.3f}", flush=True)


if __name__ == "__main__":
    main()
