package ops

import (
	"fmt"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// QDQMatMul and QDQConv (graph/fused.go) are a MatMul, Gemm or Conv whose
// operands are ONNX Runtime's static QDQ form: x through a
// QuantizeLinear/DequantizeLinear pair (U8, per tensor) and w through a
// DequantizeLinear of int8 weights (per tensor or per output channel).
// Both run as integers: x is quantized as QuantizeLinear does it (float32
// quotient, round half to even, saturation), the products are summed
// exactly in int32 (Σ_p (q - xZero)(w - wZero), wrapping as Go's int32),
// and the float epilogue is, per output element,
//
//	y = act(float32(float32(sum) · float32(xScale·wScale)) + bias)
//
// each step rounded to float32 (no fused multiply-add). The unfused
// graph dequantizes both operands and sums float32 products instead, so
// the two agree to float32 rounding, not bit for bit; the integer sums
// are exact in both kernels here, which have the same bits up to the
// activation (the fast kernels apply it on the vector elementwise
// kernels, within a few ulp of the reference's float64 formula). A
// QuantizeLinear after the product (the next layer's input) is the
// consumer's: its fused node quantizes this one's float output.
//
// QDQMatMul shares DynQuantMatMul's kernels (quant_fused.go) with x's
// scale and zero point read from inputs 1 and 2 instead of found in x.
// QDQConv's fast kernel quantizes x, gathers the windows into rows (one
// per output pixel, im2col) with the zero point in the padding (which
// then contributes exactly 0), and runs the same int8 GEMM against the
// weights packed once per weights version.

func init() {
	// Tol: the fast kernels' activations run on the vector elementwise
	// kernels, within a few ulp of the reference's float64 formulas; the
	// sums, scales and bias have the reference's bits.
	Register(Entry{Op: graph.OpQDQMatMul, DTypes: []tensor.DType{tensor.F32}, Reference: prepareQDQMatMul, Tol: 1e-5})
	RegisterFast(graph.OpQDQMatMul, prepareQDQMatMulFast)
	Register(Entry{Op: graph.OpQDQConv, DTypes: []tensor.DType{tensor.F32}, Reference: prepareQDQConv, Tol: 1e-5})
	RegisterFast(graph.OpQDQConv, prepareQDQConvFast)
	RegisterFast(graph.OpConvInteger, prepareConvIntegerFast)
	RegisterFast(graph.OpQuantizeLinear, prepareQuantizeFast)
}

// qdqEpilogue reads the node's epilogue: bias and activation.
func qdqEpilogue(n *graph.Node) (bias bool, act func(float64) float64, err error) {
	e := n.Attrs.Epilogue
	if len(n.Inputs) != 6+btoi(e.Bias) || n.DType != tensor.F32 {
		return false, nil, fmt.Errorf("%d inputs and result %v for epilogue %+v, want %d and f32", len(n.Inputs), n.DType, e, 6+btoi(e.Bias))
	}
	if e.Act != graph.OpInvalid {
		if act, err = floatUnaryFunc(&graph.Node{Op: e.Act}); err != nil {
			return false, nil, err
		}
	}
	xs, xz, w := n.Inputs[1], n.Inputs[2], n.Inputs[3]
	if n.Inputs[0].DType != tensor.F32 || xs.DType != tensor.F32 || xz.DType != tensor.U8 || xs.Shape.NumElements() != 1 || xz.Shape.NumElements() != 1 || !slices.Contains(quant8, w.DType) {
		return false, nil, fmt.Errorf("x %v scale %v%v zero %v%v w %v: want f32 x, per-tensor u8 quantization, i8 or u8 w", n.Inputs[0].DType, xs.DType, xs.Shape, xz.DType, xz.Shape, w.DType)
	}
	return e.Bias, act, nil
}

func qdqMatMulGeomOf(n *graph.Node) (dynQuantGeom, error) {
	bias, act, err := qdqEpilogue(n)
	if err != nil {
		return dynQuantGeom{}, err
	}
	w := n.Inputs[3]
	if w.Shape.Rank() != 2 {
		return dynQuantGeom{}, fmt.Errorf("w %v: want 2-D", w.Shape)
	}
	d := dynQuantGeom{k: w.Shape[0], n: w.Shape[1], bias: bias, wSigned: w.DType == tensor.I8, transB: n.Attrs.TransB, off: 2, act: act}
	if d.transB {
		d.k, d.n = d.n, d.k
	}
	if d.k == 0 {
		return dynQuantGeom{}, fmt.Errorf("w %v has no depth", w.Shape)
	}
	d.m = n.Inputs[0].Shape.NumElements() / d.k
	d.zCols, d.sCols = n.Inputs[4].Shape.NumElements() > 1, n.Inputs[5].Shape.NumElements() > 1
	return d, nil
}

func prepareQDQMatMul(n *graph.Node) (Kernel, error) {
	d, err := qdqMatMulGeomOf(n)
	if err != nil {
		return nil, err
	}
	return quantMatMulReference(n, d), nil
}

func prepareQDQMatMulFast(n *graph.Node, env Env) (Kernel, string, error) {
	d, err := qdqMatMulGeomOf(n)
	if err != nil {
		return nil, "", err
	}
	return quantMatMulFast(n, d, env)
}

// qdqConvGeomOf reads a QDQConv node: its window, the per-channel forms
// and the epilogue as a dynQuantGeom over the im2col product (m output
// pixels of k window cells times n output channels).
func qdqConvGeomOf(n *graph.Node) (*convPlan, dynQuantGeom, error) {
	bias, act, err := qdqEpilogue(n)
	if err != nil {
		return nil, dynQuantGeom{}, err
	}
	p, err := convPlanFor(n, n.Inputs[0].Shape, n.Inputs[3].Shape)
	if err != nil {
		return nil, dynQuantGeom{}, err
	}
	p.bias = bias
	d := dynQuantGeom{m: p.n * p.oh * p.ow, k: p.cpg * p.kh * p.kw, n: p.m, bias: bias, wSigned: n.Inputs[3].DType == tensor.I8, transB: true, off: 2, act: act}
	d.zCols, d.sCols = n.Inputs[4].Shape.NumElements() > 1, n.Inputs[5].Shape.NumElements() > 1
	return p, d, nil
}

func prepareQDQConv(n *graph.Node) (Kernel, error) {
	p, d, err := qdqConvGeomOf(n)
	if err != nil {
		return nil, err
	}
	xq := make([]int32, n.Inputs[0].Shape.NumElements())
	wq := make([]int32, n.Inputs[3].Shape.NumElements())
	acc := make([]int32, n.Shape.NumElements())
	per := p.cpg * p.kh * p.kw // weights per output channel
	ohw := p.oh * p.ow
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		x, s, z := tensor.Elems[float32](ins[0].Data), tensor.Elems[float32](ins[1].Data)[0], ins[2].Data[0]
		w, wz, ws := ins[3].Data, ins[4].Data, tensor.Elems[float32](ins[5].Data)
		for i, v := range x {
			xq[i] = int32(quantizeOne(float64(v/s), float64(z), 0, 255)) - int32(z)
		}
		for i := range wq {
			wq[i] = d.wAt(w, i%per, i/per) - d.zeroAt(wz, i/per)
		}
		runConv2D[int32, int32](&convPlan{window: p.window, m: p.m, cpg: p.cpg, mpg: p.mpg},
			[]tensor.Tensor{{Data: tensor.Bytes(xq)}, {Data: tensor.Bytes(wq)}}, tensor.Tensor{Data: tensor.Bytes(acc)})
		y := tensor.Elems[float32](out.Data)
		var bias []float32
		if d.bias {
			bias = tensor.Elems[float32](ins[6].Data)
		}
		// Channel by channel: the channel's sums are one "row" of
		// dequant with a single column's scale and bias.
		one := d
		one.zCols, one.sCols = false, false
		for b := range p.n {
			for m := range p.m {
				at := (b*p.m + m) * ohw
				sc, bs := ws[:1], []float32(nil)
				if d.sCols {
					sc = ws[m : m+1]
				}
				if d.bias {
					bs = bias[m : m+1]
				}
				for i := at; i < at+ohw; i++ {
					one.dequant(y[i:i+1], acc[i:i+1], s, sc, bs)
				}
			}
		}
		return nil
	}), nil
}

// prepareQuantizeFast is QuantizeLinear from F32 to U8 per tensor on the
// row kernels' QuantizeU8 (the reference's bits: ops' TestQuantizeRow),
// split across the workers: the form a QDQ pair's QuantizeLinear takes
// where no fused product absorbs it.
func prepareQuantizeFast(n *graph.Node, env Env) (Kernel, string, error) {
	if len(n.Inputs) != 3 || n.Inputs[0].DType != tensor.F32 || n.Inputs[1].DType != tensor.F32 || n.DType != tensor.U8 || n.Inputs[1].Shape.NumElements() != 1 {
		return nil, "", nil
	}
	rows := asm.BestRows()
	qk := asm.QuantKernelsFor(rows)
	var x []float32
	var q []uint8
	var s float32
	var z uint8
	body := func(lo, hi int) { _ = qk.QuantizeU8(q[lo:hi], x[lo:hi], s, z) } // sized alike: no error
	total := n.Shape.NumElements()
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		x, q = tensor.Elems[float32](ins[0].Data), out.Data
		s, z = tensor.Elems[float32](ins[1].Data)[0], ins[2].Data[0]
		env.For(total, 1<<14, body)
		x, q = nil, nil
		return nil
	}), "u8-" + rows.Name, nil
}
