package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/internal/kdesc"
)

// Attention describes softmax(Q·Kᵀ·Scale + mask)·V (kdesc.Attention).
// Buffers: out, q, k, v, [mask].
type Attention = kdesc.Attention

// Mask kinds of Attention.
const (
	MaskNone = kdesc.MaskNone
	MaskAdd  = kdesc.MaskAdd
	MaskBool = kdesc.MaskBool
)

// EmitAttention writes flash-style attention: one simdgroup per (query,
// head, batch) streams the keys once with an online softmax (running
// max and sum, accumulator rescaled), so no row of scores is stored and
// SK is unbounded. Lanes split D for the dot product (simd_sum) and DV
// for the accumulator. A query whose keys are all masked yields NaN, as
// the CPU reference and the spelled-out softmax do.
func EmitAttention(a *Attention) (*Kernel, error) {
	if !isFloat(a.DType) {
		return nil, fmt.Errorf("msl: %s: attention of %v", a.Name, a.DType)
	}
	if a.HK <= 0 || a.H%a.HK != 0 || a.D <= 0 || a.DV <= 0 {
		return nil, fmt.Errorf("msl: %s: %d heads over %d kv heads, D %d, DV %d", a.Name, a.H, a.HK, a.D, a.DV)
	}
	if a.Mask != MaskNone && len(a.MaskStrides) != 4 {
		return nil, fmt.Errorf("msl: %s: mask strides %v", a.Name, a.MaskStrides)
	}
	if err := checkCount(a.Name, a.B*a.H*max(a.SQ*a.D, a.SK*a.D, a.SQ*a.SK)); err != nil {
		return nil, err
	}
	t, _ := Storage(a.DType)
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "q", Type: t, Const: true}, {Name: "k", Type: t, Const: true}, {Name: "v", Type: t, Const: true}}
	switch a.Mask {
	case MaskAdd:
		bufs = append(bufs, Buffer{Name: "mask", Type: t, Const: true})
	case MaskBool:
		bufs = append(bufs, Buffer{Name: "mask", Type: "uchar", Const: true})
	}
	if a.KVLen {
		bufs = append(bufs, Buffer{Name: "kvlen", Type: "long", Const: true})
	}
	scale := a.Scale
	if scale == 0 {
		scale = float32(1 / sqrt64(float64(a.D)))
	}
	nq, na := CeilDiv(a.D, SimdWidth), CeilDiv(a.DV, SimdWidth)
	var b strings.Builder
	b.WriteString(sig(a.Name, bufs, attrGroup, attrLane))
	b.WriteString("{\n")
	fmt.Fprintf(&b, "    int i = int(grp.x), h = int(grp.y), bi = int(grp.z);\n")
	fmt.Fprintf(&b, "    if (i >= %d || h >= %d || bi >= %d) { return; }\n", a.SQ, a.H, a.B)
	fmt.Fprintf(&b, "    int kvh = bi * %d + h / %d;\n", a.HK, a.H/a.HK)
	fmt.Fprintf(&b, "    int qo = ((bi * %d + h) * %d + i) * %d;\n", a.H, a.SQ, a.D)
	fmt.Fprintf(&b, "    float qv[%d];\n    for (int t = 0; t < %d; t++) { int d = int(lane) + t * 32; qv[t] = d < %d ? %s : 0.0f; }\n",
		nq, nq, a.D, load(a.DType, "q[qo + d]"))
	fmt.Fprintf(&b, "    float acc[%d];\n    for (int t = 0; t < %d; t++) { acc[t] = 0.0f; }\n", na, na)
	b.WriteString("    float m = -INFINITY, l = 0.0f;\n")
	// n is the count of keys in use: SK, or the batch's KVLen clamped to
	// [0, SK], read at run time; causality aligns to it.
	if a.KVLen {
		fmt.Fprintf(&b, "    long nl = kvlen[bi];\n    int n = nl < 0 ? 0 : (nl > %d ? %d : int(nl));\n", a.SK, a.SK)
	} else {
		fmt.Fprintf(&b, "    int n = %d;\n", a.SK)
	}
	last := "n"
	if a.Causal {
		last = fmt.Sprintf("min(n, i + n - %d)", a.SQ-1)
	}
	fmt.Fprintf(&b, "    for (int j = 0; j < %s; j++) {\n", last)
	if a.Mask != MaskNone {
		ms := a.MaskStrides
		fmt.Fprintf(&b, "        int mo = bi * %d + h * %d + i * %d + j * %d;\n", ms[0], ms[1], ms[2], ms[3])
		if a.Mask == MaskBool {
			b.WriteString("        if (mask[mo] == 0) { continue; }\n")
		}
	}
	fmt.Fprintf(&b, "        int ko = (kvh * %d + j) * %d;\n        float s = 0.0f;\n", a.SK, a.D)
	fmt.Fprintf(&b, "        for (int t = 0; t < %d; t++) { int d = int(lane) + t * 32; if (d < %d) { s += qv[t] * %s; } }\n", nq, a.D, load(a.DType, "k[ko + d]"))
	fmt.Fprintf(&b, "        s = simd_sum(s) * %s;\n", flit(scale))
	if a.Mask == MaskAdd {
		fmt.Fprintf(&b, "        s += %s;\n", load(a.DType, "mask[mo]"))
	}
	b.WriteString("        if (s == -INFINITY) { continue; }\n")
	b.WriteString("        float mn = max(m, s);\n        float corr = exp(m - mn);\n        float p = exp(s - mn);\n        l = l * corr + p;\n        m = mn;\n")
	fmt.Fprintf(&b, "        int vo = (kvh * %d + j) * %d;\n", a.SK, a.DV)
	fmt.Fprintf(&b, "        for (int t = 0; t < %d; t++) { int d = int(lane) + t * 32; float x = d < %d ? %s : 0.0f; acc[t] = acc[t] * corr + p * x; }\n    }\n",
		na, a.DV, load(a.DType, "v[vo + d]"))
	fmt.Fprintf(&b, "    int oo = ((bi * %d + h) * %d + i) * %d;\n", a.H, a.SQ, a.DV)
	// A row that saw no key divides 0 by 0: NaN, as the spelled-out
	// softmax gives; only SK = 0 (nothing to attend to) gives zeros.
	result := "(n == 0 ? 0.0f : acc[t] / l)"
	if a.SK == 0 {
		result = "0.0f"
	}
	fmt.Fprintf(&b, "    for (int t = 0; t < %d; t++) { int d = int(lane) + t * 32; if (d < %d) { out[oo + d] = %s; } }\n}\n",
		na, a.DV, store(a.DType, result))
	return &Kernel{Name: a.Name, Source: b.String(), Buffers: bufs, Groups: [3]int{a.SQ, a.H, a.B}, Threads: [3]int{SimdWidth, 1, 1}, Variant: "flash"}, nil
}
