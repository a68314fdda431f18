package fuse

import (
	"fmt"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// transposeIntoMatMul folds a Transpose that swaps the last two axes of a
// MatMul or Gemm operand into the product's transposed-operand flag
// (MatMul becomes a FusedMatMul with TransA/TransB; Gemm flips its own
// flag), so the transposed copy is never written.
func transposeIntoMatMul(g *graph.Graph, log *Log) error {
	return rewriteAll(g, func(v *view, n *graph.Node) (bool, error) {
		plain := n.Op == graph.OpFusedMatMul && n.Attrs.Epilogue == (graph.Epilogue{})
		if n.Op != graph.OpMatMul && n.Op != graph.OpGemm && !plain {
			return false, nil
		}
		at := n.Attrs
		ins := append([]*graph.Node(nil), n.Inputs...)
		var folded []*graph.Node
		for i, flag := range []*bool{&at.TransA, &at.TransB} {
			t := ins[i]
			if !swapsLastTwo(t) {
				continue
			}
			if ok, why := v.absorbable(t, func(u *graph.Node) bool { return u == n }, nil); !ok {
				log.miss("%s: %s", names(t, n), why)
				continue
			}
			*flag = !*flag
			ins[i] = t.Inputs[0]
			folded = append(folded, t)
		}
		if folded == nil {
			return false, nil
		}
		op := n.Op
		if op == graph.OpMatMul {
			op = graph.OpFusedMatMul
		}
		f, err := g.Insert(op, at, ins...)
		if err != nil {
			log.miss("%s: %v", names(append(folded, n)...), err)
			return false, nil
		}
		if err := replace(g, n, f); err != nil {
			return false, err
		}
		log.fused("%s → %s (transA %v, transB %v)", names(append(folded, n)...), f.Name, at.TransA, at.TransB)
		return true, nil
	})
}

// epilogues fuses what follows a product into its write-back: MatMul (or
// a Gemm with alpha 1 and no C, or a bias-shaped C with beta 1) followed
// by a bias Add along the last axis, an activation and/or a residual Add
// of the output's shape becomes one FusedMatMul; Conv2D followed by an
// activation and/or a residual Add and then another activation (a ResNet
// block's Relu after the identity add), or by an activation and/or a
// 2×2, stride-2, unpadded MaxPool2D (the ResNet stem), becomes one
// FusedConv2D.
func epilogues(g *graph.Graph, log *Log) error {
	return rewriteAll(g, func(v *view, n *graph.Node) (bool, error) {
		root, ep, extra, why := productRoot(n)
		if root == nil {
			if why != "" {
				log.miss("%s: %s", n.Name, why)
			}
			return false, nil
		}
		chain := []*graph.Node{n}
		cur := n
		// step moves cur to the consumer match accepts, returning match's
		// operand, when the shared legality predicate allows it.
		step := func(match func(c *graph.Node) *graph.Node) *graph.Node {
			for _, c := range v.users[cur.ID] {
				x := match(c)
				if x == nil {
					continue
				}
				if ok, why := v.chainLink(cur, c, nil); !ok {
					log.miss("%s: %s", names(append(chain, c)...), why)
					return nil
				}
				chain = append(chain, c)
				cur = c
				return x
			}
			return nil
		}
		var bias, act, res *graph.Node
		if !ep.Bias && n.Op != graph.OpConv2D {
			bias = step(func(c *graph.Node) *graph.Node {
				if b := addOperand(c, cur); b != nil && biasShaped(b, cur) {
					return b
				}
				return nil
			})
		}
		actOf := func(c *graph.Node) *graph.Node {
			if graph.IsEpilogueAct(c.Op) {
				return c
			}
			return nil
		}
		act = step(func(c *graph.Node) *graph.Node {
			if n.Op == graph.OpConv2D && clipAct(c) {
				return c
			}
			return actOf(c)
		})
		res = step(func(c *graph.Node) *graph.Node {
			if r := addOperand(c, cur); r != nil && r.Shape.Equal(cur.Shape) {
				return r
			}
			return nil
		})
		var post, pool *graph.Node
		if n.Op == graph.OpConv2D && res != nil {
			post = step(actOf)
		}
		if n.Op == graph.OpConv2D && res == nil {
			pool = step(func(c *graph.Node) *graph.Node {
				if c.Op != graph.OpMaxPool2D {
					return nil
				}
				if !isPool2x2(c.Attrs) {
					log.miss("%s: %s is not a 2×2, stride-2, unpadded max pool", names(append(chain, c)...), c.Name)
					return nil
				}
				return c
			})
		}
		if len(chain) == 1 {
			return false, nil
		}
		if bias != nil {
			ep.Bias = true
			extra = append(extra, bias)
		}
		if act != nil {
			ep.Act = act.Op
			if act.Op == graph.OpClip {
				ep.Min, ep.Max = act.Attrs.Min, act.Attrs.Max
			}
		}
		if res != nil {
			ep.Residual = true
			extra = append(extra, res)
		}
		if post != nil {
			ep.PostAct = post.Op
		}
		ep.Pool2x2 = pool != nil
		op := graph.OpFusedMatMul
		at := graph.Attrs{TransA: root.Attrs.TransA, TransB: root.Attrs.TransB, Epilogue: ep}
		if n.Op == graph.OpConv2D {
			op, at = graph.OpFusedConv2D, root.Attrs
			at.Epilogue = ep
		}
		f, err := g.Insert(op, at, append(append([]*graph.Node(nil), root.Inputs[:2]...), extra...)...)
		if err != nil {
			log.miss("%s: %v", names(chain...), err)
			return false, nil
		}
		if err := replace(g, cur, f); err != nil {
			return false, err
		}
		log.fused("%s → %s (%s)", names(chain...), f.Name, describeEpilogue(ep))
		return true, nil
	})
}

// productRoot decides whether n can start an epilogue: it returns the
// node whose attributes and first two inputs the fused node takes, the
// epilogue n already has, and the extra inputs already bound (Gemm's C as
// bias, Conv2D's bias). A Gemm that cannot be expressed gives a reason.
func productRoot(n *graph.Node) (*graph.Node, graph.Epilogue, []*graph.Node, string) {
	var ep graph.Epilogue
	switch n.Op {
	case graph.OpMatMul:
		return n, ep, nil, ""
	case graph.OpFusedMatMul:
		if n.Attrs.Epilogue == ep {
			return n, ep, nil, ""
		}
	case graph.OpGemm:
		a := n.Attrs
		switch {
		case a.Alpha != 1:
			return nil, ep, nil, fmt.Sprintf("Gemm alpha %v is not 1", a.Alpha)
		case len(n.Inputs) == 2:
			return n, ep, nil, ""
		case a.Beta == 1 && biasShaped(n.Inputs[2], n):
			return n, graph.Epilogue{Bias: true}, []*graph.Node{n.Inputs[2]}, ""
		}
		return nil, ep, nil, fmt.Sprintf("Gemm C %v with beta %v is not a bias", n.Inputs[2].Shape, a.Beta)
	case graph.OpConv2D:
		if len(n.Inputs) == 3 {
			return n, graph.Epilogue{Bias: true}, []*graph.Node{n.Inputs[2]}, ""
		}
		return n, ep, nil, ""
	}
	return nil, ep, nil, ""
}

// clipAct reports whether c is a Clip a FusedConv2D epilogue can apply
// as its activation (graph.Epilogue's Min and Max): a float Clip with
// ordered bounds (ReLU6 is Clip(0, 6)). The post-residual activation
// stays parameterless.
func clipAct(c *graph.Node) bool {
	return c.Op == graph.OpClip && (c.DType == tensor.F32 || c.DType == tensor.F64) && c.Attrs.Min <= c.Attrs.Max
}

// isPool2x2 reports whether MaxPool2D attributes a are the pooling a
// FusedConv2D epilogue applies (graph.Epilogue.Pool2x2): a 2×2 window,
// stride 2, no padding (ceil mode arrives from the importer as padding).
func isPool2x2(a graph.Attrs) bool {
	return slices.Equal(a.Kernel, []int{2, 2}) && slices.Equal(a.Strides, []int{2, 2}) &&
		slices.Equal(a.Pads, []int{0, 0, 0, 0}) && (a.Dilations == nil || slices.Equal(a.Dilations, []int{1, 1}))
}

// addOperand returns the other operand when c is an Add of cur and
// something else that keeps cur's shape and dtype.
func addOperand(c, cur *graph.Node) *graph.Node {
	if c.Op != graph.OpAdd || !c.Shape.Equal(cur.Shape) || c.DType != cur.DType {
		return nil
	}
	switch {
	case c.Inputs[0] == cur && c.Inputs[1] != cur:
		return c.Inputs[1]
	case c.Inputs[1] == cur && c.Inputs[0] != cur:
		return c.Inputs[0]
	}
	return nil
}

// biasShaped reports whether b is [N] or [1, ..., 1, N] for the last dim
// N of out (and has no more dims than out).
func biasShaped(b, out *graph.Node) bool {
	bs, os := b.Shape, out.Shape
	if bs.Rank() == 0 || os.Rank() == 0 || bs.Rank() > os.Rank() || bs[bs.Rank()-1] != os[os.Rank()-1] {
		return false
	}
	return bs.NumElements() == bs[bs.Rank()-1]
}

func describeEpilogue(e graph.Epilogue) string {
	s := ""
	add := func(p string) {
		if s != "" {
			s += ", "
		}
		s += p
	}
	if e.Bias {
		add("bias")
	}
	switch {
	case e.Act == graph.OpClip:
		add(fmt.Sprintf("Clip [%v, %v]", e.Min, e.Max))
	case e.Act != graph.OpInvalid:
		add(e.Act.String())
	}
	if e.Residual {
		add("residual")
	}
	if e.PostAct != graph.OpInvalid {
		add("then " + e.PostAct.String())
	}
	if e.Pool2x2 {
		add("pool2x2")
	}
	return s
}
