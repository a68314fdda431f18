#!/usr/bin/env bash
# Elementwise kernel throughput against copy() of the same bytes, single
# threaded, at 1 Ki, 64 Ki and 16 Mi float32s (ops/asm's BenchmarkEw*).
# Every benchmark counts the bytes it reads and writes, so the ratio to
# BenchmarkEwCopy at the same size is the fraction of copy bandwidth (the
# issue's target for large ops: at least 0.8). Prints medians over COUNT
# runs, since shared machines are noisy.
#
#   bench/elementwise.sh                       # the assembly variants
#   VARIANT=go COUNT=3 bench/elementwise.sh    # the Go twins (<= 64 Ki)
#   OPS='exp|gelu|add' bench/elementwise.sh    # some kernels only
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-200ms}
VARIANT=${VARIANT:-avx2|avx512|neon}
OPS=${OPS:-.*}

echo "# $(go version); $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | xargs || uname -m)"
echo "# KILN_CPU=${KILN_CPU:-} count=$COUNT benchtime=$BENCHTIME"
# Copy and the kernels alternate run by run, so that load on a shared
# machine hits both alike.
for ((i = 0; i < COUNT; i++)); do
	go test -run '^$' -bench '^BenchmarkEwCopy$' -benchtime "$BENCHTIME" ./ops/asm/
	go test -run '^$' -bench "^BenchmarkEw(Unary|Binary)\$/^($OPS)\$/^($VARIANT)\$" -benchtime "$BENCHTIME" ./ops/asm/
done |
awk '
/^BenchmarkEw/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkEw/, "", name)
	for (i = 2; i <= NF; i++) if ($i == "MB/s") mbs = $(i-1)
	n[name]++; v[name, n[name]] = mbs
}
function median(k,   m, i, j, t, a) {
	m = n[k]
	for (i = 1; i <= m; i++) a[i] = v[k, i]
	for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j+1] = a[j]; a[j+1] = t }
	return (m % 2) ? a[(m+1)/2] : (a[m/2] + a[m/2+1]) / 2
}
END {
	printf "%-28s %6s %10s %10s %8s\n", "kernel", "size", "GB/s", "copy GB/s", "ratio"
	cnt = 0
	for (k in n) if (k !~ /^Copy\//) keys[++cnt] = k
	# sort by name
	for (i = 2; i <= cnt; i++) { t = keys[i]; for (j = i - 1; j >= 1 && keys[j] > t; j--) keys[j+1] = keys[j]; keys[j+1] = t }
	for (i = 1; i <= cnt; i++) {
		k = keys[i]; s = k; sub(/.*\//, "", s)   # size
		kern = k; sub(/\/[^\/]*$/, "", kern); sub(/^(Unary|Binary)\//, "", kern)
		c = (("Copy/" s) in n) ? median("Copy/" s) : 0
		g = median(k)
		printf "%-28s %6s %10.1f %10.1f %8.2f\n", kern, s, g/1000, c/1000, c ? g/c : 0
	}
}'
