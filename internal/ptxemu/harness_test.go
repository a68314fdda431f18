package ptxemu

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// runKernel loads k alone, maps out and ins as device memory (out first,
// as kiln's kernels take it), launches k with its own geometry and checks
// that the inputs come back unchanged.
func runKernel(t testing.TB, k *ptx.Kernel, o Options, out tensor.Tensor, ins ...tensor.Tensor) error {
	t.Helper()
	m, err := Load(ptx.Module(k))
	if err != nil {
		return err
	}
	if info, err := m.Kernel(k.Name); err != nil || info.Shared != k.Shared || len(info.Params) != len(k.Params) {
		t.Errorf("%s: loaded as %+v (%v); the emitter declares %d shared bytes and %d params", k.Name, info, err, k.Shared, len(k.Params))
	}
	mem := NewMemory()
	args := make([]any, 0, 1+len(ins))
	a, err := mem.Map(out.Data)
	if err != nil {
		return err
	}
	args = append(args, a)
	saved := make([][]byte, len(ins))
	for i, in := range ins {
		saved[i] = bytes.Clone(in.Data)
		a, err := mem.Map(in.Data)
		if err != nil {
			return err
		}
		args = append(args, a)
	}
	if err := m.LaunchWith(o, mem, k.Name, k.Launch, args...); err != nil {
		return err
	}
	for i, in := range ins {
		if !bytes.Equal(saved[i], in.Data) {
			t.Errorf("%s: input %d was modified", k.Name, i)
		}
	}
	return nil
}

// sentinel fills an output with a pattern no kernel writes by chance
// (0xABAB... is a NaN-free, odd value in every dtype), so unwritten
// elements show up in the comparison.
func sentinel(dt tensor.DType, shape ...int) tensor.Tensor {
	out := tensor.New(dt, shape...)
	for i := range out.Data {
		out.Data[i] = 0xAB
	}
	return out
}

// edgeValues are edge values mixed into float test data.
var edgeValues = []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 1, -1, 0.5, 1e-40, -3e38, 70000, 1e-6}

// randTensor makes seeded data of dt: floats uniform in [-lo, hi] with
// specials sprinkled in when withSpecials, integers across a range that
// includes the type's extremes, Bool half true.
func randTensor(r *rand.Rand, dt tensor.DType, withSpecials bool, shape ...int) tensor.Tensor {
	n := tensor.Shape(shape).NumElements()
	v := make([]float64, n)
	for i := range v {
		switch {
		case dt.IsFloat():
			v[i] = r.Float64()*6 - 3
			if withSpecials && i%7 == 3 {
				v[i] = edgeValues[(i/7)%len(edgeValues)]
			}
		case dt == tensor.Bool:
			v[i] = float64(r.IntN(2))
		case dt == tensor.U8:
			v[i] = float64(r.IntN(256))
		case dt == tensor.I8:
			v[i] = float64(r.IntN(256) - 128)
		default:
			v[i] = float64(r.IntN(2001) - 1000)
			if withSpecials && i%11 == 5 {
				v[i] = []float64{math.MaxInt32, math.MinInt32, 1 << 40, -1 << 40}[(i/11)%4]
			}
		}
	}
	if dt == tensor.I32 {
		for i := range v {
			v[i] = math.Max(math.Min(v[i], math.MaxInt32), math.MinInt32)
		}
	}
	t, err := tensor.FromFloat64s(dt, tensor.Shape(shape), v)
	if err != nil {
		panic(err)
	}
	return t
}

// tol is an absolute plus relative bound.
type tol struct{ abs, rel float64 }

// tolFor is the tolerance of a float result of dtype dt computed in f32
// along a different path from the reference: a few f32 ulps before the
// final rounding, and one ulp of the output type after it.
func tolFor(dt tensor.DType) tol {
	switch dt {
	case tensor.F16:
		return tol{1e-5, 1.0 / 1024}
	case tensor.BF16:
		return tol{1e-5, 1.0 / 128}
	}
	return tol{1e-6, 4e-6}
}

// compareTensors checks got against want element by element: integers
// and Bool exactly, floats within tl with NaN matching NaN and infinities
// exact. It reports the first few mismatches.
func compareTensors(t testing.TB, name string, got, want tensor.Tensor, tl tol) bool {
	t.Helper()
	if got.DType != want.DType || !got.Shape.Equal(want.Shape) {
		t.Errorf("%s: got %v, want %v", name, got, want)
		return false
	}
	if !got.DType.IsFloat() {
		g, w := got.Clone(), want.Clone()
		if got.DType == tensor.Bool {
			for i := range g.Data {
				g.Data[i] = b2byte(g.Data[i] != 0)
				w.Data[i] = b2byte(w.Data[i] != 0)
			}
		}
		if !bytes.Equal(g.Data, w.Data) {
			gi, wi := g.Float64s(), w.Float64s()
			bad := 0
			for i := range gi {
				if gi[i] != wi[i] {
					if bad < 5 {
						t.Errorf("%s: element %d = %v, want %v", name, i, gi[i], wi[i])
					}
					bad++
				}
			}
			t.Errorf("%s: %d of %d elements differ", name, bad, len(gi))
			return false
		}
		return true
	}
	g, w := got.Float64s(), want.Float64s()
	bad := 0
	for i := range g {
		if !closeEnough(g[i], w[i], tl) {
			if bad < 5 {
				t.Errorf("%s: element %d = %v, want %v", name, i, g[i], w[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ beyond %+v", name, bad, len(g), tl)
	}
	return bad == 0
}

func b2byte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func closeEnough(g, w float64, tl tol) bool {
	return approx.Close(g, w, tl.abs+tl.rel*math.Abs(w))
}

// interpret evaluates a graph's outputs with kiln's reference kernels.
func interpret(t testing.TB, g *graph.Graph, feeds map[string]tensor.Tensor) []tensor.Tensor {
	t.Helper()
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	outs, err := ops.Interpret(g, feeds)
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

// widen converts F16/BF16 to F32 (exactly); other dtypes stay.
func widen(x tensor.Tensor) tensor.Tensor {
	if x.DType != tensor.F16 && x.DType != tensor.BF16 {
		return x
	}
	w, err := tensor.FromFloat64s(tensor.F32, x.Shape, x.Float64s())
	if err != nil {
		panic(err)
	}
	return w
}

func wideType(dt tensor.DType) tensor.DType {
	if dt == tensor.F16 || dt == tensor.BF16 {
		return tensor.F32
	}
	return dt
}

// castTo converts x to dt with tensor.Convert's rules.
func castTo(x tensor.Tensor, dt tensor.DType) tensor.Tensor {
	out := tensor.New(dt, x.Shape...)
	if err := tensor.Convert(out, x); err != nil {
		panic(err)
	}
	return out
}

// gatherStrided materialises a strided view of src over shape.
func gatherStrided(src tensor.Tensor, shape, strides []int, base int) tensor.Tensor {
	out := tensor.New(src.DType, shape...)
	es := src.DType.Size()
	n := tensor.Shape(shape).NumElements()
	idx := make([]int, len(shape))
	for i := range n {
		off := base
		for d := range shape {
			off += idx[d] * strides[d]
		}
		copy(out.Data[i*es:(i+1)*es], src.Data[off*es:(off+1)*es])
		for d := len(shape) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// spanOf is how many elements a strided operand reaches.
func spanOf(shape, strides []int) int {
	s := 1
	for d := range shape {
		if shape[d] > 0 {
			s += (shape[d] - 1) * strides[d]
		}
	}
	return s
}
