#!/bin/sh
# mac-check.sh: run on a Mac (Apple silicon or an AMD GPU with Metal) to
# check the Metal backend against the CPU reference and measure it.
#
#   sh driver/metal/mac-check.sh [benchtime]      (from the repo root)
#
# Off darwin it prints "SKIP: <reason>" and exits 0.
#
# Results format (paste the whole output back into the issue): one
# "key: value" header block, then the raw go test output of each stage
# between "=== <stage> ===" lines, then one "RESULT:" line per stage:
#
#   host: <uname -a>
#   gpu: <system_profiler chipset model line>
#   go: <go version>
#   === build (CGO_ENABLED=0) ===   ... RESULT: build ok|FAIL
#   === tests ===                   go test -v of every Metal test, each
#                                   compared with the CPU reference
#                                   (KILN_TEST_REQUIRE_METAL=1: no skips)
#                                   ... RESULT: tests ok|FAIL
#   === benchmarks ===              BenchmarkGEMM/<n>x<n>x<n> ... GFLOP/s,
#                                   BenchmarkDemoEncoder ... ns/op (latency),
#                                   BenchmarkPipelined/{synchronous,pipelined-3}
#                                   ... ns/run
#                                   ... RESULT: benchmarks ok|FAIL
set -u
if [ "$(uname -s)" != "Darwin" ]; then
	echo "SKIP: Metal needs macOS; this is $(uname -s)"
	exit 0
fi
cd "$(dirname "$0")/../.." || exit 1
benchtime=${1:-2s}
status=0
echo "host: $(uname -a)"
echo "gpu: $(system_profiler SPDisplaysDataType 2>/dev/null | awk -F': ' '/Chipset Model/ {print $2; exit}')"
echo "go: $(go version)"

echo "=== build (CGO_ENABLED=0) ==="
if CGO_ENABLED=0 go build ./... && CGO_ENABLED=0 go vet ./driver/metal/ ./msl/; then
	echo "RESULT: build ok"
else
	echo "RESULT: build FAIL"; status=1
fi

echo "=== tests ==="
if CGO_ENABLED=0 KILN_TEST_REQUIRE_METAL=1 go test -count=1 -v ./msl/ ./driver/metal/; then
	echo "RESULT: tests ok"
else
	echo "RESULT: tests FAIL"; status=1
fi

echo "=== benchmarks ==="
if CGO_ENABLED=0 KILN_TEST_REQUIRE_METAL=1 go test -count=1 -run '^$' -bench . -benchtime "$benchtime" ./driver/metal/; then
	echo "RESULT: benchmarks ok"
else
	echo "RESULT: benchmarks FAIL"; status=1
fi
exit $status
