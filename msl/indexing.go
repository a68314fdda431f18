package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Indexing is GatherElements or GatherND, one thread per output element;
// as with Gather, an index out of range yields zero (the CPU's run-time
// error is the check). The scatters (kdesc.Scatter) are not lowered:
// duplicate indices must be applied in order. Buffers: out, x, idx.
type Indexing = kdesc.Indexing

// EmitIndexing writes a GatherElements or GatherND kernel.
func EmitIndexing(g *Indexing) (*Kernel, error) {
	t, err := Storage(g.DType)
	if err != nil {
		return nil, err
	}
	if g.Index != tensor.I32 && g.Index != tensor.I64 {
		return nil, fmt.Errorf("msl: %s: index dtype %v", g.Name, g.Index)
	}
	it, _ := Storage(g.Index)
	q := len(g.Indices)
	outDims := g.Indices
	if g.Op == graph.OpGatherND {
		outDims = append(append([]int(nil), g.Indices[:q-1]...), g.Data[g.BatchDims+g.Indices[q-1]:]...)
	}
	n := product(outDims)
	if err := checkCount(g.Name, n); err != nil {
		return nil, err
	}
	bufs := []Buffer{{Name: "out", Type: t}, {Name: "x", Type: t, Const: true}, {Name: "idx", Type: it, Const: true}}
	var b strings.Builder
	b.WriteString(sig(g.Name, bufs, attrGid))
	fmt.Fprintf(&b, "{\n    if (gid >= %du) { return; }\n    long src = 0;\n    bool bad = false;\n", n)
	// index loads k from idx[pos] and folds it into src with stride, or
	// marks the element bad.
	index := func(pos string, d, stride int) {
		fmt.Fprintf(&b, "    {\n        long k = long(idx[%s]);\n        if (k < 0) { k += %d; }\n", pos, d)
		fmt.Fprintf(&b, "        bad = bad || k < 0 || k >= %d;\n        src += k * %d;\n    }\n", d, stride)
	}
	if g.Op == graph.OpGatherElements {
		xs := tensor.Shape(g.Data).Strides()
		b.WriteString("    long rest = long(gid);\n")
		for d := len(g.Indices) - 1; d >= 0; d-- {
			fmt.Fprintf(&b, "    long c%d = rest %% %d;\n    rest /= %d;\n", d, g.Indices[d], g.Indices[d])
			if d != g.Axis {
				fmt.Fprintf(&b, "    src += c%d * %d;\n", d, xs[d])
			}
		}
		index("gid", g.Data[g.Axis], xs[g.Axis])
	} else {
		bd, k := g.BatchDims, g.Indices[q-1]
		block, tuples := product(g.Data[bd+k:]), product(g.Indices[bd:q-1])
		fmt.Fprintf(&b, "    long t = long(gid) / %d;\n    src = (t / %d) * %d + long(gid) %% %d;\n",
			block, tuples, product(g.Data[bd:]), block)
		st := tensor.Shape(g.Data[bd : bd+k]).Strides()
		for j := range k {
			index(fmt.Sprintf("t * %d + %d", k, j), g.Data[bd+j], st[j]*block)
		}
	}
	fmt.Fprintf(&b, "    out[gid] = bad ? %s(0) : x[src];\n}\n", t)
	gr, th := linear(n)
	return &Kernel{Name: g.Name, Source: b.String(), Buffers: bufs, Groups: gr, Threads: th, Variant: "copy"}, nil
}
