package kiln_test

import (
	"math"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Half-precision bit patterns with their exact values, worked out by hand
// from the formats (sign, exponent bias 15 or 127, 10 or 7 mantissa bits).
var (
	f16Bits = []uint16{0x3C00, 0xC100, 0x3555, 0x0001, 0x7BFF, 0x8000}
	f16Vals = []float32{1, -2.5, 0.333251953125, 5.9604644775390625e-08, 65504, float32(math.Copysign(0, -1))}

	bf16Bits = []uint16{0x3F80, 0xC020, 0x3EAB, 0x4049, 0xFF80, 0x0000}
	bf16Vals = []float32{1, -2.5, 0.333984375, 3.140625, float32(math.Inf(-1)), 0}
)

// passThrough is out = x + w for an input x and a param w of dtype dt,
// both [6], with w cast to F32 first when it is not F32.
func passThrough(dt tensor.DType) *graph.Graph {
	g := graph.New()
	x := g.Input("x", tensor.F32, 6)
	w := g.Param("w", dt, 6)
	if dt != tensor.F32 {
		w = g.Cast(w, tensor.F32)
	}
	g.Output(g.Add(x, w))
	return g
}

// TestSetParamTypedWidens feeds F16 and BF16 bytes into an F32 param and
// reads them back through x = 0: the exact widened values must come out.
func TestSetParamTypedWidens(t *testing.T) {
	for _, c := range []struct {
		dt   tensor.DType
		bits []uint16
		want []float32
	}{{tensor.F16, f16Bits, f16Vals}, {tensor.BF16, bf16Bits, bf16Vals}} {
		t.Run(c.dt.String(), func(t *testing.T) {
			cg, err := kiln.NewSession(kiln.CPU).Compile(passThrough(tensor.F32))
			if err != nil {
				t.Fatal(err)
			}
			defer cg.Close()
			if err := cg.SetParamTyped("w", tensor.Bytes(c.bits), c.dt); err != nil {
				t.Fatal(err)
			}
			// x = -0 keeps the sign of every w (+0 + -0 would be +0).
			negZero := float32(math.Copysign(0, -1))
			out, err := cg.Run(kiln.In("x", []float32{negZero, negZero, negZero, negZero, negZero, negZero}))
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range c.want {
				if out[0][i] != w || math.Signbit(float64(out[0][i])) != math.Signbit(float64(w)) {
					t.Errorf("element %d (bits %#04x): got %v, want %v", i, c.bits[i], out[0][i], w)
				}
			}
			// Too few bytes, and an odd byte count, are errors.
			if err := cg.SetParamTyped("w", tensor.Bytes(c.bits[:5]), c.dt); err == nil {
				t.Error("5 elements for a 6-element param: no error")
			}
			if err := cg.SetParamTyped("w", tensor.Bytes(c.bits)[:11], c.dt); err == nil {
				t.Error("11 bytes of 2-byte elements: no error")
			}
		})
	}
}

// TestSetParamNarrows feeds float32 values into an F16 param: they are
// rounded to the nearest half (ties to even), overflowing to Inf.
func TestSetParamNarrows(t *testing.T) {
	cg, err := kiln.NewSession(kiln.CPU).Compile(passThrough(tensor.F16))
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	in := []float32{1, float32(1.0 / 3), 65519, 70000, -2.5, 1 + 1.0/2048}
	// 65519 is below the halfway point 65520 between 65504 and 2^16, so it
	// rounds down; 70000 is past it, so it overflows. 1 + 2^-11 is halfway
	// between 1 and 1 + 2^-10 and ties to the even 1.
	want := []float32{1, 0.333251953125, 65504, float32(math.Inf(1)), -2.5, 1}
	if err := cg.SetParam("w", in); err != nil {
		t.Fatal(err)
	}
	x := seq(6, 0, 0)
	out, err := cg.Run(kiln.In("x", x))
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if out[0][i] != want[i] {
			t.Errorf("element %d: %v narrowed to f16 gave %v, want %v", i, in[i], out[0][i], want[i])
		}
	}
	if got := cg.Params()[0].DType; got != tensor.F16 {
		t.Errorf("param dtype %v, want f16", got)
	}
}

// TestSetParamHalfMLP sets an MLP's weights from BF16 and F16 bytes and
// compares with the interpreter fed the widened values.
func TestSetParamHalfMLP(t *testing.T) {
	g, feeds := smallMLP(t)
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	w1 := []uint16{0x3F80, 0, 0, 0xBF80, 0, 0x3F80, 0, 0x3F80, 0, 0, 0x3F80, 0x3F80} // bf16 of w1
	w2 := []uint16{0x3C00, 0, 0, 0x3C00, 0x3C00, 0x3C00, 0x4000, 0xBC00}             // f16 of w2
	for _, p := range []struct {
		name string
		b    []byte
		dt   tensor.DType
	}{
		{"w1", tensor.Bytes(w1), tensor.BF16},
		{"w2", tensor.Bytes(w2), tensor.F16},
		{"b1", feeds["b1"].Data, tensor.F32},
		{"b2", feeds["b2"].Data, tensor.F32},
	} {
		if err := cg.SetParamTyped(p.name, p.b, p.dt); err != nil {
			t.Fatal(err)
		}
	}
	out, err := cg.Run(kiln.In("x", feeds["x"].F32()))
	if err != nil {
		t.Fatal(err)
	}
	if err := closeTo(out[0], smallMLPWant, 0); err != nil {
		t.Error(err)
	}
}

// TestParamErrors checks SetParam's errors: unknown name (the message
// lists the real ones), wrong size, an invalid dtype.
func TestParamErrors(t *testing.T) {
	g, _ := smallMLP(t)
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if err := cg.SetParam("nope", []float32{1}); err == nil {
		t.Error("unknown param: no error")
	} else if !strings.Contains(err.Error(), "w1") {
		t.Errorf("unknown param error %q does not list the params", err)
	}
	if err := cg.SetParam("b1", []float32{1, 2, 3}); err == nil {
		t.Error("3 values for a 4-element param: no error")
	}
	if err := cg.SetParam("b1", nil); err == nil {
		t.Error("nil for a 4-element param: no error")
	}
	if err := cg.SetParamTyped("b1", make([]byte, 16), tensor.Invalid); err == nil {
		t.Error("invalid dtype: no error")
	}
	if err := cg.SetParamTyped("b1", make([]byte, 4), tensor.I32); err == nil {
		t.Error("1 i32 for 4 elements: no error")
	}
	// I32 values are converted like any other dtype.
	if err := cg.SetParamTyped("b1", tensor.Bytes([]int32{0, 0, -2, 0}), tensor.I32); err != nil {
		t.Errorf("i32 into f32 param: %v", err)
	}
}
