package ops

import (
	"slices"
	"unsafe"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// qdqConvFast is QDQConv on the int8 GEMM (groups of 1). x is quantized
// (QuantizeU8, plane by plane) and laid out channels-last, so that a
// window's row of the im2col matrix (one row of k bytes per output pixel)
// is kh·kw runs of C contiguous bytes (kh runs of kw·C where the window
// row lies inside x), the padding holding x's zero point, which then
// contributes exactly 0. The weights are packed once per weights version
// with their columns in the same (ky, kx, c) order; a sum of exact
// integers does not depend on the order of its terms. The sums go into
// acc, each block of rows is dequantized in place and written to the
// NCHW output channel by channel. ConvInteger runs on it too (integer):
// x is already quantized (an I8 x shifted to uint8 with its zero point,
// as MatMulInteger's fast kernel does) and the corrected sums are written
// as they are.
type qdqConvFast struct {
	dynQuantFast
	cp      *convPlan
	qx      []uint8 // x quantized (QDQConv) or shifted (an I8 ConvInteger x), NCHW
	nhwc    []uint8 // the same, channels last
	col     []uint8
	zrow    []uint8 // kw·C bytes of x's zero point: padding
	src     []uint8 // NCHW bytes laid out channels last by toNHWC
	acc     []int32
	im2col  func(lo, hi int)
	quantX  func(lo, hi int)
	layout  func(lo, hi int)
	integer bool
	signedX bool // ConvInteger's x is I8
	out     []int32
}

// newQDQConvFast plans the GEMM of a QDQConv or ConvInteger node whose
// weight is input wi, for the product d.
func newQDQConvFast(n *graph.Node, env Env, cp *convPlan, d dynQuantGeom, wi int) (*qdqConvFast, error) {
	f := &qdqConvFast{cp: cp, qx: make([]uint8, n.Inputs[0].Shape.NumElements()), col: make([]uint8, d.m*d.k), acc: make([]int32, d.m*d.n)}
	f.nhwc, f.zrow = make([]uint8, len(f.qx)), make([]uint8, cp.kw*cp.c)
	f.d = d
	f.p = int8Product{m: d.m, k: d.k, n: d.n, bUnsigned: !d.wSigned, zbCols: d.zCols, transB: true}
	w := n.Inputs[wi]
	if err := f.p.plan(env, weightParam(w) != nil || w.Op == graph.OpConstant); err != nil {
		return nil, err
	}
	// The weights' columns in (ky, kx, c) order: perm[dst] = src.
	kk := cp.kh * cp.kw
	f.p.perm = make([]int32, d.n*d.k)
	for m := range d.n {
		for c := range cp.c {
			for q := range kk {
				f.p.perm[m*d.k+q*cp.c+c] = int32(m*d.k + c*kk + q)
			}
		}
	}
	if f.p.sb == nil {
		f.p.sb = make([]int8, d.k*d.n)
	}
	f.im2col, f.layout = f.gatherRows, f.toNHWC
	return f, nil
}

func prepareQDQConvFast(n *graph.Node, env Env) (Kernel, string, error) {
	cp, d, err := qdqConvGeomOf(n)
	if err != nil {
		return nil, "", err
	}
	if n.Attrs.Groups != 1 || d.m == 0 || d.k == 0 {
		return nil, "", nil // grouped convolutions run the reference
	}
	f, err := newQDQConvFast(n, env, cp, d, 3)
	if err != nil {
		return nil, "", err
	}
	f.rows = asm.BestRows()
	f.qk = asm.QuantKernelsFor(f.rows)
	f.colTerm, f.colZero, f.colScale = make([]int32, d.n), make([]int32, d.n), make([]float32, d.n)
	f.p.correction, f.quantX = f.finishConvRows, f.quantizePlanes
	f.vectorAct(n)
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
	f, err := newQDQConvFast(n, env, cp, d, 1)
	if err != nil {
		return nil, "", err
	}
	f.integer, f.signedX = true, x.DType == tensor.I8
	f.p.correction = f.finishIntRows
	return sizeChecked(n, f.runConvInteger), "int8-" + f.p.g.Variant().Name, nil
}

// runConvInteger is ConvInteger: an I8 x is shifted to uint8 (its zero
// point raised by 128), the windows gathered and multiplied, the sums
// corrected for both zero points and written to the NCHW output.
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
	f.gather()
	return f.p.product(f.col, f.acc)
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
	defer func() { f.x, f.y, f.ws, f.bias, f.src = nil, nil, nil, nil, nil }()
	f.s, f.z = tensor.Elems[float32](ins[1].Data)[0], ins[2].Data[0]
	f.zb[0] = f.z
	f.p.loadZeros(f.zb[:], ins[4].Data)
	f.p.env.For(cp.n*cp.c, max(1, 8192/max(1, cp.h*cp.w)), f.quantX)
	f.src = f.qx
	f.gather()
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

// gather lays src out channels last and writes the im2col rows.
func (f *qdqConvFast) gather() {
	cp := f.cp
	for i := range f.zrow {
		f.zrow[i] = f.z
	}
	f.p.env.For(cp.n*cp.h, max(1, 8192/max(1, cp.w*cp.c)), f.layout)
	f.p.env.For(f.d.m, max(1, 8192/f.d.k), f.im2col)
}

// quantizePlanes quantizes x's channel planes [lo, hi).
func (f *qdqConvFast) quantizePlanes(lo, hi int) {
	hw := f.cp.h * f.cp.w
	_ = f.qk.QuantizeU8(f.qx[lo*hw:hi*hw], f.x[lo*hw:hi*hw], f.s, f.z) // sized by the plan: no error
}

// toNHWC writes image rows [lo, hi) (over batch and height) of src
// channels last.
func (f *qdqConvFast) toNHWC(lo, hi int) {
	cp := f.cp
	for r := lo; r < hi; r++ {
		b, y := r/cp.h, r%cp.h
		dst := f.nhwc[r*cp.w*cp.c : (r+1)*cp.w*cp.c]
		for c := range cp.c {
			row := f.src[((b*cp.c+c)*cp.h+y)*cp.w:][:cp.w]
			for x, v := range row {
				dst[x*cp.c+c] = v
			}
		}
	}
}

// gatherRows writes rows [lo, hi) of the im2col matrix: row r is output
// pixel (b, oy, ox), its columns (ky, kx, c), a padding cell holding x's
// zero point.
func (f *qdqConvFast) gatherRows(lo, hi int) {
	cp, k := f.cp, f.d.k
	ohw, c := cp.oh*cp.ow, cp.c
	run := cp.kw * c // one window row when it lies inside x
	for r := lo; r < hi; r++ {
		b, pix := r/ohw, r%ohw
		oy, ox := pix/cp.ow, pix%cp.ow
		row := f.col[r*k : (r+1)*k]
		ix0 := ox*cp.sw - cp.pl
		for ky := range cp.kh {
			dst := row[ky*run : (ky+1)*run]
			iy := oy*cp.sh - cp.pt + ky*cp.dh
			if iy < 0 || iy >= cp.h {
				copy(dst, f.zrow)
				continue
			}
			img := f.nhwc[(b*cp.h+iy)*cp.w*c : (b*cp.h+iy+1)*cp.w*c]
			if cp.dw == 1 && ix0 >= 0 && ix0+cp.kw <= cp.w {
				if src := img[ix0*c:][:run]; run < 32 {
					for t, v := range src { // a short run: cheaper than a copy call
						dst[t] = v
					}
				} else {
					copy(dst, src)
				}
				continue
			}
			for kx := range cp.kw {
				if ix := ix0 + kx*cp.dw; ix >= 0 && ix < cp.w {
					copy(dst[kx*c:(kx+1)*c], img[ix*c:])
				} else {
					copy(dst[kx*c:(kx+1)*c], f.zrow)
				}
			}
		}
	}
}

// finishConvRows dequantizes rows [lo, hi) of the sums in place (as
// dynQuantFast.finishRows) and writes them to the output's channels.
func (f *qdqConvFast) finishConvRows(lo, hi int) {
	n := f.d.n
	for i := lo; i < hi; i++ {
		acc := f.acc[i*n : (i+1)*n]
		row := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(acc))), n) // the sums' bytes, rewritten as floats
		_ = f.qk.DequantRow(row, acc, f.colTerm, f.colZero, f.p.rowSums[i], f.colScale, f.bias)
		f.activate(row)
	}
	fl := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(f.acc))), len(f.acc))
	toNCHW(f.y, fl, lo, hi, n, f.cp.oh*f.cp.ow)
}

// finishIntRows corrects rows [lo, hi) of the sums for the zero points
// and writes them to the output's channels.
func (f *qdqConvFast) finishIntRows(lo, hi int) {
	for i := lo; i < hi; i++ {
		f.p.correctRow(i)
	}
	toNCHW(f.out, f.acc, lo, hi, f.d.n, f.cp.oh*f.cp.ow)
}

// toNCHW writes rows [lo, hi) of src (one per output pixel, n channels
// each) to y [N, n, ohw]: channel by channel, so that each channel's
// pixels are written in order.
func toNCHW[T float32 | int32](y, src []T, lo, hi, n, ohw int) {
	for lo < hi {
		b, pix := lo/ohw, lo%ohw
		end := min(hi, (b+1)*ohw) // rows of one image
		cnt := end - lo
		rows := src[lo*n : end*n]
		j := 0
		for ; j+4 <= n; j += 4 { // four channels a pass: each row's four values read together
			base := (b*n + j) * ohw
			d0, d1, d2, d3 := y[base+pix:][:cnt], y[base+ohw+pix:][:cnt], y[base+2*ohw+pix:][:cnt], y[base+3*ohw+pix:][:cnt]
			for i := range cnt {
				r := rows[i*n+j : i*n+j+4]
				d0[i], d1[i], d2[i], d3[i] = r[0], r[1], r[2], r[3]
			}
		}
		for ; j < n; j++ {
			dst := y[(b*n+j)*ohw+pix:][:cnt]
			for i := range dst {
				dst[i] = rows[i*n+j]
			}
		}
		lo = end
	}
}
