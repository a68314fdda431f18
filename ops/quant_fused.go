package ops

import (
	"fmt"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// DynQuantMatMul (graph/fused.go) is ONNX Runtime's dynamically quantized
// MatMul as one kernel:
//
//	(q, s, z) = DynamicQuantizeLinear(x)
//	y = float32(MatMulInteger(q, w, z, wZero)) · (s·wScale) + bias
//
// Both kernels compute each step as the ops they replace do (the same
// quantization, exact int32 sums, float32 rounding of the sum, then the
// float32 product and sum), so the fused node has the bits of the
// subgraph it replaces. The fast kernel quantizes x's rows straight into
// the int8 GEMM's operand and dequantizes each finished row in place.

func init() {
	Register(Entry{Op: graph.OpDynQuantMatMul, DTypes: []tensor.DType{tensor.F32}, Reference: prepareDynQuantMatMul})
	RegisterFast(graph.OpDynQuantMatMul, prepareDynQuantMatMulFast)
}

// dynQuantGeom is a DynQuantMatMul or QDQMatMul node's sizes and forms:
// x is m×k, w k×n (n×k with transB).
type dynQuantGeom struct {
	m, k, n       int
	zCols, sCols  bool // w's zero point and scale are one per column
	bias, wSigned bool
	transB        bool
	// off is where w's inputs start after 1: 0 for DynQuantMatMul, 2 for
	// QDQMatMul, whose x's scale and zero point are inputs 1 and 2
	// (static: x is not scanned for its range).
	off int
	act func(float64) float64 // the epilogue's activation, or nil
}

// wAt is w's element (p, j) of the k×n product as an integer.
func (d *dynQuantGeom) wAt(w []byte, p, j int) int32 {
	i := p*d.n + j
	if d.transB {
		i = j*d.k + p
	}
	if d.wSigned {
		return int32(int8(w[i]))
	}
	return int32(w[i])
}

// static reports whether x's quantization is given (QDQMatMul).
func (d *dynQuantGeom) static() bool { return d.off > 0 }

func dynQuantGeomOf(n *graph.Node) (dynQuantGeom, error) {
	if len(n.Inputs) < 4 || len(n.Inputs) > 5 || n.DType != tensor.F32 {
		return dynQuantGeom{}, fmt.Errorf("%d inputs and result %v, want 4 or 5 and f32", len(n.Inputs), n.DType)
	}
	w := n.Inputs[1]
	if w.Shape.Rank() != 2 || !slices.Contains(quant8, w.DType) || n.Inputs[0].DType != tensor.F32 {
		return dynQuantGeom{}, fmt.Errorf("x %v and w %v%v: want f32 and a 2-D i8 or u8", n.Inputs[0].DType, w.DType, w.Shape)
	}
	d := dynQuantGeom{k: w.Shape[0], n: w.Shape[1], bias: len(n.Inputs) == 5, wSigned: w.DType == tensor.I8}
	if d.k == 0 {
		return dynQuantGeom{}, fmt.Errorf("w %v has no depth", w.Shape)
	}
	d.m = n.Inputs[0].Shape.NumElements() / d.k
	d.zCols, d.sCols = n.Inputs[2].Shape.NumElements() > 1, n.Inputs[3].Shape.NumElements() > 1
	return d, nil
}

// zeroAt is w's zero point for column j as an integer.
func (d *dynQuantGeom) zeroAt(z []byte, j int) int32 {
	if !d.zCols {
		j = 0
	}
	if d.wSigned {
		return int32(int8(z[j]))
	}
	return int32(z[j])
}

// dequant finishes row i of the product: float32(sum) · (s·wScale[j]) +
// bias[j], as Cast, Mul and Add round it.
func (d *dynQuantGeom) dequant(y []float32, sums []int32, s float32, ws, bias []float32) {
	for j, v := range sums {
		sc := ws[0]
		if d.sCols {
			sc = ws[j]
		}
		// The conversions round each product, so no fused multiply-add
		// (arm64, GOAMD64=v3) merges it with the bias add.
		r := float32(float32(v) * float32(s*sc))
		if d.bias {
			r += bias[j]
		}
		y[j] = r
	}
	d.activate(y)
}

// activate applies the epilogue's activation to a finished row.
func (d *dynQuantGeom) activate(y []float32) {
	if d.act == nil {
		return
	}
	for j, v := range y {
		y[j] = float32(d.act(float64(v)))
	}
}

// dynamicQuantParamsOf is DynamicQuantParams given x's largest and
// smallest elements as the row kernels' Max and Min find them: for x
// without NaN they are the extremes the reference's comparisons find too
// (a -0 extreme is made +0, as the reference's range, starting at +0,
// never holds -0); x with a NaN takes the reference's loop, which skips
// it.
func dynamicQuantParamsOf(x []float32, hi, lo float32) (scale float32, zero uint8) {
	if hi != hi || lo != lo {
		return DynamicQuantParams(x)
	}
	lo, hi = min(lo, 0)+0, max(hi, 0)+0 // +0 turns a -0 into +0
	return dynamicParamsOfRange(lo, hi)
}

func prepareDynQuantMatMul(n *graph.Node) (Kernel, error) {
	d, err := dynQuantGeomOf(n)
	if err != nil {
		return nil, err
	}
	return quantMatMulReference(n, d), nil
}

// quantMatMulReference is DynQuantMatMul's and QDQMatMul's reference:
// x quantized by the reference formula, exact int32 sums, then dequant.
func quantMatMulReference(n *graph.Node, d dynQuantGeom) Kernel {
	q := make([]uint8, d.m*d.k)
	sums := make([]int32, d.n)
	o := d.off
	return sizeChecked(n, func(ins []tensor.Tensor, out tensor.Tensor) error {
		x, w, wz := tensor.Elems[float32](ins[0].Data), ins[1+o].Data, ins[2+o].Data
		ws, y := tensor.Elems[float32](ins[3+o].Data), tensor.Elems[float32](out.Data)
		var bias []float32
		if d.bias {
			bias = tensor.Elems[float32](ins[4+o].Data)
		}
		var s float32
		var z uint8
		if d.static() {
			s, z = tensor.Elems[float32](ins[1].Data)[0], ins[2].Data[0]
		} else {
			s, z = DynamicQuantParams(x)
		}
		for i, v := range x {
			q[i] = uint8(quantizeOne(float64(v/s), float64(z), 0, 255))
		}
		for i := range d.m {
			for j := range sums {
				zb, acc := d.zeroAt(wz, j), int32(0)
				for p := range d.k {
					acc += (int32(q[i*d.k+p]) - int32(z)) * (d.wAt(w, p, j) - zb)
				}
				sums[j] = acc
			}
			d.dequant(y[i*d.n:(i+1)*d.n], sums, s, ws, bias)
		}
		return nil
	})
}

// dynQuantFast is the fast DynQuantMatMul: x's quantization written
// straight into the int8 GEMM's uint8 operand, the sums into the output's
// bytes as int32, then each row corrected and dequantized in place.
type dynQuantFast struct {
	d                dynQuantGeom
	p                int8Product
	q                []uint8
	x                []float32
	y                []float32
	ws, bias         []float32
	s                float32
	z                uint8
	zb               [1]byte   // z as loadZeros reads a zero point
	his, los         []float32 // x's extremes per chunk of the range scan
	rows             *asm.RowKernels
	qk               *asm.QuantKernels // resolved once: no lookup per row
	rangeBody        func(lo, hi int)
	quantize, finish func(lo, hi int)
	// The epilogue's activation on the vector elementwise kernels (within
	// a few ulp of the reference's float64 formula), where it has one.
	ew      *asm.EwKernels
	vact    asm.EwUnary
	hasVAct bool
	// Per run, per column: the zero-point terms that do not depend on
	// the row (K·za·zb − za·Σ_p w), w's zero point and the scale s·wScale.
	colTerm, colZero []int32
	colScale         []float32
}

func prepareDynQuantMatMulFast(n *graph.Node, env Env) (Kernel, string, error) {
	d, err := dynQuantGeomOf(n)
	if err != nil {
		return nil, "", err
	}
	return quantMatMulFast(n, d, env)
}

// quantMatMulFast is DynQuantMatMul's and QDQMatMul's fast kernel.
func quantMatMulFast(n *graph.Node, d dynQuantGeom, env Env) (Kernel, string, error) {
	f := &dynQuantFast{d: d, q: make([]uint8, d.m*d.k)}
	f.p = int8Product{m: d.m, k: d.k, n: d.n, bUnsigned: !d.wSigned, zbCols: d.zCols, transB: d.transB}
	w := n.Inputs[1+d.off]
	if err := f.p.plan(env, weightParam(w) != nil || w.Op == graph.OpConstant); err != nil {
		return nil, "", err
	}
	f.p.correction = f.finishRows
	f.quantize = f.quantizeRows
	// The range scan splits x across the workers where each gets at
	// least 32K elements.
	chunks := min(max(1, env.Threads), max(1, d.m*d.k/(1<<15)))
	f.his, f.los, f.rangeBody = make([]float32, chunks), make([]float32, chunks), f.rangeChunks
	f.rows = asm.BestRows()
	f.qk = asm.QuantKernelsFor(f.rows)
	f.colTerm, f.colZero, f.colScale = make([]int32, d.n), make([]int32, d.n), make([]float32, d.n)
	f.vectorAct(n)
	return sizeChecked(n, f.run), "int8-" + f.p.g.Variant().Name, nil
}

func (f *dynQuantFast) run(ins []tensor.Tensor, out tensor.Tensor) error {
	d, o := &f.d, f.d.off
	if err := f.p.packB(ins[1+o].Data); err != nil {
		return err
	}
	f.x, f.y = tensor.Elems[float32](ins[0].Data), tensor.Elems[float32](out.Data)
	f.ws, f.bias = tensor.Elems[float32](ins[3+o].Data), nil
	if d.bias {
		f.bias = tensor.Elems[float32](ins[4+o].Data)
	}
	defer func() { f.x, f.y, f.ws, f.bias = nil, nil, nil, nil }()
	if d.static() {
		f.s, f.z = tensor.Elems[float32](ins[1].Data)[0], ins[2].Data[0]
	} else {
		f.p.env.For(len(f.his), 1, f.rangeBody)
		hi, lo := f.his[0], f.los[0]
		for c := range f.his[1:] {
			hi, lo = max(hi, f.his[c+1]), min(lo, f.los[c+1]) // a NaN stays
		}
		f.s, f.z = dynamicQuantParamsOf(f.x, hi, lo)
	}
	f.zb[0] = f.z
	f.p.loadZeros(f.zb[:], ins[2+o].Data)
	f.p.env.For(d.m, max(1, 8192/d.k), f.quantize)
	za, k, cs := int32(f.z), int32(d.k), f.p.pb.ColSums()
	for j := range d.n {
		zb, sc := f.p.zb[0], f.ws[0]
		if d.zCols {
			zb = f.p.zb[j]
		}
		if d.sCols {
			sc = f.ws[j]
		}
		f.colTerm[j], f.colZero[j], f.colScale[j] = k*za*zb-za*cs[j], zb, float32(f.s*sc)
	}
	// The sums go into the output's bytes: each row is read as int32 and
	// written back as float32 by finishRows.
	return f.p.product(f.q, tensor.Elems[int32](out.Data))
}

// rangeChunks finds the extremes of x's chunks [lo, hi).
func (f *dynQuantFast) rangeChunks(lo, hi int) {
	k, n := f.rows, len(f.x)
	for c := lo; c < hi; c++ {
		part := f.x[c*n/len(f.his) : (c+1)*n/len(f.his)]
		f.his[c], f.los[c] = k.Max(part), k.Min(part)
	}
}

// quantizeRows quantizes rows [lo, hi) of x.
func (f *dynQuantFast) quantizeRows(lo, hi int) {
	k := f.d.k
	_ = f.qk.QuantizeU8(f.q[lo*k:hi*k], f.x[lo*k:hi*k], f.s, f.z) // q holds the rows: no error
}

// finishRows corrects rows [lo, hi) of the sums for the zero points and
// dequantizes them in place: float32(sum + K·za·zb − za·Σw − zb·Σq) ·
// (s·wScale) + bias, each step rounded as the unfused ops round it, on
// the vector kernel of the best row variant (asm.DequantRow).
func (f *dynQuantFast) finishRows(lo, hi int) {
	n := f.d.n
	for i := lo; i < hi; i++ {
		y := f.y[i*n : (i+1)*n]
		// The operands hold n elements each: no error.
		_ = f.qk.DequantRow(y, f.p.c[i*n:(i+1)*n], f.colTerm, f.colZero, f.p.rowSums[i], f.colScale, f.bias)
		f.activate(y)
	}
}

// vectorAct picks the vector kernel of the node's epilogue activation
// (QDQMatMul, QDQConv), if it has one.
func (f *dynQuantFast) vectorAct(n *graph.Node) {
	if f.d.act != nil {
		f.vact, f.hasVAct = epilogueEw(n.Attrs.Epilogue.Act)
		f.ew = asm.BestEw()
	}
}

// activate applies the epilogue's activation to a finished row: on the
// vector kernel where there is one, else the reference's formula.
func (f *dynQuantFast) activate(y []float32) {
	if f.hasVAct {
		_ = f.ew.Unary(f.vact, y, y) // in place, one length: no error
		return
	}
	f.d.activate(y)
}
