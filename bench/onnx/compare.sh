#!/usr/bin/env bash
# kiln vs ONNX Runtime vs PyTorch on the same exported models, side by side.
#
#   [ROUNDS=3] bench/onnx/compare.sh [-quick]
#
# Needs Go, Debian's python3-torch, python3-torchvision, python3-onnx and
# python3-numpy, node and npm. It exports the benchmark models once (into
# bench/onnx/models, ~500 MB, not committed: onnx/testdata/export_models.py
# --bench; torchvision's models get random weights, nothing is
# downloaded), installs onnxruntime-node (its bundled CPU build; .npmrc
# skips the CUDA download), checks that kiln's outputs match PyTorch's,
# then times every model at 1 and 2 threads, the three runtimes
# interleaved per case so that a change in machine load hits them alike.
# Each number is a median of RUNS runs after WARMUP untimed ones. It
# prints a table with ratios (> 1: kiln is faster) and writes it to
# bench/onnx/RESULTS.md (raw numbers in results.jsonl, a chart in
# results.png), both titled with the host (host.py: CPU model, SIMD level,
# cores). The whole sweep runs ROUNDS times (default 3): on a shared
# machine one round's ratio can move by 15%, so the table gives medians
# over rounds and each round's ratio to ONNX Runtime. Around each case's
# two-thread runs bench/cores records where the host ran the two threads
# (two cores, or one core's two hardware threads, which a VM's vCPUs get
# at times; and how fast the cores pass cache lines), and the speed-up
# table gives the medians over the rounds on two cores beside all. -quick runs one
# round of 3 runs each. KILN_BENCH_CASES="model set runs warmup;..."
# replaces the case list (e.g. "mobilenet_v3_small b1 20 3", which
# export_models.py builds only when named).
#
# ONNX Runtime: graph optimisation 'all', sequential execution, intra-op
# threads = N, inter-op 1. kiln: kiln bench --threads N. PyTorch: eager,
# inference_mode, set_num_threads(N), in its best environment for the
# case: in the first round each case's PyTorch runs once under each of
# the default environment, OMP_WAIT_POLICY=PASSIVE, OPENBLAS_NUM_THREADS=N
# and both (torch_bench.py says why these matter), and the fastest is used
# for every round; a setting whose threads did more than N + 0.1 cores'
# worth of work (OpenBLAS's own pool, unlimited, in a 1-thread run) is not
# eligible.
# results.jsonl keeps every calibration run ("kind":"torch-calibration")
# and the setting of each PyTorch result. On a machine shared with other
# jobs of yours, run it under quiet.py (which pauses them) with
# KILN_BENCH_PAUSED=1, as quiet.py's doc says.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
quick=
[ "${1:-}" = -quick ] && quick=1
rounds=${ROUNDS:-3}
[ -n "$quick" ] && rounds=1
models=${KILN_BENCH_MODELS:-$here/models}
py() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 "$@"; }

# case: model, input set, timed runs, warm-up runs
cases=("bert b1 20 3" "bert b8 6 2" "mlp b16 40 5" "cnn b1 30 3"
  "resnet18 b1 20 3" "mobilenet_v2 b1 20 3" "efficientnet_b0 b1 20 3" "vit_b_16 b1 6 2")
if [ -n "${KILN_BENCH_CASES:-}" ]; then
  IFS=';' read -r -a cases <<<"$KILN_BENCH_CASES"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

missing=()
for c in "${cases[@]}"; do
  read -r model set _ <<<"$c"
  if [ ! -f "$models/$model/model.onnx" ] || ! compgen -G "$models/$model/$set/out_*.npy" >/dev/null; then
    [[ " ${missing[*]} " == *" $model "* ]] || missing+=("$model")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "exporting ${missing[*]} into $models"
  # (the exporter's tracer warnings are shown only if it fails)
  py "$root/onnx/testdata/export_models.py" --bench "$models" "${missing[@]}" >"$tmp/export.log" 2>&1 ||
    { cat "$tmp/export.log"; exit 1; }
fi
if [ ! -d "$here/node_modules/onnxruntime-node" ]; then
  (cd "$here" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --silent)
fi
(cd "$root" && go build -o "$tmp/kiln" ./cmd/kiln && go build -o "$tmp/cores" ./bench/cores)

results=$here/results.jsonl
py "$here/host.py" "$tmp/kiln" >"$results" # first line: the host, for the titles
echo "host: $(head -1 "$results" | py -c 'import json,sys; print(json.load(sys.stdin)["title"])')"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

inputs() { for f in "$models/$1/$2"/in_*.npy; do n=$(basename "$f" .npy); printf -- '--input %s=%s ' "${n#in_}" "$f"; done; }

# check_outputs MODEL SET: kiln's outputs against PyTorch's.
check_outputs() {
  "$tmp/kiln" run "$models/$1/model.onnx" $(inputs "$1" "$2") --output "$tmp/out" >/dev/null 2>&1
  py - "$tmp/out" "$models/$1/$2" <<'PY'
import glob, os, sys
import numpy as np
got_dir, want_dir = sys.argv[1:]
for w in sorted(glob.glob(os.path.join(want_dir, "out_*.npy"))):
    name = os.path.basename(w)[4:]
    want, got = np.load(w), np.load(os.path.join(got_dir, name))
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
    status = "ok" if err < 1e-4 else "MISMATCH"
    print(f"check {want_dir}: {name[:-4]} max |kiln - torch| / max |torch| = {err:.2g} {status}")
    if status != "ok":
        sys.exit(1)
PY
}

# calibrate_torch MODEL SET THREADS RUNS WARMUP: times PyTorch once under
# each candidate environment (RUNS timed runs each), appends the runs to
# results.jsonl and prints the fastest eligible setting.
calibrate_torch() {
  local s
  : >"$tmp/calibration"
  for s in default OMP_WAIT_POLICY=PASSIVE "OPENBLAS_NUM_THREADS=$3" "OPENBLAS_NUM_THREADS=$3,OMP_WAIT_POLICY=PASSIVE"; do
    py "$here/torch_bench.py" "$1" "$models/$1/$2" "$3" "$4" "$5" "$s" >>"$tmp/calibration"
  done
  py - "$1 $2" "$3" "$tmp/calibration" "$results" <<'PY'
import json, os, sys
case, threads, runs, results = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
runs = [json.loads(l) for l in open(runs) if l.strip()]
cpus = len(os.sched_getaffinity(0))
# Eligible: no more than THREADS cores' worth of work (where the host has
# more cores than that), so that a 1-thread row stays a 1-thread row. With
# OpenBLAS limited, a 1-thread run's parallelism is 1.00.
limit = threads + 0.1
ok = lambda r: threads >= cpus or r.get("parallelism") is None or r["parallelism"] <= limit
best = min((r for r in runs if ok(r)), key=lambda r: r["median_ms"], default=None) or min(runs, key=lambda r: r["median_ms"])
with open(results, "a") as f:
    for r in runs:
        f.write(json.dumps({"kind": "torch-calibration", "case": case, "threads": threads, "setting": r["setting"],
                            "eligible": ok(r), "limit": limit, "chosen": r is best, "result": r}) + "\n")
print(best["setting"])
PY
}

declare -A torch_env
for round in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    read -r model set runs warmup <<<"$c"
    [ -n "$quick" ] && runs=3 warmup=1
    dir=$models/$model
    if [ "$round" = 1 ]; then
      check_outputs "$model" "$set" # correctness first
    fi
    for threads in 1 2; do
      if [ "$round" = 1 ]; then
        torch_env["$model $set $threads"]=$(calibrate_torch "$model" "$set" "$threads" $((runs > 5 ? (runs + 1) / 2 : 3)) "$warmup")
        echo "PyTorch, $model $set threads $threads: ${torch_env["$model $set $threads"]}"
      fi
      # Where the host ran the two threads (bench/cores), before and after.
      [ "$threads" = 2 ] && before=$("$tmp/cores" || echo null)
      k=$("$tmp/kiln" bench "$dir/model.onnx" $(inputs "$model" "$set") --threads "$threads" --runs "$runs" --warmup "$warmup" --json --progress off)
      o=$(node "$here/ort_bench.js" "$dir/model.onnx" "$dir/$set" "$threads" "$runs" "$warmup")
      t=$(py "$here/torch_bench.py" "$model" "$dir/$set" "$threads" "$runs" "$warmup" "${torch_env["$model $set $threads"]}")
      if [ "$threads" = 2 ]; then
        printf '{"round":%s,"case":"%s %s","kind":"cores","before":%s,"after":%s}\n' "$round" "$model" "$set" "$before" "$("$tmp/cores" || echo null)" >>"$results"
      fi
      for pair in "kiln:$k" "ort:$o" "torch:$t"; do
        printf '{"round":%s,"case":"%s %s","threads":%s,"runtime":"%s","result":%s}\n' "$round" "$model" "$set" "$threads" "${pair%%:*}" "${pair#*:}" >>"$results"
      done
      echo "round $round/$rounds, $model $set threads $threads: kiln $(echo "$k" | py -c 'import json,sys; print("%.2f ms" % json.load(sys.stdin)["median_ms"])'), ort $(echo "$o" | py -c 'import json,sys; print("%.2f ms" % json.load(sys.stdin)["median_ms"])'), torch $(echo "$t" | py -c 'import json,sys; print("%.2f ms" % json.load(sys.stdin)["median_ms"])')"
    done
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
py "$here/report.py" "$results" "$load_before" "$load_after" "${quick:+quick}" >"$tmp/RESULTS.md"
cat "$tmp/RESULTS.md"
cp "$tmp/RESULTS.md" "$here/RESULTS.md"
# The chart is optional: it needs gonum's plot module from the Go proxy.
if (cd "$here/chart" && GOFLAGS=-mod=mod go run . "$results" "$here/results.png") 2>/dev/null; then
  echo "wrote $here/results.png"
fi
# The README embeds the table and its title (between RESULTS.md's table
# markers) between its bench:onnx markers.
py - "$here/RESULTS.md" "$root/README.md" <<'PY'
import sys
results, readme = sys.argv[1:]
table = open(results).read().split("<!-- table begin -->\n", 1)[1].split("<!-- table end -->", 1)[0].strip()
text = open(readme).read()
begin, end = "<!-- bench:onnx begin -->", "<!-- bench:onnx end -->"
if begin in text and end in text:
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    open(readme, "w").write(head + begin + "\n" + table + "\n" + end + tail)
    print("updated the table in README.md")
PY
