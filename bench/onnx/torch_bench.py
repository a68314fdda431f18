#!/usr/bin/python3
"""PyTorch side of compare.sh: times one benchmark model in eager mode.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 torch_bench.py NAME SETDIR THREADS RUNS WARMUP [SETTING]

NAME is one of export_models.py's benchmark models (bert, mlp, cnn,
resnet18, mobilenet_v2, efficientnet_b0, vit_b_16): the module is rebuilt
from the same seeds as the exported ONNX file
(onnx/testdata/export_models.py), so the weights are identical, and runs
under torch.inference_mode() on SETDIR's in_*.npy inputs with
torch.set_num_threads(THREADS) and one inter-op thread. Prints one JSON
object: the latencies in ms, the SETTING, "cpu_per_wall", the process's
CPU seconds (all its threads) per wall second over the timed runs, and
"parallelism", its threads' summed CPU time over the timed runs divided
by the busiest thread's (from /proc/self/task/*/schedstat): how many
cores' worth of work the run spread over, which, unlike cpu_per_wall,
other jobs' load does not shrink. A "1 thread" run whose OpenBLAS uses a
second core shows a parallelism near 2.

Debian's torch runs its parallel loops on OpenMP (libgomp) and does its
matrix products in OpenBLAS (BLAS_INFO=generic), whose own thread pool
torch.set_num_threads does not size: left alone OpenBLAS uses every core,
so a "1 thread" PyTorch run measured 2.0 CPU seconds per wall second.
SETTING picks the environment the two libraries start with (both read it
when they load, so it is set before numpy or torch is imported), as a
comma-separated list of VAR=VALUE, or "default" for neither set:

    default                                     OpenBLAS: all cores; OpenMP: spins after a wait
    OMP_WAIT_POLICY=PASSIVE                     OpenMP workers sleep instead of spinning
    OPENBLAS_NUM_THREADS=N                      OpenBLAS limited to N threads
    OPENBLAS_NUM_THREADS=N,OMP_WAIT_POLICY=PASSIVE

Only OPENBLAS_NUM_THREADS, OMP_WAIT_POLICY and OMP_NUM_THREADS may be
set; the caller's values of those are cleared first. Without SETTING:
OPENBLAS_NUM_THREADS=THREADS. compare.sh times each case's settings once
and uses the fastest that stays within THREADS cores.
"""
import json
import os
import sys
import time

KNOBS = ("OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY", "OMP_NUM_THREADS")


def apply_setting(setting):
    """Sets the environment SETTING names; returns it in canonical form."""
    for k in KNOBS:
        os.environ.pop(k, None)
    if setting == "default":
        return setting
    for kv in setting.split(","):
        k, sep, v = kv.partition("=")
        if not sep or k not in KNOBS:
            sys.exit(f"torch_bench.py: setting {kv!r}: want VAR=VALUE with VAR one of {', '.join(KNOBS)}")
        os.environ[k] = v
    return setting


if __name__ == "__main__" and len(sys.argv) > 3:
    SETTING = apply_setting(sys.argv[6] if len(sys.argv) > 6 else f"OPENBLAS_NUM_THREADS={sys.argv[3]}")

import numpy as np  # noqa: E402 (after the environment is set)
import torch  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "onnx", "testdata"))
import export_models  # noqa: E402


def thread_cpu_ns():
    """Each thread's CPU time in ns so far, by thread id ({} where
    /proc/self/task/*/schedstat is missing)."""
    out = {}
    try:
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/schedstat") as f:
                    out[tid] = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        pass
    return out


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
        wall0, cpu0, threads0 = time.perf_counter(), time.process_time(), thread_cpu_ns()
        for _ in range(int(runs)):
            t = time.perf_counter()
            model(*inputs)
            times.append((time.perf_counter() - t) * 1e3)
        cpu_per_wall = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
        used = [ns - threads0.get(tid, 0) for tid, ns in thread_cpu_ns().items()]
        parallelism = sum(used) / max(used) if used and max(used) > 0 else None
    times.sort()
    n = len(times)
    median = times[n // 2] if n % 2 else (times[n // 2 - 1] + times[n // 2]) / 2
    print(json.dumps({"median_ms": median, "p90_ms": times[-(-9 * n // 10) - 1], "min_ms": times[0],
                      "runs": n, "version": torch.__version__, "setting": SETTING,
                      "cpu_per_wall": round(cpu_per_wall, 3),
                      "parallelism": None if parallelism is None else round(parallelism, 3),
                      **({"torchvision": sys.modules["torchvision"].__version__} if "torchvision" in sys.modules else {})}))


if __name__ == "__main__":
    main()
