package ptxemu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// The activations with attributes, Tan, the hyperbolic and inverse
// trigonometric functions, Sign, Mod/Fmod and the U8 shifts
// against the CPU reference (float64 formulas): each float function over
// every f32 exponent (both signs, powSpecials added) and its own domain's
// edges, in both Approx modes; the integer ops over every U8 pair, the
// extremes of the wider types and a negative divisor of -1.
func TestSweepActivation(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(23, 24))
	f32s := func(v []float64) tensor.Tensor {
		x, _ := tensor.FromFloat64s(tensor.F32, tensor.Shape{len(v)}, v)
		return x
	}
	wide := append(logUniform(r, 20000, -130, 128), powSpecials...)
	// [-1, 1] densely, near ±1 and 0, and past the ends.
	var unit []float64
	for range 6000 {
		unit = append(unit, 2*r.Float64()-1)
	}
	for _, d := range logUniform(r, 3000, -60, -1) {
		unit = append(unit, d, 1-math.Abs(d), math.Abs(d)-1)
	}
	unit = append(unit, powSpecials...)
	// acosh: 1 + 2^u and wide values.
	var fromOne []float64
	for _, d := range logUniform(r, 6000, -40, 128) {
		fromOne = append(fromOne, 1+math.Abs(d))
	}
	fromOne = append(append(fromOne, wide[:4000]...), powSpecials...)
	type fc struct {
		op  graph.Op
		at  graph.Attrs
		ins []float64
	}
	floats := []fc{
		{graph.OpTan, graph.Attrs{}, floatsOf(trigInputs(r, 20000))},
		{graph.OpSinh, graph.Attrs{}, wide}, {graph.OpCosh, graph.Attrs{}, wide},
		{graph.OpAtan, graph.Attrs{}, wide}, {graph.OpAsinh, graph.Attrs{}, wide},
		{graph.OpAsin, graph.Attrs{}, unit}, {graph.OpAcos, graph.Attrs{}, unit}, {graph.OpAtanh, graph.Attrs{}, unit},
		{graph.OpAcosh, graph.Attrs{}, fromOne},
		{graph.OpSoftplus, graph.Attrs{}, wide}, {graph.OpSoftsign, graph.Attrs{}, wide}, {graph.OpSign, graph.Attrs{}, wide},
		{graph.OpElu, graph.Attrs{Alpha: 0.7}, wide}, {graph.OpSelu, graph.Attrs{Alpha: 1.6732632, Beta: 1.050701}, wide},
		{graph.OpCelu, graph.Attrs{Alpha: -2}, wide}, {graph.OpCelu, graph.Attrs{Alpha: 0.5}, wide},
		{graph.OpThresholdedRelu, graph.Attrs{Alpha: 1}, wide}, {graph.OpShrink, graph.Attrs{Alpha: 0.5, Beta: 0.25}, wide},
	}
	for _, c := range floats {
		x := f32s(c.ins)
		e := &ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("sweep_%v", c.op), Shape: []int{len(c.ins)},
			Out: tensor.F32, Inputs: []ptx.Operand{{DType: tensor.F32, Strides: []int{1}}},
			Body: []ptx.Instr{{Op: c.op, Args: []int{0}, DType: tensor.F32, Attrs: c.at}}}}
		sweepRun(t, e, []tensor.Tensor{x})
	}
	// Float remainders: pairs over every exponent (up to ~280 reduction
	// steps), the special pairs, and exact multiples (signed zeros).
	px, py := logUniform(r, 20000, -149, 128), logUniform(r, 20000, -149, 128)
	for i := range 2000 {
		py[i] = math.Round(py[i]*1e3) / 1e3
		px[i] = py[i] * float64(r.IntN(200)-100)
	}
	sx, sy := pairGrid(powSpecials)
	for _, op := range []graph.Op{graph.OpMod, graph.OpFmod} {
		sweepRun(t, binaryChain(op, tensor.F32, len(px)), []tensor.Tensor{f32s(px), f32s(py)})
		sweepRun(t, binaryChain(op, tensor.F32, sx.NumElements()), []tensor.Tensor{sx, sy})
	}
	// Every U8 pair for the shifts and remainders; the wider types' extremes.
	var ua, ub []float64
	for a := range 256 {
		for b := range 256 {
			ua, ub = append(ua, float64(a)), append(ub, float64(b))
		}
	}
	u8a, _ := tensor.FromFloat64s(tensor.U8, tensor.Shape{len(ua)}, ua)
	u8b, _ := tensor.FromFloat64s(tensor.U8, tensor.Shape{len(ub)}, ub)
	for _, op := range []graph.Op{graph.OpShiftLeft, graph.OpShiftRight} {
		sweepRun(t, binaryChain(op, tensor.U8, len(ua)), []tensor.Tensor{u8a, u8b})
	}
	nz := func(dt tensor.DType, v []float64) tensor.Tensor { // divisors: no zero
		for i := range v {
			if v[i] == 0 {
				v[i] = 1
			}
		}
		x, _ := tensor.FromFloat64s(dt, tensor.Shape{len(v)}, v)
		return x
	}
	for _, op := range []graph.Op{graph.OpMod, graph.OpFmod} {
		sweepRun(t, binaryChain(op, tensor.U8, len(ua)), []tensor.Tensor{u8a, nz(tensor.U8, append([]float64(nil), ub...))})
		for _, dt := range []tensor.DType{tensor.I8, tensor.I32, tensor.I64} {
			ext := map[tensor.DType][2]float64{tensor.I8: {-128, 127}, tensor.I32: {math.MinInt32, math.MaxInt32},
				tensor.I64: {math.MinInt64, 1 << 62}}[dt] // 2^63 is past int64
			lo, hi := ext[0], ext[1]
			var a, b []float64
			for i := range 4000 {
				x := randTensor(r, dt, false, 2).Float64s()
				a, b = append(a, x[0]), append(b, x[1])
				switch i % 8 {
				case 0:
					a[i] = lo
				case 1:
					a[i] = hi
				case 2:
					b[i] = -1
				case 3:
					b[i] = lo
				}
			}
			at, _ := tensor.FromFloat64s(dt, tensor.Shape{len(a)}, a)
			sweepRun(t, binaryChain(op, dt, len(a)), []tensor.Tensor{at, nz(dt, b)})
		}
	}
}

// binaryChain is op on two flat n-element inputs of dt.
func binaryChain(op graph.Op, dt tensor.DType, n int) *ptx.Elementwise {
	return &ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("sweep_%v_%v", op, dt), Shape: []int{n}, Out: dt,
		Inputs: []ptx.Operand{{DType: dt, Strides: []int{1}}, {DType: dt, Strides: []int{1}}},
		Body:   []ptx.Instr{{Op: op, Args: []int{0, 1}, DType: dt}}}}
}

// sweepRun emits e, runs it in both Approx modes and compares with the
// reference, logging a float result's worst relative error.
func sweepRun(t *testing.T, e *ptx.Elementwise, ins []tensor.Tensor) {
	t.Helper()
	k, err := ptx.EmitElementwise(e)
	if err != nil {
		t.Fatalf("%s: %v", e.Name, err)
	}
	want := refElementwise(t, e, ins)
	for _, mode := range []Approx{ApproxExact, ApproxBound} {
		got := sentinel(e.Out, e.Shape...)
		if err := runKernel(t, k, Options{Approx: mode}, got, ins...); err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		name := fmt.Sprintf("%s/approx%d", e.Name, mode)
		if compareTensors(t, name, got, want, tolFor(e.Out)) && e.Out == tensor.F32 {
			t.Logf("%s: worst relative error %.3g", name, worstRel(got, want))
		}
	}
}

// floatsOf is x's elements as float64.
func floatsOf(x tensor.Tensor) []float64 { return x.Float64s() }
