package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// CumSum is the running sum along an axis (kdesc.CumSum). Buffers: out, x.
type CumSum = kdesc.CumSum

// Arg is ArgMax or ArgMin along an axis (kdesc.Arg). Buffers: out (long),
// x.
type Arg = kdesc.Arg

// lineCode declares int base, the offset of line gid's first element.
func lineCode(l kdesc.Lines) string {
	return fmt.Sprintf("    int base = int(gid) / %d * %d + int(gid) %% %d;\n", l.Inner, l.Size*l.Inner, l.Inner)
}

// EmitCumSum writes one thread per line walking it in order, so the sum
// accumulates in the same order as the CPU reference (in float for float
// dtypes, in long for integers, which then wrap to the dtype as Go's
// conversion does). Each element is read before its output is written,
// so out may alias x.
func EmitCumSum(c *CumSum) (*Kernel, error) {
	t, err := Storage(c.DType)
	if err != nil || c.DType == tensor.Bool {
		return nil, fmt.Errorf("msl: %s: cumsum of %v", c.Name, c.DType)
	}
	n := c.Count()
	if err := checkCount(c.Name, n*c.Size); err != nil {
		return nil, err
	}
	acc := "long"
	if isFloat(c.DType) {
		acc = "float"
	}
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "x", Type: t, Const: true}}
	k := "s"
	if c.Reverse {
		k = fmt.Sprintf("%d - s", c.Size-1)
	}
	step := "acc += v;\n        out[j] = " + store(c.DType, "acc") + ";"
	if c.Exclusive {
		step = "out[j] = " + store(c.DType, "acc") + ";\n        acc += v;"
	}
	var b strings.Builder
	b.WriteString(sig(c.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n%s", n, lineCode(c.Lines))
	fmt.Fprintf(&b, "    %s acc = 0;\n    for (int s = 0; s < %d; s++) {\n", acc, c.Size)
	fmt.Fprintf(&b, "        int j = base + (%s) * %d;\n        %s v = %s(%s);\n        %s\n    }\n}\n", k, c.Inner, acc, acc, load(c.DType, "x[j]"), step)
	g, th := linear(n)
	return &Kernel{Name: c.Name, Source: b.String(), Buffers: bufs, Groups: g, Threads: th, Variant: "serial"}, nil
}

// EmitArg writes one thread per line keeping the first index of the
// extreme: a later element replaces it only when strictly greater
// (smaller), and the first NaN wins and ends the search (numpy).
func EmitArg(a *Arg) (*Kernel, error) {
	t, err := Storage(a.DType)
	if err != nil || a.DType == tensor.Bool {
		return nil, fmt.Errorf("msl: %s: %v of %v", a.Name, argOp(a.Max), a.DType)
	}
	n := a.Count()
	if err := checkCount(a.Name, n*a.Size); err != nil {
		return nil, err
	}
	if a.Size < 1 {
		return nil, fmt.Errorf("msl: %s: %v over an empty axis", a.Name, argOp(a.Max))
	}
	cmp := "<"
	if a.Max {
		cmp = ">"
	}
	live, better := "k < "+fmt.Sprint(a.Size), "v "+cmp+" bv"
	if isFloat(a.DType) {
		live += " && !kiln_isnan(bv)"
		better = "kiln_isnan(v) || " + better
	}
	ct := compute(a.DType)
	bufs := []Buffer{{Name: "out", Type: "long"}, {Name: "x", Type: t, Const: true}}
	var b strings.Builder
	b.WriteString(sig(a.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n%s", n, lineCode(a.Lines))
	fmt.Fprintf(&b, "    long best = 0;\n    %s bv = %s;\n", ct, load(a.DType, "x[base]"))
	fmt.Fprintf(&b, "    for (int k = 1; %s; k++) {\n        %s v = %s;\n", live, ct, load(a.DType, fmt.Sprintf("x[base + k * %d]", a.Inner)))
	fmt.Fprintf(&b, "        if (%s) { best = k; bv = v; }\n    }\n    out[gid] = best;\n}\n", better)
	g, th := linear(n)
	return &Kernel{Name: a.Name, Source: b.String(), Buffers: bufs, Groups: g, Threads: th, Variant: "serial"}, nil
}

func argOp(isMax bool) graph.Op {
	if isMax {
		return graph.OpArgMax
	}
	return graph.OpArgMin
}
