package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Copy is a gather through an affine map (kdesc.Copy); Transpose,
// Slice, Split, Expand and Tile are copies. Buffers: out, in.
type Copy = kdesc.Copy

// EmitCopy writes a Copy, one thread per output element; elements move
// as raw storage values.
func EmitCopy(c *Copy) (*Kernel, error) {
	t, err := Storage(c.DType)
	if err != nil {
		return nil, err
	}
	if len(c.Strides) != len(c.Shape) || (c.Mods != nil && len(c.Mods) != len(c.Shape)) {
		return nil, fmt.Errorf("msl: %s: %d strides, %d mods for rank %d", c.Name, len(c.Strides), len(c.Mods), len(c.Shape))
	}
	n := product(c.Shape)
	if err := checkCount(c.Name, n); err != nil {
		return nil, err
	}
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "in", Type: t, Const: true}}
	var b strings.Builder
	b.WriteString(sig(c.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n", n)
	if c.Mods == nil {
		dims, st := Collapse(c.Shape, c.Strides)
		b.WriteString(offsetCode("    ", "gid", dims, st, []string{"o"}, []int{c.Base}))
	} else {
		fmt.Fprintf(&b, "    int o = %d;\n    int r = int(gid);\n", c.Base)
		for d := len(c.Shape) - 1; d >= 0; d-- {
			fmt.Fprintf(&b, "    { int x = r %% %d; r /= %d;", c.Shape[d], c.Shape[d])
			if c.Mods[d] > 0 {
				fmt.Fprintf(&b, " x %%= %d;", c.Mods[d])
			}
			fmt.Fprintf(&b, " o += x * %d; }\n", c.Strides[d])
		}
	}
	b.WriteString("    out[gid] = in[o];\n}\n")
	g, th := linear(n)
	return &Kernel{Name: c.Name, Source: b.String(), Buffers: bufs, Groups: g, Threads: th, Variant: "copy"}, nil
}

// Concat joins contiguous inputs along Axis. Buffers: out, in0, in1, ...
type Concat = kdesc.Concat

// EmitConcat writes one thread per output element choosing its input by
// the coordinate along Axis.
func EmitConcat(c *Concat) (*Kernel, error) {
	t, err := Storage(c.DType)
	if err != nil {
		return nil, err
	}
	n := product(c.Shape)
	if err := checkCount(c.Name, n); err != nil {
		return nil, err
	}
	if c.Axis < 0 || c.Axis >= len(c.Shape) {
		return nil, fmt.Errorf("msl: %s: axis %d of rank %d", c.Name, c.Axis, len(c.Shape))
	}
	total := 0
	for _, s := range c.Sizes {
		total += s
	}
	if total != c.Shape[c.Axis] {
		return nil, fmt.Errorf("msl: %s: sizes %v do not sum to %d", c.Name, c.Sizes, c.Shape[c.Axis])
	}
	inner := product(c.Shape[c.Axis+1:])
	bufs := []Buffer{{Name: "out", Type: t}}
	var b strings.Builder
	for i := range c.Sizes {
		bufs = append(bufs, Buffer{Name: fmt.Sprintf("in%d", i), Type: t, Const: true})
	}
	b.WriteString(sig(c.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n", n)
	fmt.Fprintf(&b, "    int i = int(gid) %% %d;\n    int r = int(gid) / %d;\n    int a = r %% %d;\n    int o = r / %d;\n",
		inner, inner, c.Shape[c.Axis], c.Shape[c.Axis])
	start := 0
	for k, s := range c.Sizes {
		if s == 0 {
			continue
		}
		fmt.Fprintf(&b, "    if (a >= %d && a < %d) { out[gid] = in%d[(o * %d + a - %d) * %d + i]; return; }\n", start, start+s, k, s, start, inner)
		start += s
	}
	b.WriteString("}\n")
	g, th := linear(n)
	return &Kernel{Name: c.Name, Source: b.String(), Buffers: bufs, Groups: g, Threads: th, Variant: "copy"}, nil
}

// Gather picks x[o, idx[j], i] for x viewed as [Outer, D, Inner] and
// indices of N elements; negative indices count from the end and an
// index out of range yields zero. Buffers: out, x, indices.
type Gather = kdesc.Gather

// EmitGather writes a Gather, one thread per output element.
func EmitGather(g *Gather) (*Kernel, error) {
	t, err := Storage(g.DType)
	if err != nil {
		return nil, err
	}
	if g.Index != tensor.I32 && g.Index != tensor.I64 {
		return nil, fmt.Errorf("msl: %s: index dtype %v", g.Name, g.Index)
	}
	it, _ := Storage(g.Index)
	n := g.Outer * g.N * g.Inner
	if err := checkCount(g.Name, n); err != nil {
		return nil, err
	}
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "x", Type: t, Const: true}, {Name: "idx", Type: it, Const: true}}
	var b strings.Builder
	b.WriteString(sig(g.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n", n)
	fmt.Fprintf(&b, "    int i = int(gid) %% %d;\n    int r = int(gid) / %d;\n    int j = r %% %d;\n    int o = r / %d;\n",
		g.Inner, g.Inner, g.N, g.N)
	fmt.Fprintf(&b, "    long k = long(idx[j]);\n    if (k < 0) { k += %d; }\n", g.D)
	fmt.Fprintf(&b, "    if (k < 0 || k >= %d) { out[gid] = %s(0); return; }\n", g.D, t)
	fmt.Fprintf(&b, "    out[gid] = x[(o * %d + int(k)) * %d + i];\n}\n", g.D, g.Inner)
	gr, th := linear(n)
	return &Kernel{Name: g.Name, Source: b.String(), Buffers: bufs, Groups: gr, Threads: th, Variant: "copy"}, nil
}

// Pad pads a contiguous input by Begins on each dim (the ends follow
// from Out). Buffers: out, x.
type Pad = kdesc.Pad

// EmitPad writes a Pad; the coordinate mapping is PadSource's.
func EmitPad(p *Pad) (*Kernel, error) {
	t, err := Storage(p.DType)
	if err != nil {
		return nil, err
	}
	if len(p.In) != len(p.Out) || len(p.Begins) != len(p.In) {
		return nil, fmt.Errorf("msl: %s: ranks %d, %d, %d", p.Name, len(p.In), len(p.Out), len(p.Begins))
	}
	n := product(p.Out)
	if err := checkCount(p.Name, n); err != nil {
		return nil, err
	}
	ist := tensor.Shape(p.In).Strides()
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "x", Type: t, Const: true}}
	var b strings.Builder
	b.WriteString(sig(p.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n    int r = int(gid);\n    int o = 0;\n    bool inside = true;\n", n)
	for d := len(p.Out) - 1; d >= 0; d-- {
		m := p.In[d]
		fmt.Fprintf(&b, "    { int c = r %% %d - %d; r /= %d;\n", p.Out[d], p.Begins[d], p.Out[d])
		switch p.Mode {
		case graph.PadReflect:
			if m == 1 {
				b.WriteString("      c = 0;\n")
			} else {
				fmt.Fprintf(&b, "      c %%= %d; if (c < 0) { c += %d; } if (c >= %d) { c = %d - c; }\n", 2*(m-1), 2*(m-1), m, 2*(m-1))
			}
		case graph.PadEdge:
			fmt.Fprintf(&b, "      c = clamp(c, 0, %d);\n", m-1)
		default:
			fmt.Fprintf(&b, "      if (c < 0 || c >= %d) { inside = false; }\n", m)
		}
		fmt.Fprintf(&b, "      o += c * %d; }\n", ist[d])
	}
	val := store(p.DType, flit(p.Value))
	if !isFloat(p.DType) && p.DType != tensor.Bool {
		val = store(p.DType, "rint("+flit(p.Value)+")")
	}
	fmt.Fprintf(&b, "    out[gid] = inside ? x[o] : %s;\n}\n", val)
	gr, th := linear(n)
	return &Kernel{Name: p.Name, Source: b.String(), Buffers: bufs, Groups: gr, Threads: th, Variant: "copy"}, nil
}
