#!/bin/sh
# Side-by-side SGEMM: kiln (ops/asm), OpenBLAS (Debian numpy) and gonum
# (pure Go, its own module under gonum/) on the same shapes, 1 and 2
# threads, in one run. The tools take turns for ROUNDS rounds so that
# load from other processes hits all of them alike; the table gives the
# median (and best) GFLOP/s over every window, and the ratios.
#
#   bench/gemm/compare.sh                 # all shapes, 3 rounds
#   ROUNDS=5 SHAPES=sq1024:1024x1024x1024 bench/gemm/compare.sh
#
# OpenBLAS runs with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, so it
# picks its kernel for this CPU itself. Before each round's two-thread
# runs bench/cores says where the host runs two threads (a VM's two vCPUs
# may share one core, whose FMA units two threads then split); its lines
# follow the cpu line.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-"1 2"}
BUDGET=${BUDGET:-0.3}
WINDOWS=${WINDOWS:-7}
SHAPES=${SHAPES:-sq64:64x64x64,sq128:128x128x128,sq256:256x256x256,sq512:512x512x512,sq1024:1024x1024x1024,sq2048:2048x2048x2048,up_M128_K384_N1536:128x384x1536,down_M128_K1536_N384:128x1536x384,decode_M1_K384_N1536:1x384x1536}
PY=${PY:-/usr/bin/python3}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/kiln" ./bench/gemm/kiln && go build -o "$tmp/cores" ./bench/cores)
(cd "$here/gonum" && go build -o "$tmp/gonum" .)

out="$tmp/lines"
: >"$out"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for t in $THREADS; do
		echo "round $r/$ROUNDS, $t thread(s)" >&2
		# where the host runs two threads this round (bench/cores)
		[ "$t" = 1 ] || "$tmp/cores" | "$PY" -c 'import json,sys; p=json.load(sys.stdin); print("round %s: %s core(s), two-thread FMAs %.2f of one, line round trip %.0f ns" % (sys.argv[1], p["cores"], p["fma_ratio"], p["rtt_ns"]))' "$r" >>"$tmp/cores.txt" || true
		"$tmp/kiln" -threads "$t" -shapes "$SHAPES" -budget "${BUDGET}s" -windows "$WINDOWS" >>"$out"
		env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS="$t" \
			"$PY" "$here/openblas.py" "$SHAPES" "$BUDGET" "$WINDOWS" >>"$out"
		GOMAXPROCS="$t" "$tmp/gonum" -shapes "$SHAPES" -budget "${BUDGET}s" -windows "$WINDOWS" >>"$out"
	done
	r=$((r + 1))
done
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) logical CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
[ ! -s "$tmp/cores.txt" ] || cat "$tmp/cores.txt"
"$PY" "$here/table.py" <"$out"
