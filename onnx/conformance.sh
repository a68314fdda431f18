#!/usr/bin/env bash
# Runs ONNX's own node test suite through kiln.
#
#   onnx/conformance.sh [-md] [DIR]
#
# Generates the cases with Debian's python3-onnx (1.12; needs python3-onnx
# and python3-numpy) into DIR (default: a temporary directory; an existing
# DIR/node is reused), then runs TestConformance on them: every case whose
# ops kiln maps must pass, the rest are reported as unsupported. With -md,
# onnx/CONFORMANCE.md is rewritten with the per-op table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
md=
if [ "${1:-}" = -md ]; then md=1; shift; fi
dir=${1:-}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if [ -z "$dir" ]; then dir=$scratch/suite; fi
if [ ! -d "$dir/node" ]; then
  echo "generating ONNX node test cases into $dir"
  /usr/bin/python3 "$here/testdata/gen_conformance.py" "$dir" >/dev/null
fi
table=$scratch/table.md
cd "$here"
KILN_ONNX_CONFORMANCE="$dir" KILN_ONNX_CONFORMANCE_MD="$table" go test -count=1 -run '^TestConformance$' .
cat "$table"
if [ -n "$md" ]; then
  onnxv=$(/usr/bin/python3 -c 'import onnx; print(onnx.__version__)')
  {
    cat <<MD
# ONNX conformance

kiln against the node test suite of onnx $onnxv (Debian's python3-onnx),
generated and run by \`onnx/conformance.sh\` (\`go test -run TestConformance\`
with \`KILN_ONNX_CONFORMANCE\` pointing at the generated cases). Outputs
are compared as ONNX's backend tests do: |got − want| ≤ 1e-7 + 1e-3·|want|
for floats (one ulp for bfloat16), exact for integers and bools.

- **pass / fail**: cases whose ops and dtypes kiln maps; every one must pass.
- **unsupported**: an op kiln does not map, a feature of a mapped op it
  lacks (training outputs, ...), a dtype
  it lacks (strings, unsigned 16-64 bit), or an opset below 11 whose ops
  changed since.
- **bad data**: onnx 1.12's CastLike-to/from-bfloat16 cases declare a
  \`like\` input of shape [3 4] and store one of shape [1].
- **frozen inputs**: the suite passes shape-like arguments (Reshape's
  shape, Slice's starts, CumSum's axis) as graph inputs; kiln's shapes are
  static, so these cases bind them at import with \`onnx.WithInputValue\`.
- **lifted opset**: the suite writes each case at its op's own opset (Sin
  at 7); where the op is unchanged up to opset 11, the case runs at 11.

A small subset (one case per op) is committed under onnx/testdata/node and
runs with \`go test ./onnx/\`.

MD
    cat "$table"
  } >"$here/CONFORMANCE.md"
  echo "wrote $here/CONFORMANCE.md"
fi
