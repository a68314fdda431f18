package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/internal/kdesc"
)

// Pool is MaxPool2D or AvgPool2D (kdesc.Pool). Buffers: out, x.
type Pool = kdesc.Pool

// EmitPool writes one thread per output cell scanning the real cells of
// its window (kdesc.Window.Span): padding never wins a max, and a NaN
// does (as the CPU's max); a mean sums in float and divides by the
// window size when CountPad, else by the real cells (kdesc.Pool.Divisor).
func EmitPool(p *Pool) (*Kernel, error) {
	if !isFloat(p.DType) || p.DH != 1 || p.DW != 1 || min(p.SH, p.SW, p.KH, p.KW) < 1 {
		return nil, fmt.Errorf("msl: %s: pool of %v, window %dx%d, strides %d,%d, dilations %d,%d", p.Name, p.DType, p.KH, p.KW, p.SH, p.SW, p.DH, p.DW)
	}
	n := p.N * p.C * p.OH * p.OW
	if err := checkCount(p.Name, max(n, p.N*p.C*p.H*p.W)); err != nil {
		return nil, err
	}
	t, _ := Storage(p.DType)
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "x", Type: t, Const: true}}
	var b strings.Builder
	b.WriteString(sig(p.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n", n)
	fmt.Fprintf(&b, "    int ox = int(gid) %% %d, r = int(gid) / %d;\n    int oy = r %% %d, xb = r / %d * %d;\n", p.OW, p.OW, p.OH, p.OH, p.H*p.W)
	fmt.Fprintf(&b, "    int y0 = oy * %d - %d, x0 = ox * %d - %d;\n", p.SH, p.PT, p.SW, p.PL)
	fmt.Fprintf(&b, "    int y1 = min(y0 + %d, %d), x1 = min(x0 + %d, %d);\n    y0 = max(y0, 0); x0 = max(x0, 0);\n", p.KH, p.H, p.KW, p.W)
	fmt.Fprintf(&b, "    float acc = %s;\n", map[bool]string{true: "-INFINITY", false: "0.0f"}[p.Max])
	fmt.Fprintf(&b, "    for (int iy = y0; iy < y1; iy++) {\n        for (int ix = x0; ix < x1; ix++) {\n            float v = %s;\n", load(p.DType, fmt.Sprintf("x[xb + iy * %d + ix]", p.W)))
	if p.Max {
		b.WriteString("            if (kiln_isnan(v) || v > acc) { acc = v; }\n        }\n    }\n")
	} else {
		b.WriteString("            acc += v;\n        }\n    }\n")
		div := "float(max(y1 - y0, 0) * max(x1 - x0, 0))"
		if p.CountPad {
			div = flit(float32(p.KH * p.KW))
		}
		fmt.Fprintf(&b, "    acc /= %s;\n", div)
	}
	fmt.Fprintf(&b, "    out[gid] = %s;\n}\n", store(p.DType, "acc"))
	g, th := linear(n)
	return &Kernel{Name: p.Name, Source: b.String(), Buffers: bufs, Groups: g, Threads: th, Variant: "window"}, nil
}
