#!/usr/bin/python3
"""Formats compare.sh's results (one JSON object per round, runtime, case
and thread count) as the Markdown page bench/onnx/RESULTS.md: per case,
each runtime's median over rounds of its per-round median latency, the
median over rounds of the per-round ratios, and each round's ratio to
ONNX Runtime.

    report.py RESULTS.jsonl "LOAD BEFORE" "LOAD AFTER" [quick]
"""
import collections
import json
import os
import platform
import subprocess
import statistics
import sys


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    path, load_before, load_after = sys.argv[1:4]
    quick = len(sys.argv) > 4 and sys.argv[4] == "quick"
    # per[(case, threads)][round][runtime] = that round's median latency
    per = collections.defaultdict(lambda: collections.defaultdict(dict))
    versions = {}
    runs = {}
    for line in open(path):
        r = json.loads(line)
        key = (r["case"], r["threads"])
        per[key][r.get("round", 1)][r["runtime"]] = r["result"]["median_ms"]
        runs[key] = r["result"]["runs"]
        if "version" in r["result"]:
            versions[r["runtime"]] = r["result"]["version"]
    go = subprocess.run(["go", "version"], capture_output=True, text=True).stdout.split()[2:3] or ["go ?"]
    print("# kiln vs ONNX Runtime vs PyTorch\n")
    nrounds = max(len(v) for v in per.values())
    print(f"Median latency in milliseconds (lower is better) of the same exported models, measured in {nrounds} round(s) of")
    print("`bench/onnx/compare.sh` (each a median of the timed runs; the table shows the median over rounds, and ratios are")
    print("medians of the per-round ratios); a ratio above 1 means kiln is faster. Models: `onnx/testdata/export_models.py --bench`")
    print("(BERT-style: MiniLM-sized, hidden 384, 6 layers, 12 heads, FFN 1536, sequence 128, ONNX opset 14;")
    print("MLP 1024-2048-2048-1024 at batch 16; ResNet-style CNN, widths 32/64/128, on 3×128×128).\n")
    print("| model | threads | runs | kiln | ONNX Runtime | PyTorch | ORT / kiln | PyTorch / kiln | ORT / kiln per round |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for (case, threads), rounds in per.items():
        ms = {rt: statistics.median(r[rt] for r in rounds.values()) for rt in ("kiln", "ort", "torch")}
        ort = [r["ort"] / r["kiln"] for r in rounds.values()]
        torch = [r["torch"] / r["kiln"] for r in rounds.values()]
        print(f"| {case} | {threads} | {runs[(case, threads)]} | {ms['kiln']:.2f} | {ms['ort']:.2f} | {ms['torch']:.2f} "
              f"| {statistics.median(ort):.2f} | {statistics.median(torch):.2f} | {' '.join(f'{x:.2f}' for x in ort)} |")
    print()
    print(f"Machine: {cpu_model()}, {os.cpu_count()} logical CPUs, shared with other jobs: load average "
          f"{load_before} before the run and {load_after} after it, so absolute numbers are noisy; the")
    print("runtimes are interleaved per case so that load changes hit them alike.")
    if float(load_before.split()[0]) > (os.cpu_count() or 1):
        print("The machine was oversubscribed (load above its CPU count): with 2 threads each runtime competes with")
        print("the other jobs for both cores; runtimes whose workers spin long while waiting (ONNX Runtime's pool and")
        print("PyTorch's OpenMP do by default; kiln's workers spin at most 10 µs, then block) are likely to lose more to that, so")
        print("the 2-thread rows measure behaviour under contention more than raw speed: the 1-thread rows are the")
        print("fairer comparison here.")
    print(f"Versions: kiln at this commit ({go[0]}), onnxruntime-node {versions.get('ort', '?')} (graph optimisation "
          f"'all', sequential), PyTorch {versions.get('torch', '?')} (eager, inference_mode, OpenBLAS limited to the")
    print("same thread count: Debian's torch does its products in OpenBLAS, whose pool set_num_threads does not size;")
    print("unlimited, a 1-thread PyTorch run used both cores). PyTorch's 2-thread rows are slow because its OpenMP")
    print("workers and OpenBLAS's threads contend for the two cores in this build.")
    if quick:
        print("\n(quick run: 3 timed runs per cell)")


if __name__ == "__main__":
    main()
