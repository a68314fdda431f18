"""Reads the lines of all runs (tool shape threads GFLOP/s GFLOP/cpu-s)
from stdin and prints, per shape and thread count, each tool's median and
best GFLOP/s over every window of every round, the ratios of the medians,
and then the same medians per second of process CPU time (single-threaded
rows only: that measure ignores time slices lost to other processes)."""
import statistics
import sys
from collections import defaultdict

TOOLS = ["kiln", "kiln-packed", "openblas", "gonum"]


def main():
    order, wall, cpu, peak = [], defaultdict(list), defaultdict(list), []
    for line in sys.stdin:
        parts = line.split()
        if len(parts) == 5 and parts[:2] == ["peak", "fma"]:
            peak.append(float(parts[3]))
            continue
        if len(parts) != 5 or parts[0] not in TOOLS:
            continue
        tool, shape, threads = parts[0], parts[1], int(parts[2])
        if (shape, threads) not in order:
            order.append((shape, threads))
        wall[(tool, shape, threads)].append(float(parts[3]))
        if float(parts[4]) > 0:
            cpu[(tool, shape, threads)].append(float(parts[4]))
    first = {k: i for i, k in enumerate(order)}
    order.sort(key=lambda x: (x[1], first[x]))
    med = lambda d, k: statistics.median(d[k]) if d[k] else float("nan")
    best = lambda d, k: max(d[k]) if d[k] else float("nan")
    ratios = f"{'kiln/OpenBLAS':>15}{'packed/OpenBLAS':>17}{'kiln/gonum':>12}{'kiln/peak':>11}"
    # One core's FMA peak (median over windows); a row's peak is that
    # times its threads.
    pk = statistics.median(peak) if peak else float("nan")

    def row(d, shape, thr, with_best):
        cells = ""
        for t in TOOLS:
            cells += f"{med(d, (t, shape, thr)):>9.1f}"
            cells += f" ({best(d, (t, shape, thr)):>5.1f})" if with_best else "       "
        k, kp, o, g = (med(d, (t, shape, thr)) for t in TOOLS)
        return f"{shape:<22}{thr:>4}{cells}{k / o:>15.2f}{kp / o:>17.2f}{k / g:>12.1f}{k / (pk * thr):>11.2f}"

    head = f"{'shape':<22}{'thr':>4}" + "".join(f"{t:>16}" for t in TOOLS) + ratios
    print(f"FMA peak of one core (asm.FMAPeak, median of {len(peak)} windows): {pk:.1f} GFLOP/s")
    print("wall clock, GFLOP/s: median (best) over all windows; ratios of medians")
    print(head)
    for shape, thr in order:
        print(row(wall, shape, thr, True))
    print()
    print("process CPU time, GFLOP per CPU-second: medians, single-threaded; ratios of medians")
    print(head)
    for shape, thr in order:
        if thr == 1:
            print(row(cpu, shape, thr, False))


if __name__ == "__main__":
    main()
