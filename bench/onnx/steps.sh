#!/usr/bin/env bash
# Where a model's time goes in kiln and in ONNX Runtime, step by step, in
# one run: kiln bench --steps beside ONNX Runtime's profiler (its
# per-node kernel times), printed side by side by steps.py.
#
#   bench/onnx/steps.sh MODEL_DIR [THREADS] [RUNS]
#
# MODEL_DIR holds model.onnx and its inputs as in_<name>.npy (a zoo
# model's directory: onnx/testdata/export_zoo.py). Needs Go, node with
# onnxruntime-node installed here (compare.sh installs it), python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${1:?usage: steps.sh MODEL_DIR [THREADS] [RUNS]}
threads=${2:-1}
runs=${3:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/kiln" ./cmd/kiln)
inputs=()
for f in "$dir"/in_*.npy; do
  name=$(basename "$f" .npy)
  inputs+=(--input "${name#in_}=$f")
done
"$tmp/kiln" bench "$dir/model.onnx" --threads "$threads" --runs "$runs" --steps 100000 --json "${inputs[@]}" >"$tmp/kiln.json"
node "$here/ort_bench.js" "$dir/model.onnx" "$dir" "$threads" "$runs" 0 "$tmp/ort" >/dev/null
/usr/bin/python3 "$here/steps.py" "$tmp/kiln.json" "$tmp"/ort_*.json
