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

// Pow, Sin and Cos against the CPU reference (math.Pow/Sin/Cos in
// float64): every pair of special values, dense sweeps over the f32
// exponent range (Payne–Hanek arguments up to 3.4e38, bases and
// exponents whose y·log|x| nears exp's overflow and underflow), arguments
// next to multiples of π/2, integer Pow with wrapping, and fused chains.
// Both Approx modes run, so the hardware ex2's error is inside the bound.

// powSpecials are the values math.Pow treats apart, and neighbours.
var powSpecials = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 2, -2, 0.5, -0.5,
	3, -3, 1.5, -1.5, 1e-40, -1e-40, 3e38, -3e38, 0.999, 1.001, 1 << 24, -(1 << 24) - 2, (1 << 24) - 1, 7, -7, 100, -100}

// pairGrid is every (x, y) pair of vs, as two F32 tensors.
func pairGrid(vs []float64) (tensor.Tensor, tensor.Tensor) {
	n := len(vs)
	xs, ys := make([]float64, 0, n*n), make([]float64, 0, n*n)
	for _, x := range vs {
		for _, y := range vs {
			xs, ys = append(xs, x), append(ys, y)
		}
	}
	x, _ := tensor.FromFloat64s(tensor.F32, tensor.Shape{n * n}, xs)
	y, _ := tensor.FromFloat64s(tensor.F32, tensor.Shape{n * n}, ys)
	return x, y
}

// logUniform makes n values ±2^u with u uniform in [lo, hi].
func logUniform(r *rand.Rand, n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Exp2(lo + (hi-lo)*r.Float64())
		if r.IntN(2) == 0 {
			v[i] = -v[i]
		}
	}
	return v
}

// powInputs pairs bases over the whole f32 range with exponents scaled so
// that |y·log2|x|| spans 0..160 (past overflow), half of them integers.
func powInputs(r *rand.Rand, n int) (tensor.Tensor, tensor.Tensor) {
	xs := logUniform(r, n, -149, 128)
	ys := make([]float64, n)
	for i, x := range xs {
		t := r.Float64()*160 - 80
		y := t / math.Log2(math.Abs(x))
		if i%2 == 0 {
			y = math.Round(y)
		}
		if i%5 == 0 {
			xs[i] = math.Abs(x)
		}
		ys[i] = y
	}
	x, _ := tensor.FromFloat64s(tensor.F32, tensor.Shape{n}, xs)
	y, _ := tensor.FromFloat64s(tensor.F32, tensor.Shape{n}, ys)
	return x, y
}

// trigInputs spans every exponent and adds the f32 values nearest to
// multiples of π/2 (where the reduction cancels most bits).
func trigInputs(r *rand.Rand, n int) tensor.Tensor {
	v := append(logUniform(r, n, -130, 128), powSpecials...)
	for k := 1.0; k < 1e38; k *= 3.7 {
		c := math.Round(k) * math.Pi / 2
		f := float32(c)
		v = append(v, float64(f), float64(math.Nextafter32(f, 0)), float64(math.Nextafter32(f, float32(math.Inf(1)))))
	}
	x, _ := tensor.FromFloat64s(tensor.F32, tensor.Shape{len(v)}, v)
	return x
}

func TestSweepPowTrig(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 10))
	type tc struct {
		e   *ptx.Elementwise
		ins []tensor.Tensor
	}
	var cases []tc
	flat := func(name string, out tensor.DType, ins []tensor.Tensor, body ...ptx.Instr) {
		e := &ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: name, Shape: []int{ins[0].Shape.NumElements()}, Out: out, Body: body}}
		for _, in := range ins {
			e.Inputs = append(e.Inputs, ptx.Operand{DType: in.DType, Strides: []int{1}})
		}
		cases = append(cases, tc{e, ins})
	}
	gx, gy := pairGrid(powSpecials)
	flat("pow_specials", tensor.F32, []tensor.Tensor{gx, gy}, ptx.Instr{Op: graph.OpPow, Args: []int{0, 1}, DType: tensor.F32})
	px, py := powInputs(r, 20000)
	flat("pow_range", tensor.F32, []tensor.Tensor{px, py}, ptx.Instr{Op: graph.OpPow, Args: []int{0, 1}, DType: tensor.F32})
	tx := trigInputs(r, 20000)
	for _, op := range []graph.Op{graph.OpSin, graph.OpCos} {
		flat(fmt.Sprintf("%v_range", op), tensor.F32, []tensor.Tensor{tx}, ptx.Instr{Op: op, Args: []int{0}, DType: tensor.F32})
	}
	// F16/BF16 and broadcasting, with randTensor's data and specials.
	shape, full := []int{4, 5, 6}, []int{30, 6, 1}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16} {
		for _, op := range []graph.Op{graph.OpSin, graph.OpCos} {
			e := &ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("u_%v_%v", op, dt), Shape: shape, Out: dt,
				Inputs: []ptx.Operand{{DType: dt, Strides: full}},
				Body:   []ptx.Instr{{Op: op, Args: []int{0}, DType: dt}}}}
			cases = append(cases, tc{e, inputsFor(r, e, true)})
		}
		e := &ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: "b_Pow_" + dt.String(), Shape: shape, Out: dt,
			Inputs: []ptx.Operand{{DType: dt, Strides: full}, {DType: dt, Strides: []int{0, 0, 1}}},
			Body:   []ptx.Instr{{Op: graph.OpPow, Args: []int{0, 1}, DType: dt}}}}
		cases = append(cases, tc{e, inputsFor(r, e, true)})
	}
	// Integers: wrapping bases, exponents 0..40 and a few up to the max.
	for _, dt := range []tensor.DType{tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
		e := &ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: "ib_Pow_" + dt.String(), Shape: shape, Out: dt,
			Inputs: []ptx.Operand{{DType: dt, Strides: full}, {DType: dt, Strides: []int{0, 1, 0}}},
			Body:   []ptx.Instr{{Op: graph.OpPow, Args: []int{0, 1}, DType: dt}}}}
		exps := make([]float64, 5)
		for i := range exps {
			exps[i] = float64(r.IntN(41))
		}
		exps[4] = map[tensor.DType]float64{tensor.I8: 127, tensor.U8: 255, tensor.I32: math.MaxInt32, tensor.I64: math.MaxInt64}[dt]
		y, _ := tensor.FromFloat64s(dt, tensor.Shape{5}, exps)
		cases = append(cases, tc{e, []tensor.Tensor{randTensor(r, dt, true, 120), y}})
	}
	// A fused chain: x^y·sin(x) + cos(y), rounded through F16 mid-chain.
	cases = append(cases, tc{&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: "chain_pow_trig", Shape: []int{400}, Out: tensor.F32,
		Inputs: []ptx.Operand{{DType: tensor.F32, Strides: []int{1}}, {DType: tensor.F32, Strides: []int{1}}},
		Body: []ptx.Instr{{Op: graph.OpPow, Args: []int{0, 1}, DType: tensor.F32},
			{Op: graph.OpSin, Args: []int{0}, DType: tensor.F32},
			{Op: graph.OpMul, Args: []int{2, 3}, DType: tensor.F32},
			{Op: graph.OpCos, Args: []int{1}, DType: tensor.F32},
			{Op: graph.OpAdd, Args: []int{4, 5}, DType: tensor.F32},
			{Op: graph.OpCast, Args: []int{6}, DType: tensor.F16},
			{Op: graph.OpCast, Args: []int{7}, DType: tensor.F32}}}},
		[]tensor.Tensor{randTensor(r, tensor.F32, true, 400), randTensor(r, tensor.F32, true, 400)}})
	for _, c := range cases {
		k, err := ptx.EmitElementwise(c.e)
		if err != nil {
			t.Fatalf("%s: %v", c.e.Name, err)
		}
		want := refElementwise(t, c.e, c.ins)
		for _, mode := range []Approx{ApproxExact, ApproxBound} {
			got := sentinel(c.e.Out, c.e.Shape...)
			if err := runKernel(t, k, Options{Approx: mode}, got, c.ins...); err != nil {
				t.Fatalf("%s: %v", c.e.Name, err)
			}
			name := fmt.Sprintf("%s/approx%d", c.e.Name, mode)
			if compareTensors(t, name, got, want, tolFor(c.e.Out)) && c.e.Out == tensor.F32 {
				t.Logf("%s: worst relative error %.3g", name, worstRel(got, want))
			}
		}
	}
}

// worstRel is the largest relative error over finite, normal expected
// values (for the log: how far inside the tolerance a case sits).
func worstRel(got, want tensor.Tensor) float64 {
	g, w := got.Float64s(), want.Float64s()
	worst := 0.0
	for i := range w {
		if math.Abs(w[i]) >= 0x1p-126 && !math.IsInf(w[i], 0) {
			worst = max(worst, math.Abs(g[i]-w[i])/math.Abs(w[i]))
		}
	}
	return worst
}

// TestPowIntNegativeExponent pins the GPU value the ptx package documents
// for a negative integer exponent, which the CPU reference rejects: 1.
func TestPowIntNegativeExponent(t *testing.T) {
	x, _ := tensor.FromI32(tensor.Shape{4}, []int32{2, -3, 0, 1})
	y, _ := tensor.FromI32(tensor.Shape{4}, []int32{-1, -2, -5, math.MinInt32})
	k, err := ptx.EmitElementwise(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: "ipow", Shape: []int{4}, Out: tensor.I32,
		Inputs: []ptx.Operand{{DType: tensor.I32, Strides: []int{1}}, {DType: tensor.I32, Strides: []int{1}}},
		Body:   []ptx.Instr{{Op: graph.OpPow, Args: []int{0, 1}, DType: tensor.I32}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := sentinel(tensor.I32, 4)
	if err := runKernel(t, k, Options{}, got, x, y); err != nil {
		t.Fatal(err)
	}
	for i, v := range got.I32() {
		if v != 1 {
			t.Errorf("%d^%d = %d, want 1", x.I32()[i], y.I32()[i], v)
		}
	}
}
