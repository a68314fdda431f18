package ptx

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// powTrigVariants are the Pow, Sin and Cos kernels: every dtype, a
// broadcast, a fused chain and a 64-bit index space.
func powTrigVariants(t testing.TB) []*Kernel {
	var ks []*Kernel
	add := func(e *Elementwise) {
		k, err := EmitElementwise(e)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		ks = append(ks, k)
	}
	shape, full := []int{4, 5, 6}, []int{30, 6, 1}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16} {
		for _, op := range []graph.Op{graph.OpSin, graph.OpCos} {
			add(&Elementwise{Elementwise: kdesc.Elementwise{Name: fmt.Sprintf("u_%v_%v", op, dt), Shape: shape, Out: dt,
				Inputs: []Operand{{DType: dt, Strides: full}},
				Body:   []Instr{{Op: op, Args: []int{0}, DType: dt}}}})
		}
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.I8, tensor.U8, tensor.I32, tensor.I64} {
		add(&Elementwise{Elementwise: kdesc.Elementwise{Name: "b_Pow_" + dt.String(), Shape: shape, Out: dt,
			Inputs: []Operand{{DType: dt, Strides: full}, {DType: dt, Strides: []int{0, 0, 1}}},
			Body:   []Instr{{Op: graph.OpPow, Args: []int{0, 1}, DType: dt}}}})
	}
	add(&Elementwise{Elementwise: kdesc.Elementwise{Name: "chain_pow_trig", Shape: []int{3, 1 << 30}, Out: tensor.F16,
		Inputs: []Operand{{DType: tensor.F16, Strides: []int{1 << 30, 1}}, {DType: tensor.F32, Strides: []int{1, 0}}},
		Body: []Instr{{Op: graph.OpCast, Args: []int{0}, DType: tensor.F32},
			{Op: graph.OpPow, Args: []int{2, 1}, DType: tensor.F32},
			{Op: graph.OpSin, Args: []int{3}, DType: tensor.F32},
			{Op: graph.OpCos, Args: []int{4}, DType: tensor.F32},
			{Op: graph.OpPow, Args: []int{5, 5}, DType: tensor.F32},
			{Op: graph.OpCast, Args: []int{6}, DType: tensor.F16}}}})
	return ks
}

func TestPowTrigAssemble(t *testing.T) {
	ks := powTrigVariants(t)
	for _, k := range ks {
		if _, err := Parse(Module(k)); err != nil {
			t.Errorf("%s: %v", k.Name, err)
		}
	}
	assemble(t, ks)
}

// piDigits is π to 100 decimals, for constants checked in big.Float.
const piDigits = "3.1415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679"

// TestTrigConstants recomputes the reduction constants from π's digits.
func TestTrigConstants(t *testing.T) {
	pi, _, err := new(big.Float).SetPrec(400).Parse(piDigits, 10)
	if err != nil {
		t.Fatal(err)
	}
	rest := new(big.Float).SetPrec(400).Quo(pi, big.NewFloat(2))
	for i, p := range pio2Parts {
		want, _ := rest.Float32()
		if p != want {
			t.Errorf("pio2Parts[%d] = %g, want %g", i, p, want)
		}
		rest.Sub(rest, big.NewFloat(float64(want)))
	}
	frac := new(big.Float).SetPrec(400).Quo(big.NewFloat(2), pi)
	for i, w := range twoOverPiWords[1:] {
		frac.Mul(frac, big.NewFloat(1<<32))
		d, _ := frac.Uint64()
		if uint64(w) != d {
			t.Errorf("twoOverPiWords[%d] = %#x, want %#x", i+1, w, d)
		}
		frac.Sub(frac, new(big.Float).SetUint64(d))
	}
	if twoOverPiWords[0] != 0 {
		t.Error("twoOverPiWords[0] must be the zero integer part")
	}
	// sin(1) from the Taylor coefficients: a check on their signs and order.
	if s := float64(1 * horner32(sinCoeffs, 1)); approx.Far(s, math.Sin(1), 1e-6) {
		t.Errorf("sin polynomial at 1 = %g, want %g", s, math.Sin(1))
	}
	if c := float64(horner32(cosCoeffs, 1)); approx.Far(c, math.Cos(1), 1e-6) {
		t.Errorf("cos polynomial at 1 = %g, want %g", c, math.Cos(1))
	}
}
