package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/internal/kdesc"
)

// Softmax is (Log)Softmax over one axis (kdesc.Softmax). Buffers: out, x.
type Softmax = kdesc.Softmax

// EmitSoftmax writes one threadgroup per row (a position on every other
// axis): max, then the sum of exponentials, with simdgroup reductions.
func EmitSoftmax(s *Softmax) (*Kernel, error) {
	if !isFloat(s.DType) || s.Axis < 0 || s.Axis >= len(s.Shape) {
		return nil, fmt.Errorf("msl: %s: softmax of %v over axis %d of %v", s.Name, s.DType, s.Axis, s.Shape)
	}
	if err := checkCount(s.Name, product(s.Shape)); err != nil {
		return nil, err
	}
	t, _ := Storage(s.DType)
	l, inner := s.Shape[s.Axis], product(s.Shape[s.Axis+1:])
	rows := product(s.Shape) / max(l, 1)
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "x", Type: t, Const: true}}
	nt := rowThreads(l)
	var b strings.Builder
	b.WriteString(sig(s.Name, bufs, attrGroup, attrTid))
	b.WriteString("{\n    threadgroup float sh[32];\n    uint row = grp.x;\n")
	fmt.Fprintf(&b, "    if (row >= %du) { return; }\n", rows)
	fmt.Fprintf(&b, "    int base = int(row / %du) * %d + int(row %% %du);\n", inner, l*inner, inner)
	fmt.Fprintf(&b, "    float m = -INFINITY;\n    for (uint j = tid; j < %du; j += %du) { m = max(m, %s); }\n", l, nt, load(s.DType, fmt.Sprintf("x[base + int(j) * %d]", inner)))
	fmt.Fprintf(&b, "    m = kiln_tg_max(m, sh, tid, %du);\n", nt)
	fmt.Fprintf(&b, "    float sum = 0.0f;\n    for (uint j = tid; j < %du; j += %du) { sum += exp(%s - m); }\n", l, nt, load(s.DType, fmt.Sprintf("x[base + int(j) * %d]", inner)))
	fmt.Fprintf(&b, "    sum = kiln_tg_sum(sum, sh, tid, %du);\n", nt)
	y := "exp(v - m) / sum"
	if s.Log {
		y = "v - m - log(sum)"
	}
	fmt.Fprintf(&b, "    for (uint j = tid; j < %du; j += %du) {\n        int o = base + int(j) * %d;\n        float v = %s;\n        out[o] = %s;\n    }\n}\n",
		l, nt, inner, load(s.DType, "x[o]"), store(s.DType, y))
	return &Kernel{Name: s.Name, Source: b.String(), Buffers: bufs, Groups: [3]int{rows, 1, 1}, Threads: [3]int{nt, 1, 1}, Variant: "simdgroup"}, nil
}

// Norm is LayerNorm or RMSNorm, optionally of x + residual, or
// InstanceNorm (kdesc.Norm with Channels). Buffers: out, x, [residual],
// [scale], [bias].
type Norm = kdesc.Norm

// EmitNorm writes one threadgroup per row: mean (LayerNorm) then the
// mean square of the centred values, both with simdgroup reductions.
func EmitNorm(n *Norm) (*Kernel, error) {
	if !isFloat(n.DType) || n.Axis < 0 || n.Axis > len(n.Shape) {
		return nil, fmt.Errorf("msl: %s: norm of %v from axis %d of %v", n.Name, n.DType, n.Axis, n.Shape)
	}
	if n.Residual && len(n.ResStrides) != len(n.Shape) {
		return nil, fmt.Errorf("msl: %s: %d residual strides for rank %d", n.Name, len(n.ResStrides), len(n.Shape))
	}
	if err := checkCount(n.Name, product(n.Shape)); err != nil {
		return nil, err
	}
	t, _ := Storage(n.DType)
	l := product(n.Shape[n.Axis:])
	rows := product(n.Shape[:n.Axis])
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "x", Type: t, Const: true}}
	if n.Residual {
		bufs = append(bufs, Buffer{Name: "res", Type: t, Const: true})
	}
	if n.Scale {
		bufs = append(bufs, Buffer{Name: "scale", Type: t, Const: true})
	}
	if n.Bias {
		bufs = append(bufs, Buffer{Name: "bias", Type: t, Const: true})
	}
	nt := rowThreads(l)
	// val writes statements declaring float v = x (+ residual) at row*l+j.
	val := func(ind string) string {
		s := ind + "int i = int(row) * " + fmt.Sprint(l) + " + int(j);\n"
		s += ind + "float v = " + load(n.DType, "x[i]") + ";\n"
		if n.Residual {
			dims, st := Collapse(n.Shape, n.ResStrides)
			s += offsetCode(ind, "i", dims, st, []string{"ro"}, nil)
			s += ind + "v += " + load(n.DType, "res[ro]") + ";\n"
		}
		return s
	}
	var b strings.Builder
	b.WriteString(sig(n.Name, bufs, attrGroup, attrTid))
	b.WriteString("{\n    threadgroup float sh[32];\n    uint row = grp.x;\n")
	fmt.Fprintf(&b, "    if (row >= %du) { return; }\n", rows)
	b.WriteString("    float mean = 0.0f;\n")
	if !n.RMS {
		fmt.Fprintf(&b, "    for (uint j = tid; j < %du; j += %du) {\n%s        mean += v;\n    }\n", l, nt, val("        "))
		fmt.Fprintf(&b, "    mean = kiln_tg_sum(mean, sh, tid, %du) / %s;\n", nt, flit(float32(l)))
	}
	fmt.Fprintf(&b, "    float sq = 0.0f;\n    for (uint j = tid; j < %du; j += %du) {\n%s        sq += (v - mean) * (v - mean);\n    }\n", l, nt, val("        "))
	fmt.Fprintf(&b, "    float inv = rsqrt(kiln_tg_sum(sq, sh, tid, %du) / %s + %s);\n", nt, flit(float32(l)), flit(n.Eps))
	fmt.Fprintf(&b, "    for (uint j = tid; j < %du; j += %du) {\n%s        float y = (v - mean) * inv;\n", l, nt, val("        "))
	at := "j" // scale and bias per element, or per channel (InstanceNorm)
	if n.Channels > 0 {
		at = fmt.Sprintf("row %% %du", n.Channels)
	}
	if n.Scale {
		fmt.Fprintf(&b, "        y *= %s;\n", load(n.DType, "scale["+at+"]"))
	}
	if n.Bias {
		fmt.Fprintf(&b, "        y += %s;\n", load(n.DType, "bias["+at+"]"))
	}
	fmt.Fprintf(&b, "        out[i] = %s;\n    }\n}\n", store(n.DType, "y"))
	return &Kernel{Name: n.Name, Source: b.String(), Buffers: bufs, Groups: [3]int{rows, 1, 1}, Threads: [3]int{nt, 1, 1}, Variant: "simdgroup"}, nil
}
