#!/usr/bin/env bash
# gpu-check.sh: check the CUDA backend on a machine with an NVIDIA GPU
# (sm_80 or newer) against the CPU reference, and measure it.
#
#   bash driver/cuda/gpu-check.sh [benchtime]        build here and run (needs Go)
#   bash driver/cuda/gpu-check.sh build DIR          build DIR/cuda.test and DIR/kiln
#   bash driver/cuda/gpu-check.sh run DIR [benchtime] run prebuilt binaries (no Go)
#
# GPU machines often have no Go toolchain: build on any linux/amd64
# machine, copy the checkout with DIR (and bench/onnx/models, made by
# bench/onnx/compare.sh, for the model stages), and run there.
# Results go to $OUT when set, else ./gpu-check-results: one log per
# stage and summary.txt (the header and one RESULT line per stage).
# Without a GPU it prints "SKIP: <reason>" and exits 0.
#
# Stages:
#   tests      driver/cuda's tests with KILN_TEST_REQUIRE_GPU=1 (a skipped
#              GPU test fails): every op, the demo encoder and the ONNX
#              test models on CUDA against the CPU, the graph model
#              (replay = per-kernel run, RunInPlace allocation-free), step
#              timing, GPU handles (TestGPUHandle*: a decode with the KV
#              cache on the device, no cache byte crossing the bus, also
#              under graph replay; TestGPUDecoderGraphReplay: the demo
#              decoder's decode step replayed from a CUDA graph matches
#              its per-kernel step, 8 bytes in and the logits out), the MoE
#              residency split (TestGPUMoESplit: masks all/none/mixed per
#              layer against the CPU, stats and capture equal, device bytes
#              = the resident experts'), cuBLAS (KILN_TEST_REQUIRE_CUBLAS=1
#              when it loads), and the model zoo against the CPU when KILN_ZOO names it
#              (onnx/testdata/export_zoo.py DIR; TestGPUZoo)
#   matrix     internal/conformance's TestBackendOpMatrix with its cuda
#              column: every catalogue op's cases lowered for CUDA and run
#              on the GPU against the reference (and the cpu and ptx-emu
#              columns beside it)
#   models     for each bench/onnx/models set present: kiln run (outputs
#              kept), kiln bench --device cuda and --steps 20
#   decoder    kiln demo -model decoder -device cuda (small with its check
#              against the interpreter, then 100m): prefill ms, decode
#              tokens/s, host↔device bytes per step; kiln generate on the
#              Hugging Face fixtures (internal/decode/testdata/hf_*) on
#              cuda, its ids compared with the CPU's
#   torch      bench/gpu/torch_gpu.py: eager PyTorch on the same models and
#              kiln's outputs against torch's (when python3 has torch)
#   bench      BenchmarkGPUGemm (TFLOP/s, F32 and BF16, PTX vs cuBLAS),
#              BenchmarkGPUElementwise and BenchmarkGPUCopy (GB/s),
#              BenchmarkGPUDemoEncoder (per-kernel vs graph replay),
#              BenchmarkGPUDecoder (decode tokens/s of the small demo
#              decoder, per-kernel launches vs graph replay per token),
#              BenchmarkGPUMoESplit (forward ms of a 2-layer E=8 k=2 MoE
#              model, 128 tokens, with 8, 4, 1 and 0 experts per layer
#              resident: the host's share of the split, and devMiB)
#   sanitizer  compute-sanitizer racecheck and memcheck over the op and
#              model tests (when compute-sanitizer is installed)
set -u
cd "$(dirname "$0")/../.." || exit 1
root=$PWD

build() {
	mkdir -p "$1" || exit 1
	CGO_ENABLED=0 go test -c -o "$1/cuda.test" ./driver/cuda &&
		CGO_ENABLED=0 go test -c -o "$1/conformance.test" ./internal/conformance &&
		CGO_ENABLED=0 go build -o "$1/kiln" ./cmd/kiln
}

case "${1:-}" in
build)
	[ -n "${2:-}" ] || { echo "usage: gpu-check.sh build DIR" >&2; exit 2; }
	build "$2"
	exit
	;;
run)
	[ -n "${2:-}" ] || { echo "usage: gpu-check.sh run DIR [benchtime]" >&2; exit 2; }
	bin=$(cd "$2" && pwd)
	benchtime=${3:-1s}
	;;
*)
	bin=$(mktemp -d)
	benchtime=${1:-1s}
	build "$bin" || exit 1
	;;
esac

out=${OUT:-gpu-check-results}
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary="$out/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU (nvidia-smi missing or sees none)" | tee "$summary"
	exit 0
fi
# cuBLAS: the system's, else the one pip installs beside PyTorch.
if [ -z "${KILN_CUBLAS_LIB:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcublas\.so'; then
	lib=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null)
	lib=$(ls "$lib"/nvidia/cu*/lib/libcublas.so.1* "$lib"/nvidia/cublas/lib/libcublas.so.1* 2>/dev/null | head -n1)
	[ -n "$lib" ] && export KILN_CUBLAS_LIB=$lib
fi
require_cublas=0
if [ -n "${KILN_CUBLAS_LIB:-}" ] || ldconfig -p 2>/dev/null | grep -q 'libcublas\.so'; then
	require_cublas=1
fi
say "host: $(uname -a)"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -n1)"
"$bin/kiln" info >"$out/info.txt" 2>&1
say "kiln info: $(grep -i '^cuda' "$out/info.txt" | tr '\n' ' ')"
say "cuBLAS required by the tests: $require_cublas ${KILN_CUBLAS_LIB:+($KILN_CUBLAS_LIB)}"

status=0
# stage NAME CMD...: runs CMD with its output in $out/NAME.log, then one
# RESULT line.
stage() {
	local name=$1
	shift
	echo "=== $name ==="
	if "$@" >>"$out/$name.log" 2>&1; then
		say "RESULT: $name ok"
	else
		say "RESULT: $name FAIL (see $out/$name.log)"
		status=1
	fi
}
cudatest() {
	(cd "$root/driver/cuda" && KILN_TEST_REQUIRE_GPU=1 KILN_TEST_REQUIRE_CUBLAS=$require_cublas "$bin/cuda.test" "$@")
}

stage tests cudatest -test.count=1 -test.v
grep -E -- '^\s*--- (FAIL|SKIP)' "$out/tests.log" | tee -a "$summary"

matrix() {
	(cd "$root/internal/conformance" && KILN_TEST_REQUIRE_GPU=1 "$bin/conformance.test" -test.count=1 -test.v \
		-test.run 'TestBackendOpMatrix/(cpu|ptx-emu|cuda)$')
}
stage matrix matrix
grep -E 'cuda: |ops × ' "$out/matrix.log" | tee -a "$summary"

models() {
	local set dir ins f n
	for set in "$root"/bench/onnx/models/*/*/; do
		[ -d "$set" ] || continue
		dir=$(dirname "$set")
		n=$(basename "$dir")-$(basename "$set")
		ins=()
		for f in "$set"in_*.npy; do
			ins+=(--input "$(basename "$f" .npy | sed 's/^in_//')=$f")
		done
		echo "== $n"
		"$bin/kiln" run "$dir/model.onnx" --device cuda "${ins[@]}" --output "$out/outputs/$n" >/dev/null || return 1
		"$bin/kiln" bench "$dir/model.onnx" --device cuda "${ins[@]}" --runs 200 --warmup 20 --progress off || return 1
		"$bin/kiln" bench "$dir/model.onnx" --device cuda "${ins[@]}" --runs 50 --warmup 5 --steps 20 --progress off || return 1
	done
}
stage models models
grep -E '^== |^latency' "$out/models.log" | tee -a "$summary"

# decoder: the demo decoder on the GPU (rates and the host↔device bytes
# per decode step), and kiln generate on the Hugging Face fixtures, whose
# ids must be the CPU's.
decoder() {
	local kind cpu gpu dir
	"$bin/kiln" demo -model decoder -device cuda || return 1
	"$bin/kiln" demo -model decoder -size 100m -device cuda -check=false || return 1
	for kind in llama qwen2; do
		dir=$root/internal/decode/testdata/hf_$kind
		echo "== generate hf_$kind"
		cpu=$("$bin/kiln" generate "$dir" --prompt-ids 3,1,4,1,5 --max-new-tokens 8 | grep '^generated ids') || return 1
		gpu=$("$bin/kiln" generate "$dir" --prompt-ids 3,1,4,1,5 --max-new-tokens 8 --device cuda | tee /dev/stderr | grep '^generated ids') || return 1
		echo "cpu: $cpu; cuda: $gpu"
		[ "$cpu" = "$gpu" ] || return 1
	done
}
stage decoder decoder
grep -E '^kiln demo|^prefill|^decode |^host↔device|^cpu: ' "$out/decoder.log" | tee -a "$summary"

if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	stage torch python3 "$root/bench/gpu/torch_gpu.py" "$out/outputs"
	grep '^{' "$out/torch.log" | tee -a "$summary"
fi

stage bench cudatest -test.count=1 -test.run '^$' -test.bench GPU -test.benchtime "$benchtime"
grep -E '^Benchmark' "$out/bench.log" | tee -a "$summary"

sanitize() {
	(cd "$root/driver/cuda" && KILN_TEST_REQUIRE_GPU=1 compute-sanitizer --tool "$1" --error-exitcode 1 \
		"$bin/cuda.test" -test.count=1 -test.run 'TestGPUOps|TestGPUONNXModels') &&
		(cd "$root/internal/conformance" && KILN_TEST_REQUIRE_GPU=1 compute-sanitizer --tool "$1" --error-exitcode 1 \
			"$bin/conformance.test" -test.count=1 -test.run 'TestBackendOpMatrix/cuda$')
}
if command -v compute-sanitizer >/dev/null 2>&1; then
	for tool in racecheck memcheck; do
		stage "$tool" sanitize "$tool"
	done
fi
exit $status
