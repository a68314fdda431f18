#!/usr/bin/env bash
# gpu-check.sh: run on a machine with an NVIDIA GPU (sm_80 or newer) to
# check the CUDA backend against the CPU reference and measure it.
#
#   bash driver/cuda/gpu-check.sh [benchtime]      (default 2s)
#
# Results go to $OUT when set, else ./gpu-check-results: one log per
# stage and summary.txt (the header and one RESULT line per stage).
# Without a GPU it prints "SKIP: <reason>" and exits 0.
#
# Stages:
#   build      CGO_ENABLED=0 go build ./... and go vet of the GPU packages
#   tests      go test -v of driver/cuda (KILN_TEST_REQUIRE_GPU=1: a
#              skipped GPU test fails), ptx and ptx/emu: every op, the demo
#              encoder and the ONNX test models (mlp, bert, cnn) on CUDA
#              against the CPU, the graph model (replay = per-kernel run,
#              RunInPlace allocation-free) and cuBLAS (KILN_TEST_REQUIRE_CUBLAS=1
#              when cuBLAS loads, so its tests cannot skip)
#   bench      BenchmarkGPUGemm       TFLOP/s, F32 and BF16, PTX vs cuBLAS
#              BenchmarkGPUElementwise GB/s of an F32 add
#              BenchmarkGPUCopy       device copy GB/s (the ceiling for it)
#              BenchmarkGPUDemoEncoder ns/op: per-kernel vs graph replay
set -u
cd "$(dirname "$0")/../.." || exit 1
benchtime=${1:-2s}
out=${OUT:-gpu-check-results}
mkdir -p "$out"
export CGO_ENABLED=0 PATH=/usr/local/go/bin:$PATH
summary="$out/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU (nvidia-smi missing or sees none)" | tee "$summary"
	exit 0
fi
say "host: $(uname -a)"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -n1)"
say "go: $(go version)"
go run ./cmd/kiln info >"$out/info.txt" 2>&1
say "kiln info: $(grep -i '^cuda' "$out/info.txt" | head -n1)"

status=0
# stage NAME CMD...: runs CMD with its output in $out/NAME.log (and on
# the terminal), then one RESULT line.
stage() {
	local name=$1
	shift
	echo "=== $name ==="
	if "$@" 2>&1 | tee "$out/$name.log"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
		say "RESULT: $name ok"
	else
		say "RESULT: $name FAIL (see $out/$name.log)"
		status=1
	fi
}

stage build sh -c 'go build ./... && go vet ./driver/cuda/ ./ptx/...'

# cuBLAS tests must not skip where the library is installed.
require_cublas=0
if [ -n "${KILN_CUBLAS_LIB:-}" ] || ldconfig -p 2>/dev/null | grep -q 'libcublas\.so'; then
	require_cublas=1
fi
say "cuBLAS required by the tests: $require_cublas"
stage tests env KILN_TEST_REQUIRE_GPU=1 KILN_TEST_REQUIRE_CUBLAS=$require_cublas \
	go test -count=1 -v ./driver/cuda/ ./ptx/ ./ptx/emu/
grep -E -- '^\s*--- (FAIL|SKIP)' "$out/tests.log" | tee -a "$summary"

stage bench env KILN_TEST_REQUIRE_GPU=1 \
	go test -count=1 -run '^$' -bench 'GPU' -benchtime "$benchtime" ./driver/cuda/
grep -E '^Benchmark' "$out/bench.log" | tee -a "$summary"
exit $status
