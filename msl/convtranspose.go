package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/internal/kdesc"
)

// ConvTranspose is the transposed convolution of x [N, C, In...] (1 to 3
// spatial axes) with w [C, M/Groups, Kernel...], + bias [M] when Bias
// (kdesc.ConvTranspose). Buffers: out, x, w, [bias].
type ConvTranspose = kdesc.ConvTranspose

// EmitConvTranspose writes a transposed convolution as a gather, one
// output element per thread, as ptx.EmitConvTranspose: on each axis,
// tap k is taken from input cell (o + pad − k·dilation) / stride when
// that is whole and inside the input (kdesc.ConvTranspose.Reach); the
// float sum runs taps outer (axis by axis, ascending) and the group's
// input channels inner, then + bias[m]. No two threads write one cell.
func EmitConvTranspose(c *ConvTranspose) (*Kernel, error) {
	if !isFloat(c.DType) {
		return nil, fmt.Errorf("msl: %s: transposed conv of %v", c.Name, c.DType)
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("msl: %w", err)
	}
	sp, in, kern := c.Spatial(), c.In[2:], c.Kernel
	inSz, kSz := product(in), product(kern)
	ch, cpg, mpg := c.In[1], c.In[1]/c.Groups, c.M/c.Groups
	n := product(c.Out)
	if err := checkCount(c.Name, max(n, product(c.In), ch*mpg*kSz)); err != nil {
		return nil, err
	}
	t, _ := Storage(c.DType)
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "x", Type: t, Const: true}, {Name: "w", Type: t, Const: true}}
	if c.Bias {
		bufs = append(bufs, Buffer{Name: "bias", Type: t, Const: true})
	}
	var b strings.Builder
	b.WriteString(sig(c.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n    int r = int(gid);\n", n)
	for a := sp - 1; a >= 0; a-- {
		fmt.Fprintf(&b, "    int o%d = r %% %d; r /= %d;\n", a, c.Out[2+a], c.Out[2+a])
	}
	fmt.Fprintf(&b, "    int m = r %% %d, bn = r / %d;\n    int g = m / %d, mm = m %% %d;\n", c.M, c.M, mpg, mpg)
	fmt.Fprintf(&b, "    int xb = (bn * %d + g * %d) * %d, wb = (g * %d + mm) * %d;\n", ch, cpg, inSz, cpg*mpg, kSz)
	b.WriteString("    float s = 0.0f;\n")
	ind := "    "
	for a := range sp {
		fmt.Fprintf(&b, "%sfor (int k%d = 0; k%d < %d; k%d++) {\n", ind, a, a, kern[a], a)
		ind += "    "
		// t < 0 or past the reach: no input cell lands here from tap k.
		fmt.Fprintf(&b, "%sint t%d = o%d + %d - k%d * %d;\n", ind, a, a, c.Pads[a], a, c.Dilations[a])
		cond := fmt.Sprintf("t%d < 0 || t%d >= %d", a, a, c.Reach(a))
		if s := c.Strides[a]; s > 1 {
			cond += fmt.Sprintf(" || t%d %% %d != 0", a, s)
		}
		fmt.Fprintf(&b, "%sif (%s) { continue; }\n", ind, cond)
		xo, wo := "0", "0"
		if a > 0 {
			xo, wo = fmt.Sprintf("x%d * %d", a-1, in[a]), fmt.Sprintf("w%d * %d", a-1, kern[a])
		}
		fmt.Fprintf(&b, "%sint x%d = %s + t%d / %d, w%d = %s + k%d;\n", ind, a, xo, a, c.Strides[a], a, wo, a)
	}
	fmt.Fprintf(&b, "%sfor (int ci = 0; ci < %d; ci++) {\n", ind, cpg)
	fmt.Fprintf(&b, "%s    s += %s * %s;\n%s}\n", ind,
		load(c.DType, fmt.Sprintf("x[xb + ci * %d + x%d]", inSz, sp-1)),
		load(c.DType, fmt.Sprintf("w[wb + ci * %d + w%d]", mpg*kSz, sp-1)), ind)
	for range sp {
		ind = ind[4:]
		fmt.Fprintf(&b, "%s}\n", ind)
	}
	if c.Bias {
		fmt.Fprintf(&b, "    s += %s;\n", load(c.DType, "bias[m]"))
	}
	fmt.Fprintf(&b, "    out[gid] = %s;\n}\n", store(c.DType, "s"))
	g, th := linear(n)
	return &Kernel{Name: c.Name, Source: b.String(), Buffers: bufs, Groups: g, Threads: th, Variant: "gather"}, nil
}
