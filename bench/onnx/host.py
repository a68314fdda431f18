#!/usr/bin/python3
"""Describes the benchmark host for compare.sh's results: prints one JSON
object (the first line of results.jsonl) whose "title", e.g. "AMD EPYC
(Zen 5), AVX-512, 2 cores", heads RESULTS.md's table and the chart.

    host.py [KILN]

The CPU model is /proc/cpuinfo's model name, with AMD's core generation
from its family and model numbers; the SIMD level is the widest one of
the CPU's flags, checked against the kernels kiln chose (the 'kernels:'
line of `KILN info`, recorded as "kiln_kernels"): where they differ, as
under KILN_CPU=avx2, the title names both.
"""
import json
import os
import platform
import subprocess
import sys


def cpuinfo():
    """The first processor's fields of /proc/cpuinfo."""
    fields = {}
    try:
        for line in open("/proc/cpuinfo"):
            if not line.strip():
                if fields:
                    break
                continue
            k, _, v = line.partition(":")
            fields.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    return fields


def amd_core(family, model):
    """AMD's core generation from the CPUID family and model, or ""."""
    if family == 0x17:
        return "Zen 2" if model >= 0x30 else "Zen/Zen+"
    if family == 0x19:
        zen4 = 0x10 <= model <= 0x1F or 0x60 <= model <= 0x7F or 0xA0 <= model <= 0xAF
        return "Zen 4" if zen4 else "Zen 3"
    if family == 0x1A:
        return "Zen 5"
    return ""


def simd_level(flags):
    """The widest SIMD level kiln has kernels for that the flags show."""
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "AVX-512"
    if {"avx2", "fma"} <= flags:
        return "AVX2"
    if "asimd" in flags:
        return "NEON"
    return "no SIMD kernels"


def kiln_kernels(kiln):
    """The 'kernels:' line of `kiln info`, e.g. "gemm avx512, elementwise
    avx2, rows avx2", or "" without a kiln binary."""
    if not kiln:
        return ""
    try:
        out = subprocess.run([kiln, "info"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    for line in out.splitlines():
        if line.startswith("kernels:"):
            return line.split(":", 1)[1].strip()
    return ""


def main():
    info = cpuinfo()
    name = info.get("model name") or platform.processor() or platform.machine() or "unknown CPU"
    if info.get("vendor_id") == "AuthenticAMD":
        try:
            core = amd_core(int(info.get("cpu family", "0")), int(info.get("model", "0")))
        except ValueError:
            core = ""
        if core and core not in name:
            name += f" ({core})"
    flags = set((info.get("flags") or info.get("Features") or "").split())
    simd = simd_level(flags)
    kernels = kiln_kernels(sys.argv[1] if len(sys.argv) > 1 else "")
    gemm = dict(kv.split(" ", 1) for kv in kernels.split(", ") if " " in kv).get("gemm", "")
    kiln_simd = {"avx512": "AVX-512", "avx2": "AVX2", "neon": "NEON", "generic": "no SIMD kernels"}.get(gemm, "")
    level = simd if not kiln_simd or kiln_simd == simd else f"{simd} (kiln's GEMM: {kiln_simd})"
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    smt = info.get("siblings") and info.get("cpu cores") and info["siblings"] != info["cpu cores"]
    unit = "logical CPUs" if smt else ("core" if cpus == 1 else "cores")
    print(json.dumps({"kind": "host", "title": f"{name}, {level}, {cpus} {unit}", "cpu": name, "simd": simd,
                      "cpus": cpus, "kiln_kernels": kernels}))


if __name__ == "__main__":
    main()
