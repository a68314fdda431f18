#!/usr/bin/env bash
# kiln and ONNX Runtime on quantized models and their float originals,
# interleaved: each round runs every case once on each engine, so a load
# that comes and goes on a shared machine hits all of them alike. Reports
# per case the median over the rounds of each engine's median latency and
# of its CPU time per run (process user+system time over the timed runs:
# the figure that holds up when other work shares the cores), and the
# ratios ORT/kiln (> 1: kiln is faster) and, per engine, float/int8.
#
#   [ROUNDS=5] [THREADS="1 2"] [RUNS=20] bench/onnx/quant_compare.sh NAME=FLOAT_DIR,QUANT_DIR,SET ...
#
# FLOAT_DIR and QUANT_DIR hold model.onnx and SET/in_*.npy (SET relative to
# each); the quantized models come from onnx/testdata/quantize_static.py or
# quantize_dynamic.py run on the benchmark models (bench/onnx/models, see
# compare.sh), for example
#
#   /usr/bin/python3 onnx/testdata/quantize_static.py bench/onnx/models/bert /tmp/q/bert --inputs bench/onnx/models/bert/b1
#   ln -s $PWD/bench/onnx/models/bert/b1 $PWD/bench/onnx/models/bert/b8 /tmp/q/bert/
#   bench/onnx/quant_compare.sh bert-b1=bench/onnx/models/bert,/tmp/q/bert,b1
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${ROUNDS:-5}
threads=${THREADS:-1 2}
runs=${RUNS:-20}
[ $# -ge 1 ] || { echo "usage: $0 NAME=FLOAT_DIR,QUANT_DIR,SET ..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/kiln" ./cmd/kiln)
inputs() { for f in "$1"/in_*.npy; do n=$(basename "$f" .npy); printf -- '--input %s=%s ' "${n#in_}" "$f"; done; }
for round in $(seq "$rounds"); do
  for c in "$@"; do
    name=${c%%=*}
    IFS=, read -r fdir qdir set <<<"${c#*=}"
    for th in $threads; do
      for form in float int8; do
        dir=$fdir
        [ $form = int8 ] && dir=$qdir
        k=$("$tmp/kiln" bench "$dir/model.onnx" $(inputs "$dir/$set") --threads "$th" --runs "$runs" --warmup 3 --json --progress off)
        o=$(node "$here/ort_bench.js" "$dir/model.onnx" "$dir/$set" "$th" "$runs" 3)
        echo "$name $th $form kiln $(echo "$k" | /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["median_ms"], r["cpu_ms"])')" >>"$tmp/lines"
        echo "$name $th $form ort $(echo "$o" | /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["median_ms"], r["cpu_ms"])')" >>"$tmp/lines"
      done
    done
  done
  echo "round $round/$rounds done" >&2
done
/usr/bin/python3 - "$tmp/lines" "$rounds" <<'PY'
import statistics, sys
v = {}
for l in open(sys.argv[1]):
    name, th, form, eng, ms, cpu = l.split()
    v.setdefault((name, th), {}).setdefault((form, eng), []).append((float(ms), float(cpu)))
med = lambda xs, i: statistics.median(x[i] for x in xs)
print(f"medians over {sys.argv[2]} interleaved rounds; ms = median latency, cpu = CPU ms per run")
print("| case | threads | kiln f32 ms (cpu) | kiln int8 ms (cpu) | ORT f32 ms (cpu) | ORT int8 ms (cpu) | int8 ORT/kiln (cpu) | kiln f32/int8 (cpu) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for (name, th), d in v.items():
    c = {k: (med(x, 0), med(x, 1)) for k, x in d.items()}
    kf, ki, of, oi = c[("float", "kiln")], c[("int8", "kiln")], c[("float", "ort")], c[("int8", "ort")]
    f = lambda p: f"{p[0]:.2f} ({p[1]:.2f})"
    print(f"| {name} | {th} | {f(kf)} | {f(ki)} | {f(of)} | {f(oi)} | {oi[0]/ki[0]:.2f} ({oi[1]/ki[1]:.2f}) | {kf[0]/ki[0]:.2f} ({kf[1]/ki[1]:.2f}) |")
PY
