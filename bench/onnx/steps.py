"""Prints kiln's steps and ONNX Runtime's nodes of one model side by side
(steps.sh): each in execution order with its time per run, then the time
by op on each side. kiln's steps are fused ops (a Conv with its
activation, BatchNorm folded), ORT's nodes are its own fusions, so the
lists line up by output shape, not one to one. ORT's profiler costs a
few µs a node (a YOLO head's 24 nodes summed to 0.33 ms profiled, its
runs take 0.21-0.23 ms unprofiled): small nodes read high.

    python3 steps.py KILN_STEPS.json ORT_PROFILE.json
"""
import collections
import json
import statistics
import sys


def ort_nodes(path):
    """Per node in first-run order: (median µs over the later runs, op, output shape)."""
    durs, info, order = collections.defaultdict(list), {}, {}
    for e in json.load(open(path)):
        if e.get('cat') != 'Node' or not e['name'].endswith('_kernel_time'):
            continue
        name = e['name'][:-len('_kernel_time')]
        durs[name].append(e['dur'])
        args = e.get('args', {})
        shapes = [list(s.values())[0] for s in args.get('output_type_shape', [])]
        info[name] = (args.get('op_name', '?'), shapes[0] if shapes else [])
        order.setdefault(name, len(order))
    rows = []
    for name in sorted(durs, key=order.get):
        d = durs[name][len(durs[name]) // 4:]  # the first runs warm up
        rows.append((statistics.median(d) / 1000, info[name][0], info[name][1]))
    return rows


def main():
    kiln = json.load(open(sys.argv[1]))
    steps = sorted(kiln['steps'], key=lambda s: s['step'])
    ort = ort_nodes(sys.argv[2])
    print(f"kiln: median run {kiln['median_ms']:.3f} ms, steps {kiln['steps_total_ms']:.3f} ms; "
          f"ONNX Runtime: nodes {sum(r[0] for r in ort):.3f} ms (profiled runs)")
    n = max(len(steps), len(ort))
    print(f"{'kiln ms':>8} {'op':<16} {'shape':<22}   {'ORT ms':>8} {'op':<16} shape")
    for i in range(n):
        left = right = ''
        if i < len(steps):
            s = steps[i]
            left = f"{s['mean_ms']:8.3f} {s['op'][:16]:<16} {str(s['shape'])[:22]:<22}"
        if i < len(ort):
            t, op, shape = ort[i]
            right = f"{t:8.3f} {op[:16]:<16} {shape}"
        print(f"{left:<48}   {right}")
    by_kiln, by_ort = collections.Counter(), collections.Counter()
    for s in steps:
        by_kiln[s['op']] += s['mean_ms']
    for t, op, _ in ort:
        by_ort[op] += t
    print('\nby op (ms per run)')
    for op, t in by_kiln.most_common():
        print(f"  kiln {op:<20} {t:8.3f}")
    for op, t in by_ort.most_common():
        print(f"  ORT  {op:<20} {t:8.3f}")


if __name__ == '__main__':
    main()
