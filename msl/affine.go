package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/internal/kdesc"
)

// BatchNorm is inference batch normalisation (kdesc.BatchNorm).
// Buffers: out, x, scale, bias, mean, var.
type BatchNorm = kdesc.BatchNorm

// EmitBatchNorm writes one thread per element reading its channel's
// four parameters; it divides by sqrt(var + eps) as the CPU reference
// does (rsqrt would round differently).
func EmitBatchNorm(bn *BatchNorm) (*Kernel, error) {
	if !isFloat(bn.DType) {
		return nil, fmt.Errorf("msl: %s: batch norm of %v", bn.Name, bn.DType)
	}
	n := bn.N * bn.C * bn.Spatial
	if err := checkCount(bn.Name, n); err != nil {
		return nil, err
	}
	t, _ := Storage(bn.DType)
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "x", Type: t, Const: true}}
	for _, nm := range []string{"scale", "bias", "mean", "var"} {
		bufs = append(bufs, Buffer{Name: nm, Type: t, Const: true})
	}
	ld := func(b string) string { return load(bn.DType, b+"[c]") }
	var b strings.Builder
	b.WriteString(sig(bn.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n    int c = int(gid) / %d %% %d;\n", n, bn.Spatial, bn.C)
	fmt.Fprintf(&b, "    float y = (%s - %s) / sqrt(%s + %s) * %s + %s;\n", load(bn.DType, "x[gid]"), ld("mean"), ld("var"), flit(bn.Eps), ld("scale"), ld("bias"))
	fmt.Fprintf(&b, "    out[gid] = %s;\n}\n", store(bn.DType, "y"))
	g, th := linear(n)
	return &Kernel{Name: bn.Name, Source: b.String(), Buffers: bufs, Groups: g, Threads: th, Variant: "elementwise"}, nil
}

// RoPE is the rotary embedding (kdesc.RoPE). Buffers: out, x, cos_t, sin_t (cos and sin).
type RoPE = kdesc.RoPE

// EmitRoPE writes one thread per rotated pair (kdesc.RoPE.Pair), which
// reads both elements before writing either, so out may alias x.
func EmitRoPE(r *RoPE) (*Kernel, error) {
	if !isFloat(r.DType) || r.Seq < 1 {
		return nil, fmt.Errorf("msl: %s: rope of %v over %d positions", r.Name, r.DType, r.Seq)
	}
	n := r.Rows * r.Half
	if err := checkCount(r.Name, 2*n); err != nil {
		return nil, err
	}
	t, _ := Storage(r.DType)
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "x", Type: t, Const: true}, {Name: "cos_t", Type: t, Const: true}, {Name: "sin_t", Type: t, Const: true}}
	pair := fmt.Sprintf("i, i + %d", r.Half)
	if r.Interleaved {
		pair = "2 * i, 2 * i + 1"
	}
	var b strings.Builder
	b.WriteString(sig(r.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n", n)
	fmt.Fprintf(&b, "    int i = int(gid) %% %d, row = int(gid) / %d;\n    int cs = row %% %d * %d + i;\n", r.Half, r.Half, r.Seq, r.Half)
	fmt.Fprintf(&b, "    int2 ab = int2(%s) + row * %d;\n", pair, 2*r.Half)
	fmt.Fprintf(&b, "    float a = %s, b = %s;\n", load(r.DType, "x[ab.x]"), load(r.DType, "x[ab.y]"))
	fmt.Fprintf(&b, "    float c = %s, s = %s;\n", load(r.DType, "cos_t[cs]"), load(r.DType, "sin_t[cs]"))
	fmt.Fprintf(&b, "    out[ab.x] = %s;\n    out[ab.y] = %s;\n}\n", store(r.DType, "a * c - b * s"), store(r.DType, "b * c + a * s"))
	g, th := linear(n)
	return &Kernel{Name: r.Name, Source: b.String(), Buffers: bufs, Groups: g, Threads: th, Variant: "pairs"}, nil
}
