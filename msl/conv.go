package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
)

// Conv describes Conv2D of x [N, C, H, W] with w [M, C/Groups, KH, KW],
// optionally + bias [M], then Act, + Res and PostAct (kdesc.Conv).
// Buffers: out, x, w, [bias], [res].
type Conv = kdesc.Conv

// EmitConv writes a direct convolution (an implicit GEMM with one output
// per thread: the K loop runs over the group's channels and the window,
// a padding cell a zero the weight multiplies), then the epilogue. A pooled output (Pool) is the max
// of its 2×2 block's four finished conv outputs, a NaN winning as in
// EmitPool.
func EmitConv(c *Conv) (*Kernel, error) {
	if !isFloat(c.DType) {
		return nil, fmt.Errorf("msl: %s: conv of %v", c.Name, c.DType)
	}
	if c.Groups < 1 || c.C%c.Groups != 0 || c.M%c.Groups != 0 || min(c.SH, c.SW, c.DH, c.DW) < 1 {
		return nil, fmt.Errorf("msl: %s: groups %d, channels %d→%d, strides %d,%d, dilations %d,%d", c.Name, c.Groups, c.C, c.M, c.SH, c.SW, c.DH, c.DW)
	}
	if c.Pool && (c.Res || c.OH < 2 || c.OW < 2) {
		return nil, fmt.Errorf("msl: %s: a 2×2 pool of a %d×%d conv output (residual %v)", c.Name, c.OH, c.OW, c.Res)
	}
	oh, ow := c.OutHW()
	n := c.N * c.M * oh * ow
	if err := checkCount(c.Name, max(n, c.N*c.C*c.H*c.W)); err != nil {
		return nil, err
	}
	t, _ := Storage(c.DType)
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "x", Type: t, Const: true}, {Name: "w", Type: t, Const: true}}
	if c.Bias {
		bufs = append(bufs, Buffer{Name: "bias", Type: t, Const: true})
	}
	if c.Res {
		bufs = append(bufs, Buffer{Name: "res", Type: t, Const: true})
	}
	cpg, mpg := c.C/c.Groups, c.M/c.Groups
	var b strings.Builder
	b.WriteString(sig(c.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n", n)
	// (py, px) is the thread's output; the conv output (oy, ox) is it or,
	// pooled, each of its 2×2 block in turn.
	fmt.Fprintf(&b, "    int px = int(gid) %% %d, r = int(gid) / %d;\n    int py = r %% %d; r /= %d;\n    int m = r %% %d, bn = r / %d;\n",
		ow, ow, oh, oh, c.M, c.M)
	fmt.Fprintf(&b, "    int c0 = m / %d * %d;\n", mpg, cpg)
	if c.Pool {
		b.WriteString("    float best = -INFINITY;\n    for (int d = 0; d < 4; d++) {\n    int oy = py * 2 + d / 2, ox = px * 2 + d % 2;\n")
	} else {
		b.WriteString("    int oy = py, ox = px;\n")
	}
	b.WriteString("    float s = 0.0f;\n")
	fmt.Fprintf(&b, "    for (int ci = 0; ci < %d; ci++) {\n", cpg)
	fmt.Fprintf(&b, "        int xb = (bn * %d + c0 + ci) * %d;\n        int wb = (m * %d + ci) * %d;\n", c.C, c.H*c.W, cpg, c.KH*c.KW)
	// A padding cell is a zero the weight multiplies (0·NaN is NaN, as
	// the CPU kernels and the reference compute it).
	fmt.Fprintf(&b, "        for (int ky = 0; ky < %d; ky++) {\n            int iy = oy * %d - %d + ky * %d;\n            bool rowIn = iy >= 0 && iy < %d;\n",
		c.KH, c.SH, c.PT, c.DH, c.H)
	fmt.Fprintf(&b, "            for (int kx = 0; kx < %d; kx++) {\n                int ix = ox * %d - %d + kx * %d;\n                float xv = rowIn && ix >= 0 && ix < %d ? %s : 0.0f;\n",
		c.KW, c.SW, c.PL, c.DW, c.W, load(c.DType, fmt.Sprintf("x[xb + iy * %d + ix]", c.W)))
	fmt.Fprintf(&b, "                s += xv * %s;\n            }\n        }\n    }\n", load(c.DType, fmt.Sprintf("w[wb + ky * %d + kx]", c.KW)))
	if c.Bias {
		fmt.Fprintf(&b, "    s += %s;\n", load(c.DType, "bias[m]"))
	}
	if c.Act != graph.OpInvalid {
		x, err := floatUnary(c.Act, "s", c.ActAttrs)
		if err != nil {
			return nil, fmt.Errorf("msl: %s: %w", c.Name, err)
		}
		fmt.Fprintf(&b, "    s = %s;\n", x)
	}
	if c.Res {
		fmt.Fprintf(&b, "    s += %s;\n", load(c.DType, "res[gid]"))
	}
	if c.PostAct != graph.OpInvalid {
		if !c.Res {
			return nil, fmt.Errorf("msl: %s: a post-residual %v without a residual", c.Name, c.PostAct)
		}
		x, err := floatUnary(c.PostAct, "s", graph.Attrs{})
		if err != nil {
			return nil, fmt.Errorf("msl: %s: %w", c.Name, err)
		}
		fmt.Fprintf(&b, "    s = %s;\n", x)
	}
	res := "s"
	if c.Pool {
		b.WriteString("    if (kiln_isnan(s) || s > best) { best = s; }\n    }\n")
		res = "best"
	}
	fmt.Fprintf(&b, "    out[gid] = %s;\n}\n", store(c.DType, res))
	g, th := linear(n)
	return &Kernel{Name: c.Name, Source: b.String(), Buffers: bufs, Groups: g, Threads: th, Variant: "direct"}, nil
}
