package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// fusedPair interprets a graph whose output 0 is an unfused chain and
// output 1 the fused node computing the same thing, and requires them to
// agree bit for bit: the fused reference kernels round exactly where the
// unfused kernels store. It returns the feeds for further checks.
func fusedPair(t *testing.T, g *graph.Graph, seed uint64) map[string]tensor.Tensor {
	t.Helper()
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 3))
	feeds := map[string]tensor.Tensor{}
	for _, n := range append(append([]*graph.Node{}, g.Inputs()...), g.Params()...) {
		v := make([]float64, n.Shape.NumElements())
		for i := range v {
			switch {
			case n.DType == tensor.Bool:
				v[i] = float64(r.IntN(2))
			case n.DType.IsInt():
				v[i] = float64(r.IntN(9) - 4)
			default:
				v[i] = 4*r.Float64() - 2
			}
		}
		feeds[n.Name] = hcT(t, n.DType, n.Shape, v...)
	}
	outs, err := Interpret(g, feeds)
	if err != nil {
		t.Fatal(err)
	}
	a, b := outs[0].Float64s(), outs[1].Float64s()
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			t.Fatalf("%s: element %d: unfused %v, fused %v", g.Outputs()[1].Op, i, a[i], b[i])
		}
	}
	return feeds
}

func mustInsert(t *testing.T, g *graph.Graph, op graph.Op, a graph.Attrs, ins ...*graph.Node) *graph.Node {
	t.Helper()
	n, err := g.Insert(op, a, ins...)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkFast runs n's fast kernel against its reference on feeds.
func checkFast(t *testing.T, n *graph.Node, feeds map[string]tensor.Tensor, tol float64) {
	t.Helper()
	ins := make([]tensor.Tensor, len(n.Inputs))
	for i, in := range n.Inputs {
		v, ok := feeds[in.Name]
		if !ok {
			t.Fatalf("input %s of %s is not fed", in.Name, n.Name)
		}
		ins[i] = v
	}
	want := hcRun(t, n, ins...)
	got, variant := fastRun(t, n, parEnv(3), ins...)
	hcClose(t, n.Op.String()+"/"+variant, got, want, tol)
}

func ref(i int) graph.ElemRef   { return graph.ElemRef{Index: i} }
func instr(i int) graph.ElemRef { return graph.ElemRef{Instr: true, Index: i} }

func TestFusedElementwiseMatchesChain(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
		g := graph.New()
		x := g.Input("x", dt, 3, 4, 5)
		b := g.Input("b", dt, 5)
		c := g.Input("c", dt, 4, 1)
		m := g.Input("m", tensor.Bool, 1, 5)
		i := g.Input("i", tensor.I32, 3, 1, 1)
		// gelu(x + b) * sigmoid(c) - where(m, x, cast(i)), then clipped
		s := g.Mul(g.Gelu(g.Add(x, b)), g.Sigmoid(c))
		w := g.Where(m, x, g.Cast(i, dt))
		y := g.Clip(g.Sub(s, w), -1.5, 1.25)
		cmp := g.Less(y, b)
		g.Output(g.Where(cmp, y, g.Neg(y)))
		prog := []graph.ElemInstr{
			{Op: graph.OpAdd, Args: []graph.ElemRef{ref(0), ref(1)}},             // 0
			{Op: graph.OpGelu, Args: []graph.ElemRef{instr(0)}},                  // 1
			{Op: graph.OpSigmoid, Args: []graph.ElemRef{ref(2)}},                 // 2
			{Op: graph.OpMul, Args: []graph.ElemRef{instr(1), instr(2)}},         // 3
			{Op: graph.OpCast, Args: []graph.ElemRef{ref(4)}, To: dt},            // 4
			{Op: graph.OpWhere, Args: []graph.ElemRef{ref(3), ref(0), instr(4)}}, // 5
			{Op: graph.OpSub, Args: []graph.ElemRef{instr(3), instr(5)}},         // 6
			{Op: graph.OpClip, Args: []graph.ElemRef{instr(6)}, Min: -1.5, Max: 1.25},
			{Op: graph.OpLess, Args: []graph.ElemRef{instr(7), ref(1)}}, // 8
			{Op: graph.OpNeg, Args: []graph.ElemRef{instr(7)}},          // 9
			{Op: graph.OpWhere, Args: []graph.ElemRef{instr(8), instr(7), instr(9)}},
		}
		f := mustInsert(t, g, graph.OpFusedElementwise, graph.Attrs{Program: prog}, x, b, c, m, i)
		g.Output(f)
		feeds := fusedPair(t, g, 1)
		if dt == tensor.F32 {
			// Too small to split: the fast kernel declines, the reference runs.
			if _, variant, err := PrepareFast(f, parEnv(3)); err != nil || variant != "reference" {
				t.Errorf("small node: variant %q, err %v", variant, err)
			}
			_ = feeds
		}
	}
}

func TestFusedElementwiseFastSplits(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 300, 257)
	b := g.Input("b", tensor.F32, 257)
	g.Output(g.Mul(g.Tanh(g.Add(x, b)), x))
	prog := []graph.ElemInstr{
		{Op: graph.OpAdd, Args: []graph.ElemRef{ref(0), ref(1)}},
		{Op: graph.OpTanh, Args: []graph.ElemRef{instr(0)}},
		{Op: graph.OpMul, Args: []graph.ElemRef{instr(1), ref(0)}},
	}
	f := mustInsert(t, g, graph.OpFusedElementwise, graph.Attrs{Program: prog}, x, b)
	g.Output(f)
	feeds := fusedPair(t, g, 2)
	checkFast(t, f, feeds, 2e-6) // vectorised tanh: a few ulp
}

// TestFusedElementwiseChannelAffine covers inputs repeated over planes
// (a batch-norm's per-channel scale and shift over NCHW, one value a
// batch, one per channel and row), planes of 25 so that tiles start
// inside a plane, exact against the reference (× and + round alike in
// both).
func TestFusedElementwiseChannelAffine(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 3, 37, 5, 5)
	sc := g.Input("s", tensor.F32, 37, 1, 1)
	sh := g.Input("t", tensor.F32, 1, 37, 1, 1)
	b := g.Input("b", tensor.F32, 3, 1, 1, 1)
	rw := g.Input("r", tensor.F32, 37, 5, 1)
	prog := []graph.ElemInstr{
		{Op: graph.OpMul, Args: []graph.ElemRef{ref(0), ref(1)}},
		{Op: graph.OpAdd, Args: []graph.ElemRef{instr(0), ref(2)}},
		{Op: graph.OpRelu, Args: []graph.ElemRef{instr(1)}},
		{Op: graph.OpMul, Args: []graph.ElemRef{instr(2), ref(3)}},
		{Op: graph.OpSub, Args: []graph.ElemRef{instr(3), ref(4)}},
	}
	f := mustInsert(t, g, graph.OpFusedElementwise, graph.Attrs{Program: prog}, x, sc, sh, b, rw)
	g.Output(f)
	feeds := map[string]tensor.Tensor{}
	r := rand.New(rand.NewPCG(4, 4))
	for _, n := range g.Inputs() {
		v := make([]float64, n.Shape.NumElements())
		for i := range v {
			v[i] = float64(float32(4*r.Float64() - 2))
		}
		feeds[n.Name] = hcT(t, n.DType, n.Shape, v...)
	}
	checkFast(t, f, feeds, 0)
}

// TestFusedElementwiseF32Path covers the float32 tiles: vector and scalar
// instructions, flat, scalar, broadcast and Bool inputs, a Bool result,
// tails past whole tiles, on one worker and several.
func TestFusedElementwiseF32Path(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 5, 301)
	b := g.Input("b", tensor.F32, 301)
	c := g.Input("c", tensor.F32, 5, 1)
	s := g.Input("s", tensor.F32)
	m := g.Input("m", tensor.Bool, 5, 301)
	prog := []graph.ElemInstr{
		{Op: graph.OpMul, Args: []graph.ElemRef{ref(0), ref(1)}},                 // 0 vector binary, broadcast b
		{Op: graph.OpGelu, Args: []graph.ElemRef{instr(0)}},                      // 1 vector unary
		{Op: graph.OpSqrt, Args: []graph.ElemRef{ref(2)}},                        // 2 scalar formula (NaN below 0)
		{Op: graph.OpPow, Args: []graph.ElemRef{instr(1), ref(3)}},               // 3 scalar binary with a scalar input
		{Op: graph.OpGreaterOrEqual, Args: []graph.ElemRef{instr(3), instr(2)}},  // 4 compare
		{Op: graph.OpOr, Args: []graph.ElemRef{instr(4), ref(4)}},                // 5 with a Bool input
		{Op: graph.OpLeakyRelu, Args: []graph.ElemRef{ref(0)}, Alpha: 0.2},       // 6
		{Op: graph.OpWhere, Args: []graph.ElemRef{instr(5), instr(6), instr(1)}}, // 7
		{Op: graph.OpExp, Args: []graph.ElemRef{instr(7)}},                       // 8
		{Op: graph.OpLess, Args: []graph.ElemRef{instr(8), ref(1)}},              // 9: a Bool result
	}
	f := mustInsert(t, g, graph.OpFusedElementwise, graph.Attrs{Program: prog}, x, b, c, s, m)
	g.Output(f)
	r := rand.New(rand.NewPCG(9, 9))
	feeds := map[string]tensor.Tensor{}
	for _, n := range g.Inputs() {
		v := make([]float64, n.Shape.NumElements())
		for i := range v {
			v[i] = 4*r.Float64() - 2
			if n.DType == tensor.Bool {
				v[i] = float64(r.IntN(2))
			}
		}
		feeds[n.Name] = hcT(t, n.DType, n.Shape, v...)
	}
	for _, threads := range []int{1, 3} {
		ins := []tensor.Tensor{feeds["x"], feeds["b"], feeds["c"], feeds["s"], feeds["m"]}
		want := hcRun(t, f, ins...)
		got, variant := fastRun(t, f, parEnv(threads), ins...)
		if !strings.HasPrefix(variant, "ew-") {
			t.Errorf("variant %q", variant)
		}
		// A Bool result: exact, except where a compare sits within a few
		// ulp of its threshold.
		bad := 0
		for i := range want {
			if got[i] != want[i] {
				bad++
			}
		}
		if bad > len(want)/200 {
			t.Errorf("%d threads: %d of %d results differ", threads, bad, len(want))
		}
	}
	// The float part alone, within tolerance.
	prog = prog[:9]
	f2 := mustInsert(t, g, graph.OpFusedElementwise, graph.Attrs{Program: prog}, x, b, c, s, m)
	checkFast(t, f2, feeds, 4e-6)
}

func TestFusedElementwiseRejects(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.I64, 4)
	h := g.Input("h", tensor.F16, 4)
	if FusableElementwise(g.Neg(x)) || FusableElementwise(g.Exp(h)) || FusableElementwise(g.Cast(g.Input("f", tensor.F32, 4), tensor.I32)) {
		t.Error("int or half ops reported fusable")
	}
	if !FusableElementwise(g.Cast(g.Input("i", tensor.I32, 4), tensor.F32)) || !FusableElementwise(g.Not(g.Input("m", tensor.Bool, 4))) {
		t.Error("cast from i32 or not reported unfusable")
	}
}

func TestFusedMatMulMatchesChain(t *testing.T) {
	type tc struct {
		a, b           tensor.Shape
		transA, transB bool
		bias, res      bool
		act            graph.Op
	}
	for i, c := range []tc{
		{a: tensor.Shape{2, 5, 7}, b: tensor.Shape{7, 6}, bias: true, act: graph.OpGelu, res: true},
		{a: tensor.Shape{2, 1, 5, 7}, b: tensor.Shape{3, 6, 7}, transB: true, bias: true, act: graph.OpRelu},
		{a: tensor.Shape{7, 5}, b: tensor.Shape{7, 6}, transA: true, act: graph.OpSilu, res: true},
		{a: tensor.Shape{4, 9, 3}, b: tensor.Shape{4, 5, 9}, transA: true, transB: true, act: graph.OpTanh},
		{a: tensor.Shape{7}, b: tensor.Shape{7, 6}, bias: true, act: graph.OpSigmoid},
		{a: tensor.Shape{130, 70}, b: tensor.Shape{70, 33}, bias: true, act: graph.OpGeluTanh, res: true},
		// A batch of 0: an empty result (the fast kernel used to fail).
		{a: tensor.Shape{0, 4, 1}, b: tensor.Shape{1, 1}, transB: true, bias: true, act: graph.OpGeluTanh, res: true},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for _, dt := range []tensor.DType{tensor.F32, tensor.F64} {
				g := graph.New()
				a := g.Input("a", dt, c.a...)
				b := g.Param("b", dt, c.b...)
				ua, ub := a, b
				if c.transA {
					ua = g.Transpose(a, swapPerm(c.a.Rank())...)
				}
				if c.transB {
					ub = g.Transpose(b, swapPerm(c.b.Rank())...)
				}
				y := g.MatMul(ua, ub)
				n := y.Shape[y.Shape.Rank()-1]
				ins := []*graph.Node{a, b}
				ep := graph.Epilogue{Bias: c.bias, Act: c.act, Residual: c.res}
				if c.bias {
					bs := []int{1, n}
					if y.Shape.Rank() == 1 {
						bs = bs[1:]
					}
					bias := g.Param("bias", dt, bs...)
					y = g.Add(bias, y)
					ins = append(ins, bias)
				}
				if c.act != graph.OpInvalid {
					y = g.Apply(c.act, graph.Attrs{}, y)
				}
				if c.res {
					res := g.Input("res", dt, y.Shape...)
					y = g.Add(y, res)
					ins = append(ins, res)
				}
				g.Output(y)
				f := mustInsert(t, g, graph.OpFusedMatMul, graph.Attrs{TransA: c.transA, TransB: c.transB, Epilogue: ep}, ins...)
				g.Output(f)
				feeds := fusedPair(t, g, uint64(i))
				if dt == tensor.F32 {
					// Both places the fast kernel can apply the epilogue.
					for _, tiles := range []bool{false, true} {
						epilogueInTiles = tiles
						checkFast(t, f, feeds, 2e-5)
					}
					epilogueInTiles = false
				}
			}
		})
	}
}

func swapPerm(r int) []int {
	p := make([]int, r)
	for i := range p {
		p[i] = i
	}
	p[r-1], p[r-2] = p[r-2], p[r-1]
	return p
}

// TestAddNormMatchesChain: the fast kernel (fastRun fails if the
// reference takes the node) against the unfused chain, with the residual
// full-sized (either operand first), covering whole rows ([6, 33], and
// [1, 6, 33] as position embeddings are added to token embeddings) and
// one row ([1, 1, 33]).
func TestAddNormMatchesChain(t *testing.T) {
	for _, layer := range []bool{true, false} {
		for _, rs := range []tensor.Shape{{2, 6, 33}, {6, 33}, {1, 6, 33}, {1, 1, 33}} {
			for _, rFirst := range []bool{false, true} {
				if rFirst && len(rs) < 3 || rFirst && rs[0] == 1 {
					continue // the op's first operand has the output's shape
				}
				g := graph.New()
				x := g.Input("x", tensor.F32, 2, 6, 33)
				r := g.Input("r", tensor.F32, rs...)
				s := g.Param("s", tensor.F32, 33)
				b := g.Param("bias", tensor.F32, 33)
				a0, a1 := x, r
				if rFirst {
					a0, a1 = r, x
				}
				op, ins := graph.OpAddRMSNorm, []*graph.Node{a0, a1, s}
				if layer {
					g.Output(g.LayerNorm(g.Add(a0, a1), s, b, -1, 1e-5))
					op, ins = graph.OpAddLayerNorm, append(ins, b)
				} else {
					g.Output(g.RMSNorm(g.Add(a0, a1), s, -1, 1e-5))
				}
				f := mustInsert(t, g, op, graph.Attrs{Axis: 2, Eps: 1e-5}, ins...)
				g.Output(f)
				feeds := fusedPair(t, g, 4)
				checkFast(t, f, feeds, 2e-5)
			}
		}
	}
}

func TestFusedConvMatchesChain(t *testing.T) {
	for _, res := range []bool{false, true} {
		g := graph.New()
		x := g.Input("x", tensor.F32, 2, 3, 9, 8)
		w := g.Param("w", tensor.F32, 4, 3, 3, 3)
		b := g.Param("b", tensor.F32, 4)
		o := graph.ConvOpts{Pads: []int{1, 1, 1, 1}, Strides: []int{2, 1}}
		y := g.Silu(g.Conv2D(x, w, b, o))
		ins := []*graph.Node{x, w, b}
		if res {
			r := g.Input("r", tensor.F32, y.Shape...)
			y = g.Add(r, y)
			ins = append(ins, r)
		}
		g.Output(y)
		at := graph.Attrs{Pads: o.Pads, Strides: o.Strides, Epilogue: graph.Epilogue{Bias: true, Act: graph.OpSilu, Residual: res}}
		f := mustInsert(t, g, graph.OpFusedConv2D, at, ins...)
		g.Output(f)
		feeds := fusedPair(t, g, 5)
		checkFast(t, f, feeds, 2e-5)
	}
}

// TestFusedFastNoAllocs checks that the prepared fast kernels run without
// allocating (the executor's Run promises zero allocations).
func TestFusedFastNoAllocs(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 64, 300)
	w := g.Param("w", tensor.F32, 300, 70)
	bias := g.Param("bias", tensor.F32, 70)
	s := g.Param("s", tensor.F32, 300)
	q := g.Input("q", tensor.F32, 1, 2, 70, 16)
	mm := mustInsert(t, g, graph.OpFusedMatMul, graph.Attrs{Epilogue: graph.Epilogue{Bias: true, Act: graph.OpGelu}}, x, w, bias)
	ln := mustInsert(t, g, graph.OpAddLayerNorm, graph.Attrs{Axis: 1, Eps: 1e-5}, x, x, s)
	ew := mustInsert(t, g, graph.OpFusedElementwise, graph.Attrs{Program: []graph.ElemInstr{
		{Op: graph.OpMul, Args: []graph.ElemRef{ref(0), ref(1)}}, {Op: graph.OpExp, Args: []graph.ElemRef{instr(0)}}}}, x, s)
	at := g.Attention(q, q, q, nil, graph.AttentionOpts{Causal: true})
	env := parEnv(1)
	nodes := []*graph.Node{mm, ln, ew, at}
	if gemmAllocates() {
		t.Log("skipping Attention: asm Gemm.Run allocates for an unpacked B (ops/asm/gemm.go check)")
		nodes = nodes[:3]
	}
	for _, n := range nodes {
		k, _, err := PrepareFast(n, env)
		if err != nil {
			t.Fatal(err)
		}
		ins := make([]tensor.Tensor, len(n.Inputs))
		for i, in := range n.Inputs {
			ins[i] = tensor.New(in.DType, in.Shape...)
		}
		out := tensor.New(n.DType, n.Shape...)
		if a := testing.AllocsPerRun(5, func() {
			if err := k(ins, out); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%v: %v allocations per run", n.Op, a)
		}
	}
}

// gemmAllocates probes whether one asm GEMM run with an unpacked B
// allocates, which the flash kernel (one run per block) cannot avoid.
func gemmAllocates() bool {
	g, err := asm.NewGemm(asm.GemmConfig{M: 4, N: 4, K: 4, TransB: true, Alpha: 1}, nil, asm.Par{})
	if err != nil {
		return true
	}
	args := &asm.GemmArgs{A: make([]float32, 16), B: make([]float32, 16), C: make([]float32, 16)}
	return testing.AllocsPerRun(3, func() { _ = g.Run(args) }) != 0
}

// TestFusedElementwiseInPlace: the F32 tiles' last instruction writes the
// output directly, also where the plan gave the output an input's slot
// (an exact alias read in place, here read by the last instruction too);
// the results are those of a separate output, bit for bit, on one worker
// and several.
func TestFusedElementwiseInPlace(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 3, 37, 5, 5)
	sc := g.Input("s", tensor.F32, 1, 37, 1, 1)
	prog := []graph.ElemInstr{
		{Op: graph.OpMul, Args: []graph.ElemRef{ref(0), ref(1)}},
		{Op: graph.OpRelu, Args: []graph.ElemRef{instr(0)}},
		{Op: graph.OpSub, Args: []graph.ElemRef{instr(1), ref(0)}}, // the last reads x
	}
	f := mustInsert(t, g, graph.OpFusedElementwise, graph.Attrs{Program: prog}, x, sc)
	g.Output(f)
	r := rand.New(rand.NewPCG(5, 5))
	feed := func(n *graph.Node) tensor.Tensor {
		v := make([]float64, n.Shape.NumElements())
		for i := range v {
			v[i] = float64(float32(4*r.Float64() - 2))
		}
		return hcT(t, n.DType, n.Shape, v...)
	}
	xs, ss := feed(x), feed(sc)
	for _, env := range []Env{Serial, parEnv(3)} {
		want, _ := fastRun(t, f, env, xs, ss)
		k, _, err := PrepareFast(f, env)
		if err != nil {
			t.Fatal(err)
		}
		inPlace := tensor.Tensor{DType: xs.DType, Shape: xs.Shape.Clone(), Data: append([]byte(nil), xs.Data...)}
		out := tensor.Tensor{DType: tensor.F32, Shape: f.Shape, Data: inPlace.Data}
		if err := k([]tensor.Tensor{inPlace, ss}, out); err != nil {
			t.Fatal(err)
		}
		for i, v := range out.F32() {
			if math.Float32bits(v) != math.Float32bits(float32(want[i])) {
				t.Fatalf("threads %d: element %d = %v in place, %v into its own output", env.Threads, i, v, want[i])
			}
		}
	}
}
