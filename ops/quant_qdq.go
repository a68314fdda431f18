package ops

import (
	"fmt"
	"slices"
	"unsafe"

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
// are exact in both kernels here, which have the same bits. A
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
	Register(Entry{Op: graph.OpQDQMatMul, DTypes: []tensor.DType{tensor.F32}, Reference: prepareQDQMatMul})
	RegisterFast(graph.OpQDQMatMul, prepareQDQMatMulFast)
	Register(Entry{Op: graph.OpQDQConv, DTypes: []tensor.DType{tensor.F32}, Reference: prepareQDQConv})
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

// qdqConvFast is QDQConv on the int8 GEMM (groups of 1): x quantized
// into qx, the windows gathered into col (one row of k bytes per output
// pixel), the sums into acc, each row dequantized in place and scattered
// into the NCHW output. ConvInteger runs on it too (integer): x is
// already quantized (an I8 x shifted to uint8 with its zero point, as
// MatMulInteger's fast kernel does) and the corrected sums are scattered
// as they are.
type qdqConvFast struct {
	dynQuantFast
	cp      *convPlan
	qx, col []uint8
	src     []uint8 // what the windows are gathered from: qx, or a U8 x
	acc     []int32
	im2col  func(lo, hi int)
	quantX  func(lo, hi int)
	integer bool
	signedX bool // ConvInteger's x is I8
	out     []int32
}

func prepareQDQConvFast(n *graph.Node, env Env) (Kernel, string, error) {
	cp, d, err := qdqConvGeomOf(n)
	if err != nil {
		return nil, "", err
	}
	if n.Attrs.Groups != 1 || d.m == 0 || d.k == 0 {
		return nil, "", nil // grouped convolutions run the reference
	}
	f := &qdqConvFast{cp: cp, qx: make([]uint8, n.Inputs[0].Shape.NumElements()), col: make([]uint8, d.m*d.k), acc: make([]int32, d.m*d.n)}
	f.d = d
	f.p = int8Product{m: d.m, k: d.k, n: d.n, bUnsigned: !d.wSigned, zbCols: d.zCols, transB: true}
	w := n.Inputs[3]
	if err := f.p.plan(env, weightParam(w) != nil || w.Op == graph.OpConstant); err != nil {
		return nil, "", err
	}
	f.rows = asm.BestRows()
	f.qk = asm.QuantKernelsFor(f.rows)
	f.colTerm, f.colZero, f.colScale = make([]int32, d.n), make([]int32, d.n), make([]float32, d.n)
	f.p.correction, f.im2col, f.quantX = f.finishConvRows, f.gatherRows, f.quantizePlanes
	return sizeChecked(n, f.runConv), "int8-" + f.p.g.Variant().Name, nil
}

// prepareConvIntegerFast runs ConvInteger with groups of 1 on the int8
// GEMM (qdqConvFast in integer mode); grouped ones run the reference.
func prepareConvIntegerFast(n *graph.Node, env Env) (Kernel, string, error) {
	if len(n.Inputs) != 4 || n.Attrs.Groups != 1 || n.DType != tensor.I32 {
		return nil, "", nil
	}
	cp, err := newConvPlan(n)
	if err != nil {
		return nil, "", err
	}
	x, w := n.Inputs[0], n.Inputs[1]
	xz, wz := n.Inputs[2].Shape.NumElements(), n.Inputs[3].Shape.NumElements()
	if !slices.Contains(quant8, x.DType) || !slices.Contains(quant8, w.DType) || xz != 1 || (wz != 1 && wz != cp.m) {
		return nil, "", nil
	}
	d := dynQuantGeom{m: cp.n * cp.oh * cp.ow, k: cp.cpg * cp.kh * cp.kw, n: cp.m, wSigned: w.DType == tensor.I8, transB: true, zCols: wz > 1}
	if d.m == 0 || d.k == 0 {
		return nil, "", nil
	}
	f := &qdqConvFast{cp: cp, col: make([]uint8, d.m*d.k), acc: make([]int32, d.m*d.n), integer: true, signedX: x.DType == tensor.I8}
	if f.signedX {
		f.qx = make([]uint8, x.Shape.NumElements())
	}
	f.d = d
	f.p = int8Product{m: d.m, k: d.k, n: d.n, bUnsigned: !d.wSigned, zbCols: d.zCols, transB: true}
	if err := f.p.plan(env, weightParam(w) != nil || w.Op == graph.OpConstant); err != nil {
		return nil, "", err
	}
	f.p.correction, f.im2col = f.finishIntRows, f.gatherRows
	return sizeChecked(n, f.runConvInteger), "int8-" + f.p.g.Variant().Name, nil
}

// runConvInteger is ConvInteger: an I8 x is shifted to uint8 (its zero
// point raised by 128), the windows gathered and multiplied, the sums
// corrected for both zero points and scattered into the NCHW output.
func (f *qdqConvFast) runConvInteger(ins []tensor.Tensor, out tensor.Tensor) error {
	if err := f.p.packB(ins[1].Data); err != nil {
		return err
	}
	f.src, f.z = ins[0].Data, ins[2].Data[0]
	if f.signedX {
		for i, v := range ins[0].Data {
			f.qx[i] = v ^ 0x80
		}
		f.src, f.z = f.qx, f.z^0x80 // int8 z + 128 as a byte
	}
	f.zb[0] = f.z
	f.p.loadZeros(f.zb[:], ins[3].Data)
	f.out = tensor.Elems[int32](out.Data)
	defer func() { f.src, f.out = nil, nil }()
	f.p.env.For(f.d.m, max(1, 8192/f.d.k), f.im2col)
	return f.p.product(f.col, f.acc)
}

// finishIntRows corrects rows [lo, hi) of the sums for the zero points
// and scatters each into the output's channels.
func (f *qdqConvFast) finishIntRows(lo, hi int) {
	n, ohw, cp := f.d.n, f.cp.oh*f.cp.ow, f.cp
	for i := lo; i < hi; i++ {
		f.p.correctRow(i)
		b, pix := i/ohw, i%ohw
		y := f.out[b*cp.m*ohw+pix:]
		for j, v := range f.acc[i*n : (i+1)*n] {
			y[j*ohw] = v
		}
	}
}

func (f *qdqConvFast) runConv(ins []tensor.Tensor, out tensor.Tensor) error {
	d, cp := &f.d, f.cp
	if err := f.p.packB(ins[3].Data); err != nil {
		return err
	}
	f.x, f.y = tensor.Elems[float32](ins[0].Data), tensor.Elems[float32](out.Data)
	f.ws, f.bias = tensor.Elems[float32](ins[5].Data), nil
	if d.bias {
		f.bias = tensor.Elems[float32](ins[6].Data)
	}
	defer func() { f.x, f.y, f.ws, f.bias = nil, nil, nil, nil }()
	f.s, f.z = tensor.Elems[float32](ins[1].Data)[0], ins[2].Data[0]
	f.zb[0] = f.z
	f.p.loadZeros(f.zb[:], ins[4].Data)
	planes := cp.n * cp.c
	f.p.env.For(planes, max(1, 8192/max(1, cp.h*cp.w)), f.quantX)
	f.src = f.qx
	defer func() { f.src = nil }()
	f.p.env.For(d.m, max(1, 8192/d.k), f.im2col)
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
	return f.p.product(f.col, f.acc)
}

// quantizePlanes quantizes x's channel planes [lo, hi).
func (f *qdqConvFast) quantizePlanes(lo, hi int) {
	hw := f.cp.h * f.cp.w
	_ = f.qk.QuantizeU8(f.qx[lo*hw:hi*hw], f.x[lo*hw:hi*hw], f.s, f.z) // sized by the plan: no error
}

// gatherRows writes rows [lo, hi) of the im2col matrix: row r is output
// pixel (b, oy, ox), its columns (c, ky, kx) in the weights' order, a
// padding cell holding x's zero point.
func (f *qdqConvFast) gatherRows(lo, hi int) {
	cp, k := f.cp, f.d.k
	ohw := cp.oh * cp.ow
	for r := lo; r < hi; r++ {
		b, pix := r/ohw, r%ohw
		oy, ox := pix/cp.ow, pix%cp.ow
		row := f.col[r*k : (r+1)*k]
		i := 0
		for c := range cp.c {
			plane := f.src[(b*cp.c+c)*cp.h*cp.w:]
			for ky := range cp.kh {
				iy := oy*cp.sh - cp.pt + ky*cp.dh
				for kx := range cp.kw {
					ix := ox*cp.sw - cp.pl + kx*cp.dw
					v := f.z
					if iy >= 0 && iy < cp.h && ix >= 0 && ix < cp.w {
						v = plane[iy*cp.w+ix]
					}
					row[i] = v
					i++
				}
			}
		}
	}
}

// finishConvRows dequantizes rows [lo, hi) of the sums in place (as
// dynQuantFast.finishRows) and scatters each into the output's channels.
func (f *qdqConvFast) finishConvRows(lo, hi int) {
	n, ohw, cp := f.d.n, f.cp.oh*f.cp.ow, f.cp
	for i := lo; i < hi; i++ {
		acc := f.acc[i*n : (i+1)*n]
		row := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(acc))), n) // the sums' bytes, rewritten as floats
		_ = f.qk.DequantRow(row, acc, f.colTerm, f.colZero, f.p.rowSums[i], f.colScale, f.bias)
		f.d.activate(row)
		b, pix := i/ohw, i%ohw
		y := f.y[b*cp.m*ohw+pix:]
		for j, v := range row {
			y[j*ohw] = v
		}
	}
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
