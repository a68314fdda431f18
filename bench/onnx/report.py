#!/usr/bin/python3
"""Formats compare.sh's results (one JSON object per round, runtime, case
and thread count; a first line describing the host; PyTorch's calibration
runs) as the Markdown page bench/onnx/RESULTS.md: per case, each
runtime's median over rounds of its per-round median latency, the median
over rounds of the per-round ratios, each round's ratio to ONNX Runtime
and the environment PyTorch ran in; then every calibration run.

    report.py RESULTS.jsonl "LOAD BEFORE" "LOAD AFTER" [quick]

The main table and its title (the host's CPU, SIMD level and cores) sit
between <!-- table begin --> and <!-- table end -->, which compare.sh
copies into the README.
"""
import collections
import json
import os
import subprocess
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import host  # noqa: E402

# What each benchmark model is, for the page's model list.
MODELS = {
    "bert": "BERT-style encoder, MiniLM-sized (hidden 384, 6 layers, 12 heads, FFN 1536), sequence 128",
    "mlp": "MLP 1024-2048-2048-1024 at batch 16",
    "cnn": "ResNet-style CNN, widths 32/64/128, on 3×128×128",
    "resnet18": "torchvision's ResNet-18 on 3×224×224 (1.8 G multiply-adds)",
    "mobilenet_v2": "torchvision's MobileNetV2 on 3×224×224 (depthwise 3×3, ReLU6; 0.3 G multiply-adds)",
    "efficientnet_b0": "torchvision's EfficientNet-B0 on 3×224×224 (depthwise 3×3 and 5×5, SiLU, squeeze-excite; "
                       "0.4 G multiply-adds)",
    "vit_b_16": "torchvision's ViT-B/16 on 3×224×224 (patch 16, 12 layers, hidden 768, 12 heads, MLP 3072; "
                "17.6 G multiply-adds)",
    "mobilenet_v3_small": "torchvision's MobileNetV3-Small on 3×224×224 (HardSwish, squeeze-excite)",
}


def short_setting(s):
    """PyTorch's environment in a few words: "default", "passive",
    "OpenBLAS 1", "OpenBLAS 1, passive"."""
    if not s:
        return "?"
    if s == "default":
        return "default"
    words = []
    for kv in s.split(","):
        k, _, v = kv.partition("=")
        words.append({"OMP_WAIT_POLICY": "passive" if v.upper() == "PASSIVE" else f"OMP wait {v.lower()}",
                      "OPENBLAS_NUM_THREADS": f"OpenBLAS {v}", "OMP_NUM_THREADS": f"OMP {v}"}.get(k, kv))
    return ", ".join(words)


def placement(rec):
    """Where bench/cores found the two threads of a case's round, from its
    probes before and after the runtimes ran: "two" (two cores both
    times), "one" (one core's hardware threads both times), "moved" (the
    host moved them in between) or None (no probe); and the slower of
    the two line round trips."""
    if rec is None or not rec.get("before") or not rec.get("after"):
        return None, None
    b, a = rec["before"]["cores"], rec["after"]["cores"]
    return (b if b == a else "moved"), max(rec["before"]["rtt_ns"], rec["after"]["rtt_ns"])


def speedups(per, cores):
    """Prints each runtime's two-thread speed-up per case: its one-thread
    over its two-thread median latency of the same round (the two ran
    minutes apart at most), the median over all rounds and over the
    rounds whose two threads ran on two cores (cores: bench/cores' probes
    per (case, round)), then kiln's in each round with where it ran."""
    cases = [case for case, threads in per if threads == 1 and (case, 2) in per]
    if not cases:
        return
    print("## Two-thread speed-up\n")
    print("Each runtime's one-thread latency over its two-thread latency in the same round (median over rounds;")
    print("then kiln's per round). A host whose second core or memory is busy with other tenants lowers every")
    print("runtime's figure; the runtimes ran interleaved, so they met the same conditions. A virtual machine's")
    print("two vCPUs may also run on the two hardware threads of one core, which share its FMA units (bench/cores,")
    print("run before and after each case's two-thread runs, tells: `1c` beside a round), or on cores of different")
    print("dies, which pass each cache line one hands the other in 400-600 ns instead of 100-200 (the slower probe's")
    print("round trip in ns beside each round); the `two cores` columns take the rounds on two cores both times.\n")
    print("| model | kiln | ONNX Runtime | PyTorch | kiln, two cores | ONNX Runtime, two cores | kiln per round |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for case in cases:
        one, two = per[(case, 1)], per[(case, 2)]
        rounds = [r for r in one if r in two]
        where = {r: placement(cores.get((case, r))) for r in rounds}

        def med(rt, rs):
            xs = [one[r][rt] / two[r][rt] for r in rs if rt in one[r] and rt in two[r]]
            return f"{statistics.median(xs):.2f}×" if xs else "–"

        both = [r for r in rounds if where[r][0] == "two"]
        marks = []
        for r in rounds:
            if "kiln" not in one[r] or "kiln" not in two[r]:
                continue
            at, rtt = where[r]
            note = {"two": f" ({rtt:.0f})", "one": " (1c)", "moved": " (moved)"}.get(at, "")
            marks.append(f"{one[r]['kiln'] / two[r]['kiln']:.2f}{note}")
        print(f"| {case} | {med('kiln', rounds)} | {med('ort', rounds)} | {med('torch', rounds)} "
              f"| {med('kiln', both)} | {med('ort', both)} | {', '.join(marks)} |")
    print()


def main():
    path, load_before, load_after = sys.argv[1:4]
    quick = len(sys.argv) > 4 and sys.argv[4] == "quick"
    # per[(case, threads)][round][runtime] = that round's median latency
    per = collections.defaultdict(lambda: collections.defaultdict(dict))
    versions = {}
    runs = {}
    settings = {}  # (case, threads) -> PyTorch's setting
    calib = collections.defaultdict(list)  # (case, threads) -> calibration records
    cores = {}  # (case, round) -> bench/cores' probes around its two-thread runs
    machine = None
    for line in open(path):
        r = json.loads(line)
        kind = r.get("kind")
        if kind == "host":
            machine = r
            continue
        if kind == "torch-calibration":
            calib[(r["case"], r["threads"])].append(r)
            continue
        if kind == "cores":
            cores[(r["case"], r.get("round", 1))] = r
            continue
        key = (r["case"], r["threads"])
        per[key][r.get("round", 1)][r["runtime"]] = r["result"]["median_ms"]
        runs[key] = r["result"]["runs"]
        if "version" in r["result"]:
            versions[r["runtime"]] = r["result"]["version"]
        if "torchvision" in r["result"]:
            versions["torchvision"] = r["result"]["torchvision"]
        if r["runtime"] == "torch":
            # before the calibration, OpenBLAS was limited to THREADS
            settings[key] = r["result"].get("setting", f"OPENBLAS_NUM_THREADS={r['threads']}")
    if machine is None:  # results from before host.py: the CPU alone
        info = host.cpuinfo()
        machine = {"title": info.get("model name", "unknown CPU"), "kiln_kernels": ""}
    go = subprocess.run(["go", "version"], capture_output=True, text=True).stdout.split()[2:3] or ["go ?"]
    nrounds = max(len(v) for v in per.values())
    names = list(dict.fromkeys(case.split()[0] for case, _ in per))

    print("# kiln vs ONNX Runtime vs PyTorch\n")
    print(f"Median latency in milliseconds (lower is better) of the same exported models, measured in {nrounds} round(s) of")
    print("`bench/onnx/compare.sh` (each a median of the timed runs; the table shows the median over rounds, and ratios are")
    print("medians of the per-round ratios); a ratio above 1 means kiln is faster. Models (`onnx/testdata/export_models.py")
    print("--bench`, ONNX opset 14, batch dim symbolic, fixed seeds; torchvision's with random weights and BatchNorm")
    print("statistics measured on random images):\n")
    for n in names:
        print(f"- `{n}`: {MODELS.get(n, n)}")
    print()
    print("<!-- table begin -->")
    print(f"**{machine['title']}**: median ms, lower is better; ratios above 1: kiln is faster\n")
    print("| model | threads | runs | kiln | ONNX Runtime | PyTorch | ORT / kiln | PyTorch / kiln | ORT / kiln per round "
          "| PyTorch env |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for (case, threads), rounds in per.items():
        ms = {rt: statistics.median(r[rt] for r in rounds.values()) for rt in ("kiln", "ort", "torch")}
        ort = [r["ort"] / r["kiln"] for r in rounds.values()]
        torch = [r["torch"] / r["kiln"] for r in rounds.values()]
        print(f"| {case} | {threads} | {runs[(case, threads)]} | {ms['kiln']:.2f} | {ms['ort']:.2f} | {ms['torch']:.2f} "
              f"| {statistics.median(ort):.2f} | {statistics.median(torch):.2f} | {' '.join(f'{x:.2f}' for x in ort)} "
              f"| {short_setting(settings.get((case, threads)))} |")
    print("<!-- table end -->")
    print()
    speedups(per, cores)
    print("PyTorch env: the environment PyTorch ran in, the fastest of a calibration run per case (below): default")
    print("(nothing set), passive (`OMP_WAIT_POLICY=PASSIVE`: OpenMP workers sleep instead of spinning), OpenBLAS N")
    print("(`OPENBLAS_NUM_THREADS=N`), or both.")
    if calib:
        print("\n## PyTorch's environment\n")
        print("Before the timed rounds, each case's PyTorch ran once under each environment (median ms of its runs; in")
        print("brackets, its threads' summed CPU time over the busiest thread's: the cores' worth of work it spread over).")
        # the limit compare.sh applied: THREADS + 0.25 before it was recorded
        over = min(r.get("limit", r["threads"] + 0.25) - r["threads"] for rs in calib.values() for r in rs)
        print("The fastest eligible one (**bold**) was used in every round; an environment that spread an N-thread run")
        print(f"over more than N + {over:.2g} cores' worth of work (OpenBLAS's own pool sized to every core) was not eligible")
        print("(~~struck~~; only where the host has more cores than N).\n")
        cols = ["default", "passive", "OpenBLAS N", "OpenBLAS N, passive"]
        print("| model | threads | runs | " + " | ".join(cols) + " |")
        print("|---|---:|---:|" + "---:|" * len(cols))
        for (case, threads), recs in calib.items():
            cells = {}
            for r in recs:
                res = r["result"]
                par = res.get("parallelism")
                cell = f"{res['median_ms']:.2f}" + (f" ({par:.2f})" if par is not None else "")
                if r.get("chosen"):
                    cell = f"**{cell}**"
                elif not r.get("eligible", True):
                    cell = f"~~{cell}~~"
                cells[short_setting(r["setting"]).replace(f"OpenBLAS {threads}", "OpenBLAS N")] = cell
            n = recs[0]["result"]["runs"]
            print(f"| {case} | {threads} | {n} | " + " | ".join(cells.get(c, "") for c in cols) + " |")
    print()
    kernels = f" (kiln's kernels: {machine['kiln_kernels']})" if machine.get("kiln_kernels") else ""
    print(f"Machine: {machine['title']}{kernels}, shared with other jobs: load average "
          f"{load_before} before the run and {load_after} after it, so absolute numbers are noisy; the")
    print("runtimes are interleaved per case so that load changes hit them alike.")
    if os.environ.get("KILN_BENCH_PAUSED"):
        print("The other jobs on the machine were paused (SIGSTOP, bench/onnx/quiet.py) for the whole run: the")
        print("load averages above lag behind that, and both cores were the runtimes' alone.")
    elif float(load_before.split()[0]) > (os.cpu_count() or 1):
        print("The machine was oversubscribed (load above its CPU count): with 2 threads each runtime competes with")
        print("the other jobs for both cores; runtimes whose workers spin long while waiting (ONNX Runtime's pool and")
        print("PyTorch's OpenMP do by default; kiln's workers spin at most 10 µs, then block) are likely to lose more to that, so")
        print("the 2-thread rows measure behaviour under contention more than raw speed: the 1-thread rows are the")
        print("fairer comparison here.")
    tv = f", torchvision {versions['torchvision']}" if "torchvision" in versions else ""
    print(f"Versions: kiln at this commit ({go[0]}), onnxruntime-node {versions.get('ort', '?')} (graph optimisation "
          f"'all', sequential), PyTorch {versions.get('torch', '?')}{tv} (eager, inference_mode, set_num_threads(N);")
    print("Debian's build runs its parallel loops on OpenMP and its matrix products on OpenBLAS, whose own pool")
    print("set_num_threads does not size, hence the environment above).")
    if quick:
        print("\n(quick run: 3 timed runs per cell)")


if __name__ == "__main__":
    main()
