#!/usr/bin/env bash
# The amd64 benchmark tables, on a real arm64 machine (AWS Graviton,
# Ampere, Apple Silicon). qemu cannot measure speed, so CI only proves the
# NEON kernels correct; run this where the hardware is and paste the
# output into an issue.
#
#   bench/arm64.sh                 # everything, ~10 minutes
#   QUICK=1 bench/arm64.sh         # fewer rounds
#
# Needs Go 1.26. For the OpenBLAS column of the GEMM table it needs a
# python3 with numpy (Debian/Ubuntu: apt install python3-numpy
# libopenblas0-pthread; macOS: any numpy, which uses Accelerate there, so
# the column is Accelerate's speed, not OpenBLAS's); set PY to choose the
# interpreter. Without numpy it prints kiln's GEMM numbers alone.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(go env GOARCH)" = arm64 ] || { echo "bench/arm64.sh: this is $(go env GOARCH), not arm64" >&2; exit 2; }
rounds=3 count=5
[ -n "${QUICK:-}" ] && rounds=1 count=2
PY=${PY:-$(command -v python3 || true)}

echo "### machine"
uname -a
go version
go run ./cmd/kiln info

echo "### elementwise kernels vs copy (bench/elementwise.sh)"
COUNT=$count VARIANT='neon' bench/elementwise.sh

echo "### SGEMM vs OpenBLAS/Accelerate and gonum (bench/gemm/compare.sh)"
if [ -n "$PY" ] && "$PY" -c 'import numpy' 2>/dev/null; then
	PY=$PY ROUNDS=$rounds bench/gemm/compare.sh
else
	echo "(no python3 with numpy: kiln's GFLOP/s alone, raw lines: name shape threads GFLOP/s GFLOP/cpu-s)"
	for t in 1 2; do go run ./bench/gemm/kiln -threads $t -shapes sq128:128x128x128,sq512:512x512x512,sq1024:1024x1024x1024,decode_M1_K384_N1536:1x384x1536; done
fi

echo "### demo encoder, fused vs KILN_FUSE=off (fuse.BenchmarkDemoEncoder)"
go test ./fuse -run '^$' -bench 'DemoEncoder' -benchtime 10x -count "$count"
