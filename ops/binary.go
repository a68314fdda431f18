package ops

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Reference kernels of the broadcasting binary ops, Where and Cast.
// Floats are computed in float64 and rounded once to the storage type:
// for + - * / that equals the correctly rounded F32 operation, and for Pow
// it is the most accurate F32 result. Integers wrap like Go (and C, numpy).

func init() {
	// The arithmetic ops (+ - × ÷ Pow Max Min) are rows of the elementwise
	// table (elementwise.go), which registers them with prepareBinary.
	arith := []tensor.DType{tensor.F32, tensor.F64, tensor.I8, tensor.U8, tensor.I32, tensor.I64}
	for _, op := range []graph.Op{graph.OpLess, graph.OpLessOrEqual, graph.OpGreater, graph.OpGreaterOrEqual} {
		Register(Entry{Op: op, DTypes: arith, Reference: prepareBinary, InPlace: true})
	}
	Register(Entry{Op: graph.OpEqual, DTypes: append(arith[:len(arith):len(arith)], tensor.Bool),
		Reference: prepareBinary, InPlace: true})
	bools := []tensor.DType{tensor.Bool}
	Register(Entry{Op: graph.OpAnd, DTypes: bools, Reference: prepareBinary, InPlace: true})
	Register(Entry{Op: graph.OpOr, DTypes: bools, Reference: prepareBinary, InPlace: true})
	Register(Entry{Op: graph.OpXor, DTypes: bools, Reference: prepareBinary, InPlace: true})
	// The shifts are ONNX's BitShift on kiln's one unsigned type.
	u8 := []tensor.DType{tensor.U8}
	Register(Entry{Op: graph.OpShiftLeft, DTypes: u8, Reference: prepareBinary, InPlace: true})
	Register(Entry{Op: graph.OpShiftRight, DTypes: u8, Reference: prepareBinary, InPlace: true})
	// Where is keyed by its condition (input 0), which is always Bool; it
	// moves x/y elements of any dtype by size, F16/BF16 included.
	Register(Entry{Op: graph.OpWhere, DTypes: bools, Reference: prepareWhere})
	// Cast is not InPlace: tensor.Convert copies an overlapping source.
	Register(Entry{Op: graph.OpCast, DTypes: tensor.DTypes(), Reference: prepareCast})
}

// Element type sets of the generic loops.
type (
	ewFloat interface{ float32 | float64 }
	ewInt   interface{ int8 | uint8 | int32 | int64 }
	ewNum   interface{ ewFloat | ewInt }
)

// boolByte is how kernels store a Bool element.
func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// bcastPlan walks a broadcast output in row-major order, tracking the
// element offset of every input (stride 0 along its broadcast dims).
type bcastPlan struct {
	shape   []int   // output dims
	strides [][]int // per input, one stride per output dim
	flat    bool    // every input has as many elements as the output: offsets equal the output's
	idx     []int   // odometer scratch
	offs    []int   // per-input offset scratch
}

// newBcastPlan checks that out is the broadcast of ins and precomputes the
// strides and scratch.
func newBcastPlan(out tensor.Shape, ins ...tensor.Shape) (*bcastPlan, error) {
	want, err := tensor.Broadcast(ins...)
	if err != nil {
		return nil, err
	}
	if !want.Equal(out) {
		return nil, fmt.Errorf("result shape %v, want broadcast %v", out, want)
	}
	p := &bcastPlan{shape: out.Clone(), flat: true, idx: make([]int, len(out)), offs: make([]int, len(ins))}
	for _, s := range ins {
		p.strides = append(p.strides, tensor.BroadcastStrides(s, out))
		p.flat = p.flat && s.NumElements() == out.NumElements()
	}
	return p, nil
}

// rows calls f once per innermost output row with the row's output offset
// and each input's offset at the row start. The row has shape[rank-1]
// elements; input k steps by strides[k][rank-1] along it. Rank 0 and empty
// outputs are the caller's business (flat covers rank 0).
func (p *bcastPlan) rows(f func(o int, base []int)) {
	n := len(p.shape)
	total := tensor.Shape(p.shape).NumElements()
	if n == 0 || total == 0 {
		return
	}
	clear(p.idx)
	clear(p.offs)
	inner := p.shape[n-1]
	for o := 0; o < total; o += inner {
		f(o, p.offs)
		for d := n - 2; d >= 0; d-- {
			p.idx[d]++
			for k := range p.offs {
				p.offs[k] += p.strides[k][d]
			}
			if p.idx[d] < p.shape[d] {
				break
			}
			for k := range p.offs {
				p.offs[k] -= p.strides[k][d] * p.shape[d]
			}
			p.idx[d] = 0
		}
	}
}

// bcastLoop2 sets dst[o] = f(x[i], y[j]) over the broadcast. Each element
// of x is read before the same-index element of dst is written, so dst may
// alias x when x has the output's shape.
func bcastLoop2[X, Y, R any](p *bcastPlan, dst []R, x []X, y []Y, f func(X, Y) R) {
	if p.flat {
		for i := range dst {
			dst[i] = f(x[i], y[i])
		}
		return
	}
	last := len(p.shape) - 1
	inner, sx, sy := p.shape[last], p.strides[0][last], p.strides[1][last]
	p.rows(func(o int, base []int) {
		ix, iy := base[0], base[1]
		for j := range inner {
			dst[o+j] = f(x[ix], y[iy])
			ix += sx
			iy += sy
		}
	})
}

// bcastLoop3 is bcastLoop2 for three inputs.
func bcastLoop3[C, X, R any](p *bcastPlan, dst []R, c []C, x, y []X, f func(C, X, X) R) {
	if p.flat {
		for i := range dst {
			dst[i] = f(c[i], x[i], y[i])
		}
		return
	}
	last := len(p.shape) - 1
	inner, sc, sx, sy := p.shape[last], p.strides[0][last], p.strides[1][last], p.strides[2][last]
	p.rows(func(o int, base []int) {
		ic, ix, iy := base[0], base[1], base[2]
		for j := range inner {
			dst[o+j] = f(c[ic], x[ix], y[iy])
			ic += sc
			ix += sx
			iy += sy
		}
	})
}

func prepareBinary(n *graph.Node) (Kernel, error) {
	if len(n.Inputs) != 2 {
		return nil, fmt.Errorf("%d inputs, want 2", len(n.Inputs))
	}
	x, y := n.Inputs[0], n.Inputs[1]
	if x.DType != y.DType {
		return nil, fmt.Errorf("input dtypes %v and %v differ", x.DType, y.DType)
	}
	want := x.DType
	if n.Op.IsCompare() || n.Op == graph.OpAnd || n.Op == graph.OpOr || n.Op == graph.OpXor {
		want = tensor.Bool
	}
	if n.DType != want {
		return nil, fmt.Errorf("result dtype %v, want %v", n.DType, want)
	}
	p, err := newBcastPlan(n.Shape, x.Shape, y.Shape)
	if err != nil {
		return nil, err
	}
	var k Kernel
	switch x.DType {
	case tensor.F32:
		k, err = floatBinary[float32](n.Op, p)
	case tensor.F64:
		k, err = floatBinary[float64](n.Op, p)
	case tensor.I8:
		k, err = intBinary[int8](n.Op, p)
	case tensor.U8:
		k, err = intBinary[uint8](n.Op, p)
	case tensor.I32:
		k, err = intBinary[int32](n.Op, p)
	case tensor.I64:
		k, err = intBinary[int64](n.Op, p)
	case tensor.Bool:
		k, err = boolBinary(n.Op, p)
	default:
		err = fmt.Errorf("dtype %v has no reference kernel", x.DType)
	}
	if err != nil {
		return nil, err
	}
	return sizeChecked(n, k), nil
}

// compareFunc returns the comparison op as a function storing a Bool
// byte, or nil if op is not a comparison. NaN compares false (unequal).
func compareFunc[T cmp.Ordered](op graph.Op) func(a, b T) uint8 {
	switch op {
	case graph.OpEqual:
		return func(a, b T) uint8 { return boolByte(a == b) }
	case graph.OpLess:
		return func(a, b T) uint8 { return boolByte(a < b) }
	case graph.OpLessOrEqual:
		return func(a, b T) uint8 { return boolByte(a <= b) }
	case graph.OpGreater:
		return func(a, b T) uint8 { return boolByte(a > b) }
	case graph.OpGreaterOrEqual:
		return func(a, b T) uint8 { return boolByte(a >= b) }
	}
	return nil
}

// compareKernel runs a comparison of two T inputs into a Bool output.
func compareKernel[T cmp.Ordered](p *bcastPlan, f func(a, b T) uint8) Kernel {
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		bcastLoop2(p, out.Data, tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), f)
		return nil
	}
}

func floatBinary[T ewFloat](op graph.Op, p *bcastPlan) (Kernel, error) {
	if c := compareFunc[T](op); c != nil {
		return compareKernel(p, c), nil
	}
	f64, ok := floatBinaryFunc(op)
	if !ok {
		return nil, fmt.Errorf("%v has no float kernel", op)
	}
	f := func(a, b T) T { return T(f64(float64(a), float64(b))) }
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		bcastLoop2(p, tensor.Elems[T](out.Data), tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), f)
		return nil
	}, nil
}

var (
	errIntDivZero = errors.New("integer division by zero")
	errIntNegPow  = errors.New("integer Pow with a negative exponent")
	errNegShift   = errors.New("negative shift count")
)

func intBinary[T ewInt](op graph.Op, p *bcastPlan) (Kernel, error) {
	if c := compareFunc[T](op); c != nil {
		return compareKernel(p, c), nil
	}
	var f func(a, b T) T
	var bad func(b T) bool // a y element the op cannot take
	var badErr error
	switch op {
	case graph.OpAdd:
		f = func(a, b T) T { return a + b }
	case graph.OpSub:
		f = func(a, b T) T { return a - b }
	case graph.OpMul:
		f = func(a, b T) T { return a * b }
	case graph.OpDiv:
		// Go's / truncates toward zero, and MinInt / -1 wraps to MinInt.
		f = func(a, b T) T { return a / b }
		bad, badErr = func(b T) bool { return b == 0 }, errIntDivZero
	case graph.OpPow:
		f = intPow[T]
		bad, badErr = func(b T) bool { return b < 0 }, errIntNegPow
	case graph.OpMax:
		f = func(a, b T) T { return max(a, b) }
	case graph.OpMin:
		f = func(a, b T) T { return min(a, b) }
	case graph.OpFmod:
		// Go's % has the dividend's sign; MinInt % -1 is 0.
		f = func(a, b T) T { return a % b }
		bad, badErr = func(b T) bool { return b == 0 }, errIntDivZero
	case graph.OpMod:
		f = func(a, b T) T {
			r := a % b
			if r != 0 && (r < 0) != (b < 0) {
				r += b
			}
			return r
		}
		bad, badErr = func(b T) bool { return b == 0 }, errIntDivZero
	case graph.OpShiftLeft:
		// Go defines shifts past the width (0), as numpy does.
		f = func(a, b T) T { return a << b }
		bad, badErr = func(b T) bool { return b < 0 }, errNegShift
	case graph.OpShiftRight:
		f = func(a, b T) T { return a >> b }
		bad, badErr = func(b T) bool { return b < 0 }, errNegShift
	default:
		return nil, fmt.Errorf("%v has no integer kernel", op)
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		y := tensor.Elems[T](ins[1].Data)
		// A non-empty broadcast reads every element of y, so checking y
		// up front is exact, and nothing is written on error.
		if bad != nil && len(out.Data) > 0 {
			for _, v := range y {
				if bad(v) {
					return badErr
				}
			}
		}
		bcastLoop2(p, tensor.Elems[T](out.Data), tensor.Elems[T](ins[0].Data), y, f)
		return nil
	}, nil
}

// intPow is b multiplied e times (e >= 0) with wrapping arithmetic,
// computed by squaring: integers modulo 2^n form a ring, so the result is
// the same as e repeated multiplications.
func intPow[T ewInt](b, e T) T {
	r := T(1)
	for e > 0 {
		if e&1 == 1 {
			r *= b
		}
		b *= b
		e >>= 1
	}
	return r
}

// boolBinary handles Equal, And and Or on Bool bytes; any non-zero byte
// reads as true.
func boolBinary(op graph.Op, p *bcastPlan) (Kernel, error) {
	var f func(a, b uint8) uint8
	switch op {
	case graph.OpEqual:
		f = func(a, b uint8) uint8 { return boolByte((a != 0) == (b != 0)) }
	case graph.OpAnd:
		f = func(a, b uint8) uint8 { return boolByte(a != 0 && b != 0) }
	case graph.OpOr:
		f = func(a, b uint8) uint8 { return boolByte(a != 0 || b != 0) }
	case graph.OpXor:
		f = func(a, b uint8) uint8 { return boolByte((a != 0) != (b != 0)) }
	default:
		return nil, fmt.Errorf("%v has no bool kernel", op)
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		bcastLoop2(p, out.Data, ins[0].Data, ins[1].Data, f)
		return nil
	}, nil
}

func prepareWhere(n *graph.Node) (Kernel, error) {
	if len(n.Inputs) != 3 {
		return nil, fmt.Errorf("%d inputs, want 3", len(n.Inputs))
	}
	c, x, y := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if c.DType != tensor.Bool || x.DType != y.DType || n.DType != x.DType {
		return nil, fmt.Errorf("dtypes cond %v, x %v, y %v, result %v: want bool and three equal", c.DType, x.DType, y.DType, n.DType)
	}
	p, err := newBcastPlan(n.Shape, c.Shape, x.Shape, y.Shape)
	if err != nil {
		return nil, err
	}
	k := whereBySize(x.DType.Size(), p, false)
	if k == nil {
		return nil, fmt.Errorf("dtype %v has no reference kernel", x.DType)
	}
	return sizeChecked(n, k), nil
}

// whereBySize is Where's kernel for values of size bytes: whole rows
// copied with rows (whereRowsKernel, where_fast.go), else element by
// element; nil for a size without one.
func whereBySize(size int, p *bcastPlan, rows bool) Kernel {
	switch size {
	case 1:
		return whereOf[uint8](p, rows)
	case 2:
		return whereOf[uint16](p, rows)
	case 4:
		return whereOf[uint32](p, rows)
	case 8:
		return whereOf[uint64](p, rows)
	}
	return nil
}

func whereOf[T uint8 | uint16 | uint32 | uint64](p *bcastPlan, rows bool) Kernel {
	if rows {
		return whereRowsKernel[T](p)
	}
	return whereKernel[T](p)
}

// whereKernel copies elements of size T as bits, which serves every dtype
// of that size (a Bool x/y is copied byte for byte).
func whereKernel[T uint8 | uint16 | uint32 | uint64](p *bcastPlan) Kernel {
	pick := func(c uint8, a, b T) T {
		if c != 0 {
			return a
		}
		return b
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		bcastLoop3(p, tensor.Elems[T](out.Data), ins[0].Data, tensor.Elems[T](ins[1].Data), tensor.Elems[T](ins[2].Data), pick)
		return nil
	}
}

func prepareCast(n *graph.Node) (Kernel, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("%d inputs, want 1", len(n.Inputs))
	}
	if n.DType != n.Attrs.To || !n.Inputs[0].Shape.Equal(n.Shape) {
		return nil, fmt.Errorf("result %v%v, want %v%v", n.DType, n.Shape, n.Attrs.To, n.Inputs[0].Shape)
	}
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		return tensor.Convert(out, ins[0])
	}), nil
}
