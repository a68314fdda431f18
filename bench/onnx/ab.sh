#!/usr/bin/env bash
# Two builds of kiln, A and B (git revisions), on the benchmark models,
# interleaved, reporting CPU time per run: the measure that holds up on a
# loaded machine, where wall-clock latency does not (time-slicing does not
# inflate a thread's CPU time). With KILN_CPU=avx2 on an AVX-512 host it
# answers "does the AVX2 path get slower", for hosts without AVX-512.
#
#   [KILN_CPU=avx2] [ROUNDS=5] [THREADS=1] bench/onnx/ab.sh REV_A REV_B
#
# The models are compare.sh's (bench/onnx/models; run compare.sh once to
# export them). Prints per case the median CPU ms per run of A and B over
# ROUNDS rounds and B/A (< 1: B is cheaper).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${ROUNDS:-5}
threads=${THREADS:-1}
models=${KILN_BENCH_MODELS:-$here/models}
[ $# -eq 2 ] || { echo "usage: $0 REV_A REV_B" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/wt" 2>/dev/null || true; rm -rf "$tmp"' EXIT
for side in a b; do
  rev=$1
  [ $side = b ] && rev=$2
  git -C "$root" worktree add -q --detach "$tmp/wt" "$rev"
  (cd "$tmp/wt" && go build -o "$tmp/kiln-$side" ./cmd/kiln)
  git -C "$root" worktree remove --force "$tmp/wt"
done
cases=("bert b1 20" "bert b8 4" "mlp b16 40" "cnn b1 30" "resnet18 b1 10" "mobilenet_v2 b1 20" "efficientnet_b0 b1 20" "vit_b_16 b1 3")
inputs() { for f in "$models/$1/$2"/in_*.npy; do n=$(basename "$f" .npy); printf -- '--input %s=%s ' "${n#in_}" "$f"; done; }
: >"$tmp/lines"
for round in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    read -r model set runs <<<"$c"
    [ -f "$models/$model/model.onnx" ] || continue
    for side in a b; do
      cpu=$("$tmp/kiln-$side" bench "$models/$model/model.onnx" $(inputs "$model" "$set") --threads "$threads" --runs "$runs" --warmup 2 --json --progress off |
        /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["cpu_ms"])')
      echo "$model $set $side $cpu" >>"$tmp/lines"
    done
  done
  echo "round $round/$rounds done" >&2
done
/usr/bin/python3 - "$tmp/lines" "$1" "$2" "${KILN_CPU:-best}" "$threads" <<'PY'
import statistics, sys
lines, a, b, cpu, threads = sys.argv[1:]
v = {}
for l in open(lines):
    m, s, side, ms = l.split()
    v.setdefault((m, s), {}).setdefault(side, []).append(float(ms))
print(f"CPU ms per run, KILN_CPU={cpu}, {threads} thread(s): A = {a}, B = {b}")
print("| case | A | B | B/A |")
print("|---|---:|---:|---:|")
for (m, s), d in v.items():
    ma, mb = statistics.median(d["a"]), statistics.median(d["b"])
    print(f"| {m} {s} | {ma:.2f} | {mb:.2f} | {mb / ma:.2f} |")
PY
