package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// TopK is kdesc.TopK. Buffers: out (K per line: values, or long indices),
// x.
type TopK = kdesc.TopK

// EmitTopK writes one thread per line making K passes over it, pass r
// picking the element that comes first, in TopK's order, among those
// after pass r-1's pick. The order is strict on (value, index), so the
// passes need no scratch.
func EmitTopK(d *TopK) (*Kernel, error) {
	t, err := Storage(d.DType)
	if err != nil || d.DType == tensor.Bool {
		return nil, fmt.Errorf("msl: %s: TopK of %v", d.Name, d.DType)
	}
	n := d.Count()
	if err := checkCount(d.Name, n*d.Size); err != nil {
		return nil, err
	}
	// greater is a > b with NaN above every number.
	greater := func(a, b string) string {
		if isFloat(d.DType) {
			return fmt.Sprintf("(%s > %s || (kiln_isnan(%s) && !kiln_isnan(%s)))", a, b, a, b)
		}
		return a + " > " + b
	}
	// before: (a, ia) comes before (b, ib) in the output.
	before := func(a, ia, b, ib string) string {
		first, eq := greater(a, b), a+" == "+b
		if d.Smallest {
			first = greater(b, a)
		}
		if isFloat(d.DType) {
			eq = fmt.Sprintf("%s || (kiln_isnan(%s) && kiln_isnan(%s))", eq, a, b)
		}
		return fmt.Sprintf("(%s || ((%s) && %s < %s))", first, eq, ia, ib)
	}
	ct, ot, res := compute(d.DType), t, store(d.DType, "bv")
	if d.Indices {
		ot, res = "long", "long(bi)"
	}
	bufs := []Buffer{{Name: "out", Type: ot}, {Name: "x", Type: t, Const: true}}
	var b strings.Builder
	b.WriteString(sig(d.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n%s", n, lineCode(d.Lines))
	fmt.Fprintf(&b, "    int obase = int(gid) / %d * %d + int(gid) %% %d;\n", d.Inner, d.K*d.Inner, d.Inner)
	fmt.Fprintf(&b, "    bool had = false;\n    %s pv = 0;\n    int pi = 0;\n", ct)
	fmt.Fprintf(&b, "    for (int r = 0; r < %d; r++) {\n        bool have = false;\n        %s bv = 0;\n        int bi = 0;\n", d.K, ct)
	fmt.Fprintf(&b, "        for (int j = 0; j < %d; j++) {\n            %s v = %s;\n", d.Size, ct, load(d.DType, fmt.Sprintf("x[base + j * %d]", d.Inner)))
	fmt.Fprintf(&b, "            if ((!had || %s) && (!have || %s)) { have = true; bv = v; bi = j; }\n        }\n",
		before("pv", "pi", "v", "j"), before("v", "j", "bv", "bi"))
	fmt.Fprintf(&b, "        out[obase + r * %d] = %s;\n        had = true;\n        pv = bv;\n        pi = bi;\n    }\n}\n", d.Inner, res)
	g, th := linear(n)
	return &Kernel{Name: d.Name, Source: b.String(), Buffers: bufs, Groups: g, Threads: th, Variant: "serial"}, nil
}
