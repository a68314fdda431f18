#!/bin/sh
# mac-check.sh: run on a Mac (Apple silicon or an AMD GPU with Metal) to
# check the Metal backend against the CPU reference and measure it.
#
#   sh driver/metal/mac-check.sh [benchtime]      (from the repo root)
#
# Off darwin it prints "SKIP: <reason>" and exits 0; the results format
# is documented in doc.go ("mac-check.sh results"). Paste the whole
# output back into the issue.
set -u
if [ "$(uname -s)" != "Darwin" ]; then
	echo "SKIP: Metal needs macOS; this is $(uname -s)"
	exit 0
fi
cd "$(dirname "$0")/../.." || exit 1
benchtime=${1:-2s}
status=0
log=$(mktemp "${TMPDIR:-/tmp}/kiln-mac-check.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
echo "host: $(uname -a)"
echo "gpu: $(system_profiler SPDisplaysDataType 2>/dev/null | awk -F': ' '/Chipset Model/ {print $2; exit}')"
echo "go: $(go version)"

# stage NAME CMD...: runs CMD, shows its output (also kept in $log for
# the summary lines) and prints RESULT: NAME ok|FAIL.
stage() {
	name=$1
	shift
	echo "### stage $name"
	"$@" >"$log" 2>&1
	rc=$?
	cat "$log"
	if [ $rc -eq 0 ]; then
		echo "RESULT: $name ok"
	else
		echo "RESULT: $name FAIL (exit $rc)"; status=1
	fi
}

stage build sh -c 'CGO_ENABLED=0 go build ./... && CGO_ENABLED=0 go vet ./driver/metal/ ./msl/ ./internal/kdesc/'

# Every Metal test (each compared with the CPU reference; no skips
# allowed), the MSL structure and host tests, the front door's pipelining.
export CGO_ENABLED=0 KILN_TEST_REQUIRE_METAL=1
stage tests go test -count=1 -v ./msl/ ./internal/kdesc/ ./driver/metal/
echo "ops: $(grep -c '^    --- PASS: TestMetalOps/' "$log") op families pass, $(grep -c '^    --- FAIL: TestMetalOps/' "$log") fail"

# The pipelined snapshot path alone: commits in flight through
# metal.Program and through kiln.CompiledGraph, plus the front door's
# bookkeeping on a fake queue device.
stage pipelined sh -c 'go test -count=1 -v -run "TestMetalPipelined|TestMetalCompiledPipelined" ./driver/metal/; a=$?
	go test -count=1 -v -run "TestCommitNoWait|TestRunPipelined" .; b=$?
	[ $a -eq 0 ] && [ $b -eq 0 ]'

stage benchmarks go test -count=1 -run '^$' -bench . -benchtime "$benchtime" ./driver/metal/
exit $status
