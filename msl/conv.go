package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Conv describes Conv2D of x [N, C, H, W] with w [M, C/Groups, KH, KW],
// optionally + bias [M], then Act and + Res (laid out like out, FusedConv2D).
// Buffers: out, x, w, [bias], [res].
type Conv struct {
	Name           string
	DType          tensor.DType
	N, C, H, W     int
	M, KH, KW      int
	OH, OW         int
	SH, SW, PT, PL int // strides, top and left padding
	DH, DW         int // dilations
	Groups         int
	Bias           bool
	Act            graph.Op // OpInvalid for none
	Res            bool
}

// ConvSource is the input (row, column) output cell (oy, ox) reads at
// window tap (ky, kx), and whether it lies inside the input (outside is
// padding, which contributes nothing): the arithmetic EmitConv writes.
func (c *Conv) ConvSource(oy, ox, ky, kx int) (iy, ix int, ok bool) {
	iy, ix = oy*c.SH-c.PT+ky*c.DH, ox*c.SW-c.PL+kx*c.DW
	return iy, ix, iy >= 0 && iy < c.H && ix >= 0 && ix < c.W
}

// EmitConv writes a direct convolution (an implicit GEMM with one output
// per thread: the K loop runs over the group's channels and the window,
// skipping padding), then the epilogue.
func EmitConv(c *Conv) (*Kernel, error) {
	if !isFloat(c.DType) {
		return nil, fmt.Errorf("msl: %s: conv of %v", c.Name, c.DType)
	}
	if c.Groups < 1 || c.C%c.Groups != 0 || c.M%c.Groups != 0 || min(c.SH, c.SW, c.DH, c.DW) < 1 {
		return nil, fmt.Errorf("msl: %s: groups %d, channels %d→%d, strides %d,%d, dilations %d,%d", c.Name, c.Groups, c.C, c.M, c.SH, c.SW, c.DH, c.DW)
	}
	n := c.N * c.M * c.OH * c.OW
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
	fmt.Fprintf(&b, "    int ox = int(gid) %% %d, r = int(gid) / %d;\n    int oy = r %% %d; r /= %d;\n    int m = r %% %d, bn = r / %d;\n",
		c.OW, c.OW, c.OH, c.OH, c.M, c.M)
	fmt.Fprintf(&b, "    int c0 = m / %d * %d;\n    float s = 0.0f;\n", mpg, cpg)
	fmt.Fprintf(&b, "    for (int ci = 0; ci < %d; ci++) {\n", cpg)
	fmt.Fprintf(&b, "        int xb = (bn * %d + c0 + ci) * %d;\n        int wb = (m * %d + ci) * %d;\n", c.C, c.H*c.W, cpg, c.KH*c.KW)
	fmt.Fprintf(&b, "        for (int ky = 0; ky < %d; ky++) {\n            int iy = oy * %d - %d + ky * %d;\n            if (iy < 0 || iy >= %d) { continue; }\n",
		c.KH, c.SH, c.PT, c.DH, c.H)
	fmt.Fprintf(&b, "            for (int kx = 0; kx < %d; kx++) {\n                int ix = ox * %d - %d + kx * %d;\n                if (ix < 0 || ix >= %d) { continue; }\n",
		c.KW, c.SW, c.PL, c.DW, c.W)
	fmt.Fprintf(&b, "                s += %s * %s;\n            }\n        }\n    }\n", load(c.DType, fmt.Sprintf("x[xb + iy * %d + ix]", c.W)), load(c.DType, fmt.Sprintf("w[wb + ky * %d + kx]", c.KW)))
	if c.Bias {
		fmt.Fprintf(&b, "    s += %s;\n", load(c.DType, "bias[m]"))
	}
	if c.Act != graph.OpInvalid {
		x, err := floatUnary(c.Act, "s", graph.Attrs{})
		if err != nil {
			return nil, fmt.Errorf("msl: %s: %w", c.Name, err)
		}
		fmt.Fprintf(&b, "    s = %s;\n", x)
	}
	if c.Res {
		fmt.Fprintf(&b, "    s += %s;\n", load(c.DType, "res[gid]"))
	}
	fmt.Fprintf(&b, "    out[gid] = %s;\n}\n", store(c.DType, "s"))
	g, th := linear(n)
	return &Kernel{Name: c.Name, Source: b.String(), Buffers: bufs, Groups: g, Threads: th, Variant: "direct"}, nil
}

// ConvOf describes a Conv2D or FusedConv2D node.
func ConvOf(name string, n *graph.Node) (*Conv, error) {
	x, w := n.Inputs[0].Shape, n.Inputs[1].Shape
	a := n.Attrs
	if x.Rank() != 4 || w.Rank() != 4 || n.Shape.Rank() != 4 || len(a.Strides) != 2 || len(a.Pads) != 4 || len(a.Dilations) != 2 {
		return nil, fmt.Errorf("msl: %s: conv of %v by %v with strides %v pads %v dilations %v", n, x, w, a.Strides, a.Pads, a.Dilations)
	}
	c := &Conv{Name: name, DType: n.DType, N: x[0], C: x[1], H: x[2], W: x[3], M: w[0], KH: w[2], KW: w[3],
		OH: n.Shape[2], OW: n.Shape[3], SH: a.Strides[0], SW: a.Strides[1], PT: a.Pads[0], PL: a.Pads[1],
		DH: a.Dilations[0], DW: a.Dilations[1], Groups: max(a.Groups, 1)}
	extra := len(n.Inputs) - 2
	if n.Op == graph.OpFusedConv2D {
		e := a.Epilogue
		c.Bias, c.Act, c.Res = e.Bias, e.Act, e.Residual
		if extra != e.Inputs() {
			return nil, fmt.Errorf("msl: %s: epilogue %+v with %d extra inputs", n, e, extra)
		}
	} else {
		c.Bias = extra == 1
	}
	for _, in := range n.Inputs {
		if in.DType != n.DType {
			return nil, fmt.Errorf("msl: %s: input %s is not %v", n, in, n.DType)
		}
	}
	return c, nil
}
