#!/usr/bin/env bash
# kiln vs ONNX Runtime vs PyTorch on the same exported models, side by side.
#
#   [ROUNDS=3] bench/onnx/compare.sh [-quick]
#
# Needs Go, Debian's python3-torch, python3-onnx and python3-numpy, node
# and npm. It exports the benchmark models once (into bench/onnx/models,
# ~80 MB, not committed: onnx/testdata/export_models.py --bench), installs
# onnxruntime-node (its bundled CPU build; .npmrc skips the CUDA download),
# checks that kiln's outputs match PyTorch's, then times every model at 1
# and 2 threads, the three runtimes interleaved per case so that a change
# in machine load hits them alike. Each number is a median of RUNS runs
# after WARMUP untimed ones. It prints a table with ratios (> 1: kiln is
# faster) and writes it to bench/onnx/RESULTS.md (raw numbers in
# results.jsonl, a chart in results.png). The whole sweep runs ROUNDS
# times (default 3): on a shared machine one round's ratio can move by
# 15%, so the table gives medians over rounds and each round's ratio to
# ONNX Runtime. -quick runs one round of 3 runs each.
#
# ONNX Runtime: graph optimisation 'all', sequential execution, intra-op
# threads = N, inter-op 1. PyTorch: eager, inference_mode, OpenBLAS with N
# threads (torch_bench.py says why), set_num_threads(N). kiln: kiln bench
# --threads N.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
quick=
[ "${1:-}" = -quick ] && quick=1
rounds=${ROUNDS:-3}
[ -n "$quick" ] && rounds=1
models=${KILN_BENCH_MODELS:-$here/models}
py() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 "$@"; }

if [ ! -f "$models/cnn/b1/in_x.npy" ]; then
  echo "exporting the benchmark models into $models"
  py "$root/onnx/testdata/export_models.py" --bench "$models" >/dev/null
fi
if [ ! -d "$here/node_modules/onnxruntime-node" ]; then
  (cd "$here" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --silent)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/kiln" ./cmd/kiln)

# case: model, input set, timed runs, warm-up runs
cases=("bert b1 20 3" "bert b8 6 2" "mlp b16 40 5" "cnn b1 30 3")
results=$here/results.jsonl
: >"$results"
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

for round in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    read -r model set runs warmup <<<"$c"
    [ -n "$quick" ] && runs=3 warmup=1
    dir=$models/$model
    if [ "$round" = 1 ]; then
      check_outputs "$model" "$set" # correctness first
    fi
    for threads in 1 2; do
      k=$("$tmp/kiln" bench "$dir/model.onnx" $(inputs "$model" "$set") --threads "$threads" --runs "$runs" --warmup "$warmup" --json --progress off)
      o=$(node "$here/ort_bench.js" "$dir/model.onnx" "$dir/$set" "$threads" "$runs" "$warmup")
      t=$(py "$here/torch_bench.py" "$model" "$dir/$set" "$threads" "$runs" "$warmup")
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
# The README embeds the table between its bench:onnx markers.
py - "$here/RESULTS.md" "$root/README.md" <<'PY'
import re, sys
results, readme = sys.argv[1:]
table = "\n".join(l for l in open(results).read().splitlines() if l.startswith("|"))
text = open(readme).read()
begin, end = "<!-- bench:onnx begin -->", "<!-- bench:onnx end -->"
if begin in text and end in text:
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    open(readme, "w").write(head + begin + "\n" + table + "\n" + end + tail)
    print("updated the table in README.md")
PY
