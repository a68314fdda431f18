package graph

import (
	"fmt"
	"reflect"
	"strings"
)

// Dump renders the graph as text, one node a line in node order:
//
//	%4 add_4 = Add(matmul_3, b) f32[32 512]
//	%6 softmax_6 = Softmax(add_5) f32[2 4] {Axis:1}
//
// followed by the outputs. Only non-zero attributes are shown.
func Dump(g *Graph) string {
	var b strings.Builder
	fmt.Fprintf(&b, "graph: %d nodes, %d inputs, %d params, %d outputs\n",
		len(g.Nodes), len(g.inputs), len(g.params), len(g.outputs))
	for i, n := range g.Nodes {
		if n == nil { // only in a broken graph, which Dump helps to debug
			fmt.Fprintf(&b, "  %%%d <nil>\n", i)
			continue
		}
		names := make([]string, len(n.Inputs))
		for i, in := range n.Inputs {
			names[i] = in.String() // not in.Name: a broken graph may hold nil
			if in != nil {
				names[i] = in.Name
			}
		}
		fmt.Fprintf(&b, "  %%%d %s = %v(%s) %v%v", n.ID, n.Name, n.Op, strings.Join(names, ", "), n.DType, n.Shape)
		if s := attrString(n.Attrs); s != "" {
			fmt.Fprintf(&b, " {%s}", s)
		}
		b.WriteByte('\n')
	}
	for i, o := range g.outputs {
		fmt.Fprintf(&b, "  output %s = %s\n", g.outName[i], o.Name)
	}
	if g.err != nil {
		fmt.Fprintf(&b, "  error: %v\n", g.err)
	}
	return b.String()
}

func attrString(a Attrs) string {
	var parts []string
	v := reflect.ValueOf(a)
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); !f.IsZero() {
			parts = append(parts, fmt.Sprintf("%s:%v", v.Type().Field(i).Name, f.Interface()))
		}
	}
	return strings.Join(parts, " ")
}
