package msl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Reduce is ReduceSum/Mean/Max/Min/Prod of a contiguous float input
// (kdesc.Reduce). Buffers: out, x.
type Reduce = kdesc.Reduce

// rowThreads is the threadgroup size for rows of n elements: a multiple
// of the simd width, at most 256.
func rowThreads(n int) int {
	return min(256, max(SimdWidth, CeilDiv(n, SimdWidth)*SimdWidth))
}

// EmitReduce writes a Reduce: one threadgroup per output element; its
// threads stride over the reduced elements and combine with simd_* and
// a threadgroup exchange. Max and Min propagate NaN, as the reference
// does, by testing for it (MSL's max and simd_max leave NaN undefined).
func EmitReduce(r *Reduce) (*Kernel, error) {
	if !isFloat(r.DType) {
		return nil, fmt.Errorf("msl: %s: reductions of %v are not supported on Metal", r.Name, r.DType)
	}
	t, _ := Storage(r.DType)
	var kept, red, kst, rst []int
	st := tensor.Shape(r.Shape).Strides()
	for d, n := range r.Shape {
		if slices.Contains(r.Axes, d) {
			red, rst = append(red, n), append(rst, st[d])
		} else {
			kept, kst = append(kept, n), append(kst, st[d])
		}
	}
	outs, rn := product(kept), product(red)
	if err := checkCount(r.Name, product(r.Shape)); err != nil {
		return nil, err
	}
	fn, ident, comb := "kiln_tg_sum", "0.0f", "acc += v;"
	switch r.Op {
	case graph.OpReduceSum, graph.OpReduceMean:
	case graph.OpReduceMax: // NaN wins, as in the reference: Metal's max need not keep it
		fn, ident, comb = "kiln_tg_max", "(-INFINITY)", "if (kiln_isnan(v) || v > acc) { acc = v; }"
	case graph.OpReduceMin:
		fn, ident, comb = "kiln_tg_min", "INFINITY", "if (kiln_isnan(v) || v < acc) { acc = v; }"
	case graph.OpReduceProd:
		fn, ident, comb = "kiln_tg_prod", "1.0f", "acc *= v;"
	default:
		return nil, fmt.Errorf("msl: %s: %v is not a reduction", r.Name, r.Op)
	}
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "x", Type: t, Const: true}}
	nt := rowThreads(rn)
	kd, ks := Collapse(kept, kst)
	rd, rs := Collapse(red, rst)
	var b strings.Builder
	b.WriteString(sig(r.Name, bufs, attrGroup, attrTid))
	b.WriteString("{\n    threadgroup float sh[32];\n    uint row = grp.x;\n")
	fmt.Fprintf(&b, "    if (row >= %du) { return; }\n", outs)
	b.WriteString(offsetCode("    ", "row", kd, ks, []string{"base"}, nil))
	fmt.Fprintf(&b, "    float acc = %s;\n", ident)
	fmt.Fprintf(&b, "    for (uint j = tid; j < %du; j += %du) {\n", rn, nt)
	b.WriteString(offsetCode("        ", "j", rd, rs, []string{"o"}, nil))
	fmt.Fprintf(&b, "        float v = %s;\n        %s\n    }\n", load(r.DType, "x[base + o]"), comb)
	nan := r.Op == graph.OpReduceMax || r.Op == graph.OpReduceMin
	if nan { // simd_max and simd_min leave NaN undefined: count it apart
		fmt.Fprintf(&b, "    float nans = kiln_tg_max(kiln_isnan(acc) ? 1.0f : 0.0f, sh, tid, %du);\n", nt)
	}
	fmt.Fprintf(&b, "    acc = %s(acc, sh, tid, %du);\n", fn, nt)
	if nan {
		b.WriteString("    if (nans > 0.0f) { acc = NAN; }\n")
	}
	if r.Op == graph.OpReduceMean {
		fmt.Fprintf(&b, "    acc /= %s;\n", flit(float32(rn)))
	}
	fmt.Fprintf(&b, "    if (tid == 0u) { out[row] = %s; }\n}\n", store(r.DType, "acc"))
	return &Kernel{Name: r.Name, Source: b.String(), Buffers: bufs, Groups: [3]int{outs, 1, 1}, Threads: [3]int{nt, 1, 1}, Variant: "simdgroup"}, nil
}
