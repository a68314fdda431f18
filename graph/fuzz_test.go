package graph

import (
	"fmt"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// fuzzer turns fuzz bytes into builder calls. Running out of bytes reads
// zeros, so every input describes some graph.
type fuzzer struct {
	data    []byte
	pos     int
	g       *Graph
	pool    []*Node // valid, small nodes of g to use as operands
	foreign *Node   // a node of another graph
	names   int
}

func (z *fuzzer) next() byte {
	if z.pos >= len(z.data) {
		return 0
	}
	z.pos++
	return z.data[z.pos-1]
}

func (z *fuzzer) intn(n int) int     { return int(z.next()) % n }
func (z *fuzzer) flag() bool         { return z.next()&1 == 1 }
func (z *fuzzer) axis() int          { return int(z.next()%9) - 4 } // -4 .. 4
func (z *fuzzer) val(lo, hi int) int { return lo + z.intn(hi-lo+1) }

// dim favours small sizes, with the odd empty or negative one.
func (z *fuzzer) dim() int {
	return []int{1, 2, 3, 1, 2, 4, 0, 2, 3, 5, 1, 2, 3, 4, 6, -1}[z.intn(16)]
}

// wild is true one time in eight: then a helper may produce values the
// builder must refuse.
func (z *fuzzer) wild() bool { return z.next()%8 == 0 }

// axisOf is a valid axis of x (either sign), or now and then any small
// integer.
func (z *fuzzer) axisOf(x *Node, extra int) int {
	r := 0
	if x.Valid() {
		r = x.Shape.Rank() + extra
	}
	if z.wild() || r == 0 {
		return z.axis()
	}
	a := z.intn(r)
	if z.flag() {
		a -= r
	}
	return a
}

// window is nil, a valid n-vector in [lo, hi], or now and then anything.
func (z *fuzzer) window(n, lo, hi int) []int {
	if z.wild() {
		return z.ints(n, lo-1, hi)
	}
	if z.flag() {
		return nil
	}
	v := make([]int, n)
	for i := range v {
		v[i] = z.val(lo, hi)
	}
	return v
}

// pickRank prefers a pool node of rank r.
func (z *fuzzer) pickRank(r int) *Node {
	if z.wild() {
		return z.pick()
	}
	start := z.intn(len(z.pool))
	for i := range z.pool {
		if n := z.pool[(start+i)%len(z.pool)]; n.Shape.Rank() == r {
			return n
		}
	}
	return z.pick()
}

func (z *fuzzer) dims(maxRank int) []int {
	d := make([]int, z.intn(maxRank+1))
	for i := range d {
		d[i] = z.dim()
	}
	return d
}

func (z *fuzzer) ints(maxLen, lo, hi int) []int {
	n := z.intn(maxLen + 1)
	if n == 0 && z.flag() {
		return nil
	}
	v := make([]int, n)
	for i := range v {
		v[i] = z.val(lo, hi)
	}
	return v
}

func (z *fuzzer) dtype() tensor.DType {
	b := z.next()
	switch {
	case b == 255:
		return tensor.Invalid
	case b%2 == 0:
		return tensor.F32
	}
	ds := tensor.DTypes()
	return ds[int(b/2)%len(ds)]
}

// pick returns an operand: usually from the pool, sometimes nil or a node
// of another graph.
func (z *fuzzer) pick() *Node {
	switch b := z.next(); b {
	case 255:
		return nil
	case 254:
		return z.foreign
	default:
		return z.pool[int(b)%len(z.pool)]
	}
}

func (z *fuzzer) name() string {
	z.names++
	if z.next() == 253 { // a name that may collide
		return "in1"
	}
	return fmt.Sprintf("in%d", z.names)
}

// like declares a fresh input broadcast-compatible with x: some dims set
// to 1, some leading dims dropped.
func (z *fuzzer) like(x *Node, dt tensor.DType) *Node {
	if !x.Valid() {
		return x
	}
	s := x.Shape.Clone()
	s = s[z.intn(len(s)+1):]
	for i := range s {
		if z.next()%4 == 0 {
			s[i] = 1
		}
	}
	return z.g.Input(z.name(), dt, s...)
}

// shaped declares a fresh input of x's dtype with the given dims.
func (z *fuzzer) shaped(x *Node, dims ...int) *Node {
	dt := tensor.F32
	if x.Valid() {
		dt = x.DType
	}
	return z.g.Input(z.name(), dt, dims...)
}

func dtOf(x *Node) tensor.DType {
	if !x.Valid() {
		return tensor.F32
	}
	return x.DType
}

func last(x *Node, i int) int {
	if !x.Valid() || x.Shape.Rank() < i {
		return 1
	}
	return x.Shape[x.Shape.Rank()-i]
}

var fuzzUnary = []func(g *Graph, x *Node) *Node{
	(*Graph).Neg, (*Graph).Abs, (*Graph).Exp, (*Graph).Log, (*Graph).Sqrt, (*Graph).Rsqrt,
	(*Graph).Reciprocal, (*Graph).Tanh, (*Graph).Sigmoid, (*Graph).Relu, (*Graph).Gelu,
	(*Graph).GeluTanh, (*Graph).Silu, (*Graph).Erf, (*Graph).Sin, (*Graph).Cos, (*Graph).Floor,
	(*Graph).Ceil, (*Graph).Round, (*Graph).Not,
	func(g *Graph, x *Node) *Node { return g.LeakyRelu(x, 0.1) },
	func(g *Graph, x *Node) *Node { return g.ClipMin(x, 0) },
}

var fuzzBinary = []func(g *Graph, x, y *Node) *Node{
	(*Graph).Add, (*Graph).Sub, (*Graph).Mul, (*Graph).Div, (*Graph).Pow, (*Graph).Max,
	(*Graph).Min, (*Graph).Equal, (*Graph).Less, (*Graph).LessOrEqual, (*Graph).Greater,
	(*Graph).GreaterOrEqual, (*Graph).And, (*Graph).Or,
}

var fuzzReduce = []func(g *Graph, x *Node, keep bool, axes ...int) *Node{
	(*Graph).ReduceSum, (*Graph).ReduceMean, (*Graph).ReduceMax, (*Graph).ReduceMin, (*Graph).ReduceProd,
}

// step performs one builder call chosen by the bytes and returns the
// nodes it made.
func (z *fuzzer) step() []*Node {
	g := z.g
	one := func(n *Node) []*Node { return []*Node{n} }
	switch z.intn(33) {
	case 0:
		return one(fuzzUnary[z.intn(len(fuzzUnary))](g, z.pick()))
	case 1:
		x := z.pick()
		y := z.pick()
		if !z.wild() {
			y = z.like(x, dtOf(x))
		}
		return one(fuzzBinary[z.intn(len(fuzzBinary))](g, x, y))
	case 2:
		x := z.pick()
		return one(g.Where(z.like(x, tensor.Bool), x, z.like(x, dtOf(x))))
	case 3:
		return one(g.Cast(z.pick(), z.dtype()))
	case 4:
		a := z.pick()
		b := z.pick()
		if !z.wild() {
			b = z.shaped(a, append(z.dims(2), last(a, 1), z.dim())...)
		}
		return one(g.MatMul(a, b))
	case 5:
		a := z.pickRank(2)
		ta, tb := z.flag(), z.flag()
		k := last(a, 1)
		if ta {
			k = last(a, 2)
		}
		bd := []int{k, z.dim()}
		if tb {
			bd[0], bd[1] = bd[1], bd[0]
		}
		var c *Node
		if z.flag() {
			c = z.shaped(a, z.dims(2)...)
		}
		return one(g.Gemm(a, z.shaped(a, bd...), c, 1, 0.5, ta, tb))
	case 6:
		x := z.pick()
		axes := make([]int, z.intn(3))
		for i := range axes {
			axes[i] = z.axisOf(x, 0)
		}
		return one(fuzzReduce[z.intn(len(fuzzReduce))](g, x, z.flag(), axes...))
	case 7:
		x := z.pick()
		if z.flag() {
			return one(g.ArgMax(x, z.axisOf(x, 0), z.flag()))
		}
		return one(g.ArgMin(x, z.axisOf(x, 0), z.flag()))
	case 8:
		x := z.pick()
		ax := z.axisOf(x, 0)
		switch z.intn(3) {
		case 0:
			return one(g.Softmax(x, ax))
		case 1:
			return one(g.LogSoftmax(x, ax))
		}
		return one(g.CumSum(x, ax, z.flag(), z.flag()))
	case 9, 10:
		x := z.pick()
		ax := z.axisOf(x, 0)
		var norm []int
		if x.Valid() && ax >= -x.Shape.Rank() && ax < x.Shape.Rank() {
			norm = x.Shape[(ax+x.Shape.Rank())%max(x.Shape.Rank(), 1):]
		}
		opt := func() *Node {
			switch z.intn(4) {
			case 0:
				return nil
			case 1:
				if z.wild() {
					return z.pick()
				}
			}
			return z.shaped(x, norm...)
		}
		if z.flag() {
			return one(g.RMSNorm(x, opt(), ax, 1e-5))
		}
		eps := float32(1e-5)
		if z.wild() {
			eps = -1
		}
		return one(g.LayerNorm(x, opt(), opt(), ax, eps))
	case 11:
		x := z.pickRank(4)
		c := last(x, 3)
		if x.Valid() && x.Shape.Rank() >= 2 {
			c = x.Shape[1]
		}
		p := func() *Node {
			if z.wild() {
				return z.pick()
			}
			return z.shaped(x, c)
		}
		return one(g.BatchNorm(x, p(), p(), p(), p(), 1e-5))
	case 12:
		x := z.pickRank(4)
		groups := z.val(0, 2)
		cin := last(x, 3)
		if !z.wild() && cin > 0 && cin%max(groups, 1) != 0 {
			groups = 1
		}
		kh, kw := z.val(1, 3), z.val(1, 3)
		if z.wild() {
			kh = 0
		}
		w := z.shaped(x, z.val(1, 3)*max(groups, 1), cin/max(groups, 1), kh, kw)
		var b *Node
		if z.flag() {
			b = z.shaped(x, last(w, 4))
		}
		o := ConvOpts{Strides: z.window(2, 1, 3), Pads: z.window(4, 0, 2), Dilations: z.window(2, 1, 2), Groups: groups}
		return one(g.Conv2D(x, w, b, o))
	case 13:
		k := z.window(2, 1, 3)
		if k == nil && !z.wild() {
			k = []int{2, 2}
		}
		o := PoolOpts{Kernel: k, Strides: z.window(2, 1, 2), Pads: z.window(4, 0, 1), CountPad: z.flag()}
		if z.flag() {
			return one(g.MaxPool2D(z.pickRank(4), o))
		}
		return one(g.AvgPool2D(z.pickRank(4), o))
	case 14:
		return one(g.GlobalAvgPool(z.pickRank(4)))
	case 15:
		x := z.pick()
		d := z.dims(3)
		if x.Valid() && !z.wild() { // keep the element count
			n := x.Shape.NumElements()
			if n > 0 && z.flag() {
				d = []int{-1, z.dim()}
				if d[1] <= 0 || n%d[1] != 0 {
					d[1] = 1
				}
			} else {
				d = []int{n}
			}
			if z.flag() {
				d = append([]int{1}, d...)
			}
		}
		return one(g.Reshape(x, d...))
	case 16:
		x := z.pick()
		var perm []int
		if x.Valid() && !z.wild() {
			if r := x.Shape.Rank(); r > 0 && z.flag() {
				rot := z.intn(r) // a rotation of the axes
				perm = make([]int, r)
				for i := range perm {
					perm[i] = (i + rot) % r
				}
			}
		} else {
			perm = z.ints(4, -1, 3)
		}
		return one(g.Transpose(x, perm...))
	case 17:
		x := z.pick()
		ax := z.axisOf(x, 0)
		xs := []*Node{x}
		for range z.intn(3) {
			if !z.wild() {
				xs = append(xs, x)
			} else {
				xs = append(xs, z.pick())
			}
		}
		return one(g.Concat(ax, xs...))
	case 18:
		x := z.pick()
		ax := z.axisOf(x, 0)
		if z.flag() {
			return g.SplitEqual(x, ax, z.val(0, 3))
		}
		sizes := z.ints(3, -1, 3)
		if x.Valid() && !z.wild() && ax >= -x.Shape.Rank() && ax < x.Shape.Rank() {
			d := x.Shape[(ax+x.Shape.Rank())%x.Shape.Rank()]
			cut := z.val(0, d)
			sizes = []int{cut, d - cut}
		}
		return g.Split(x, ax, sizes...)
	case 19:
		x := z.pick()
		n := z.intn(3)
		sp := SliceSpec{Starts: make([]int, n), Ends: make([]int, n)}
		if z.flag() {
			sp.Axes = make([]int, n)
		}
		if z.flag() {
			sp.Steps = make([]int, n)
		}
		big := []int{-1 << 62, -5, -3, -2, -1, 0, 1, 2, 3, 5, 1 << 62}
		for i := range n {
			sp.Starts[i], sp.Ends[i] = big[z.intn(len(big))], big[z.intn(len(big))]
			if sp.Axes != nil {
				sp.Axes[i] = z.axisOf(x, 0)
			}
			if sp.Steps != nil {
				sp.Steps[i] = big[z.intn(len(big))]
			}
		}
		return one(g.Slice(x, sp))
	case 20:
		x := z.pick()
		dt := tensor.I64
		if z.flag() {
			dt = tensor.I32
		}
		if z.wild() {
			dt = z.dtype()
		}
		return one(g.Gather(x, g.Input(z.name(), dt, z.dims(2)...), z.axisOf(x, 0)))
	case 21:
		x := z.pick()
		d := z.dims(4)
		if x.Valid() && !z.wild() {
			d = append(z.dims(1), x.Shape...)
			for i := range d {
				if d[i] == 1 {
					d[i] = z.val(1, 3)
				}
			}
		}
		return one(g.Expand(x, d...))
	case 22:
		x := z.pick()
		var axes []int
		if x.Valid() && z.wild() {
			axes = []int{z.axisOf(x, 0)}
		}
		return one(g.Squeeze(x, axes...))
	case 23:
		x := z.pick()
		axes := []int{z.axisOf(x, 1)}
		if z.flag() {
			axes = append(axes, z.axisOf(x, 2))
		}
		return one(g.Unsqueeze(x, axes...))
	case 24:
		x := z.pick()
		return one(g.Flatten(x, z.axisOf(x, 1)))
	case 25:
		x := z.pick()
		r := 0
		if x.Valid() {
			r = x.Shape.Rank()
		}
		wild := z.wild()
		pads := make([]int, 2*r)
		if wild {
			pads = append(pads, 0)
		}
		for i := range pads {
			pads[i] = z.val(0, 2)
			if wild {
				pads[i]--
			}
		}
		return one(g.Pad(x, pads, PadMode(z.intn(3)), 1))
	case 26:
		x := z.pick()
		r := 0
		if x.Valid() {
			r = x.Shape.Rank()
		}
		reps := make([]int, r)
		for i := range reps {
			reps[i] = z.val(0, 2)
		}
		if z.wild() {
			reps = append(reps, -1)
		}
		return one(g.Tile(x, reps...))
	case 27:
		dt := tensor.F32
		if z.wild() {
			dt = z.dtype()
		}
		b, hk, sq, sk, d := z.val(1, 2), z.val(1, 2), z.val(1, 3), z.val(1, 3), z.val(1, 4)
		h := hk * z.val(1, 3)
		if z.wild() {
			h++ // maybe not a multiple
		}
		q := g.Input(z.name(), dt, b, h, sq, d)
		k := g.Input(z.name(), dt, b, hk, sk, d)
		v := g.Input(z.name(), dt, b, hk, sk, z.val(1, 4))
		var mask *Node
		switch z.intn(4) {
		case 1:
			mask = g.Input(z.name(), tensor.Bool, sq, sk)
		case 2:
			mask = g.Input(z.name(), dt, b, 1, 1, sk)
		case 3:
			mask = g.Input(z.name(), z.dtype(), z.dims(4)...)
		}
		return one(g.Attention(q, k, v, mask, AttentionOpts{Causal: z.flag(), Scale: float32(z.intn(2))}))
	case 28:
		x := z.pick()
		if !z.wild() && x.Valid() && x.Shape.Rank() >= 2 && last(x, 1)%2 == 1 {
			x = g.Pad(x, append(make([]int, 2*x.Shape.Rank()-1), 1), PadConstant, 0)
		}
		tab := []int{last(x, 2), last(x, 1) / 2}
		if z.wild() {
			tab = z.dims(2)
		}
		return one(g.RoPE(x, z.shaped(x, tab...), z.shaped(x, tab...), z.flag()))
	case 29:
		switch z.intn(4) {
		case 0:
			return one(g.Input(z.name(), z.dtype(), z.dims(4)...))
		case 1:
			return one(g.Param(z.name(), z.dtype(), z.dims(4)...))
		case 2:
			d := z.dims(3)
			n := max(0, tensor.Shape(d).NumElements())
			if z.wild() {
				n++ // a wrong value count
			}
			return one(g.ConstF32(d, make([]float32, min(n, 64))))
		}
		return one(g.Scalar(float32(z.intn(5))))
	case 30:
		return one(g.SetName(z.pick(), z.name()))
	case 31:
		name := fmt.Sprintf("out%d", z.intn(4))
		if z.wild() {
			name = ""
		}
		g.OutputNamed(name, z.pick())
		return nil
	}
	// Apply with loosely chosen attributes reaches inference with values
	// the builder methods would have normalised or never produced.
	a := Attrs{
		Axis: z.axis(), Axes: z.ints(3, -4, 4), KeepDims: z.flag(),
		Kernel: z.ints(2, -1, 3), Strides: z.ints(2, -1, 3), Pads: z.ints(4, -1, 3), Dilations: z.ints(2, -1, 3),
		Groups: z.val(-1, 2), Perm: z.ints(4, -1, 4), Shape: z.dims(3), Starts: z.ints(2, -2, 3),
		Ends: z.ints(2, -2, 3), Steps: z.ints(2, -2, 2), Sizes: z.ints(3, -1, 3), Index: z.val(-1, 3),
		Reps: z.ints(3, -1, 2), Mode: PadMode(z.intn(4)), To: z.dtype(), Min: float32(z.val(-1, 1)), Max: 1,
	}
	ins := make([]*Node, z.intn(5))
	for i := range ins {
		ins[i] = z.pick()
	}
	return one(g.Apply(Op(z.intn(int(numOps)+2)), a, ins...))
}

// fuzzGraph builds a graph from data and returns it.
func fuzzGraph(data []byte) *Graph {
	z := &fuzzer{data: data, g: New(), foreign: New().Input("far", tensor.F32, 2, 3)}
	g := z.g
	z.pool = []*Node{
		g.Input("in0", tensor.F32, 2, 3), g.Input("inb", tensor.F32, 3), g.Input("inm", tensor.Bool, 2, 3),
		g.Input("ini", tensor.I32, 2, 3), g.Input("img", tensor.F32, 1, 4, 6, 6), g.Input("seq", tensor.F32, 2, 4, 5, 8),
	}
	for steps := 0; steps < 32 && z.pos < len(z.data); steps++ {
		for _, n := range z.step() {
			// Keep operands small: builders such as LayerNorm allocate
			// constants shaped like their operand.
			if n.Valid() && n.Shape.NumElements() <= 1<<12 {
				z.pool = append(z.pool, n)
			}
		}
	}
	return z.g
}

func FuzzShapeInference(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 2, 1, 5, 0, 2})
	f.Add([]byte{4, 1, 1, 6, 2, 2, 9, 7, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := fuzzGraph(data)
		if err := g.Err(); err != nil {
			if Verify(g) != err {
				t.Fatalf("Verify of a failed graph does not return its error %v", err)
			}
			_ = Dump(g)
			return
		}
		for _, n := range g.Nodes {
			if !n.Valid() || !n.DType.Valid() || n.Shape.Validate() != nil {
				t.Fatalf("builder made a bad node %v", n)
			}
		}
		if len(g.Outputs()) == 0 {
			g.Output(g.Nodes[len(g.Nodes)-1])
		}
		if err := Verify(g); err != nil {
			t.Fatalf("Verify: %v\n%s", err, Dump(g))
		}
		_ = Dump(g)
		if err := g.Prune(); err != nil {
			t.Fatal(err)
		}
		if err := Verify(g); err != nil {
			t.Fatalf("Verify after Prune: %v\n%s", err, Dump(g))
		}
		for i, n := range g.Nodes {
			for _, in := range n.Inputs {
				if n.ID != i || in.ID >= n.ID {
					t.Fatalf("Prune left %s (ID %d at %d) after its input %s", n, n.ID, i, in)
				}
			}
		}
	})
}
