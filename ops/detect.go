package ops

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// The reference kernels of RoiAlign, NonMaxSuppression and Det, in
// float64 whatever the storage dtype. They follow ONNX's definitions as
// ONNX Runtime computes them (RoiAlign's sample clamping, NMS's strict
// comparisons and its score order).

func init() {
	Register(Entry{Op: graph.OpRoiAlign, DTypes: nativeFloats, Reference: prepareRoiAlign, Tol: 1e-6})
	Register(Entry{Op: graph.OpNonMaxSuppression, DTypes: nativeFloats, Reference: prepareNMS})
	Register(Entry{Op: graph.OpDet, DTypes: nativeFloats, Reference: prepareDet, Tol: 1e-5})
}

func prepareRoiAlign(n *graph.Node) (Kernel, error) {
	dt, err := computeDType(n, 3, 3, 2)
	if err != nil {
		return nil, err
	}
	if n.Inputs[2].DType != tensor.I64 || n.Inputs[0].Shape.Rank() != 4 || n.Shape.Rank() != 4 {
		return nil, fmt.Errorf("inputs and result %v do not form a RoiAlign", n.Shape)
	}
	k, nb := bindFloat(n, dt, n, roiAlign[float32], roiAlign[float64]), int64(n.Inputs[0].Shape[0])
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		if len(ins) == 3 {
			for r, b := range ins[2].I64() {
				if b < 0 || b >= nb {
					return fmt.Errorf("RoiAlign: batch index %d of roi %d outside [0, %d)", b, r, nb)
				}
			}
		}
		return k(ins, out)
	}, nil
}

// roiAlign pools every roi's bins. A bin averages (or, with Max, takes the
// largest of) grid × grid samples at the centres of its sub-cells; each
// sample is the bilinear interpolation of its four neighbours, clamped
// into the input, and a sample more than one cell outside reads 0. Max
// takes, per sample, the largest of the four weighted neighbours, as ONNX
// Runtime does.
func roiAlign[T float32 | float64](n *graph.Node, ins []tensor.Tensor, out tensor.Tensor) {
	x, rois, bi, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), ins[2].I64(), tensor.Elems[T](out.Data)
	s, xs := n.Attrs.RoiAlign, n.Inputs[0].Shape
	c, h, w := xs[1], xs[2], xs[3]
	oh, ow := s.OutH, s.OutW
	offset := 0.0
	if s.HalfPixel {
		offset = 0.5
	}
	scale := float64(s.SpatialScale)
	for r := range len(bi) {
		b := int(bi[r])
		box := rois[r*4:][:4]
		x0, y0 := float64(box[0])*scale-offset, float64(box[1])*scale-offset
		rw, rh := float64(box[2])*scale-offset-x0, float64(box[3])*scale-offset-y0
		if !s.HalfPixel {
			rw, rh = max(rw, 1), max(rh, 1)
		}
		binH, binW := rh/float64(oh), rw/float64(ow)
		gh, gw := s.SamplingRatio, s.SamplingRatio
		if gh == 0 {
			gh, gw = int(math.Ceil(rh/float64(oh))), int(math.Ceil(rw/float64(ow)))
		}
		count := float64(max(gh*gw, 1))
		for ch := range c {
			dst := y[(r*c+ch)*oh*ow:][:oh*ow]
			plane := x[(b*c+ch)*h*w:][:h*w]
			for ph := range oh {
				for pw := range ow {
					acc, found := 0.0, false
					for iy := range gh {
						sy := y0 + float64(ph)*binH + (float64(iy)+0.5)*binH/float64(gh)
						for ix := range gw {
							sx := x0 + float64(pw)*binW + (float64(ix)+0.5)*binW/float64(gw)
							v := roiSample(plane, h, w, sy, sx, s.Max)
							switch {
							case !s.Max:
								acc += v
							case !found || v > acc:
								acc, found = v, true
							}
						}
					}
					if !s.Max {
						acc /= count
					}
					dst[ph*ow+pw] = T(acc)
				}
			}
		}
	}
}

// roiSample interpolates plane [h, w] at (y, x): the weighted sum of the
// four neighbours, or with max the largest weighted neighbour.
func roiSample[T float32 | float64](plane []T, h, w int, y, x float64, max bool) float64 {
	if y < -1 || y > float64(h) || x < -1 || x > float64(w) || math.IsNaN(x) || math.IsNaN(y) {
		return 0
	}
	y, x = math.Max(y, 0), math.Max(x, 0)
	yl, xl := int(y), int(x)
	yh, xh := yl+1, xl+1
	if yl >= h-1 {
		yl, yh, y = h-1, h-1, float64(h-1)
	}
	if xl >= w-1 {
		xl, xh, x = w-1, w-1, float64(w-1)
	}
	ly, lx := y-float64(yl), x-float64(xl)
	hy, hx := 1-ly, 1-lx
	v := [4]float64{hy * hx * float64(plane[yl*w+xl]), hy * lx * float64(plane[yl*w+xh]),
		ly * hx * float64(plane[yh*w+xl]), ly * lx * float64(plane[yh*w+xh])}
	if max {
		return math.Max(math.Max(v[0], v[1]), math.Max(v[2], v[3]))
	}
	return v[0] + v[1] + v[2] + v[3]
}

func prepareNMS(n *graph.Node) (Kernel, error) {
	if len(n.Inputs) != 2 || n.DType != tensor.I64 || n.Inputs[1].DType != n.Inputs[0].DType || n.Shape.Rank() != 2 {
		return nil, fmt.Errorf("inputs and result %v %v do not form a NonMaxSuppression", n.DType, n.Shape)
	}
	var k Kernel
	switch n.Inputs[0].DType {
	case tensor.F32:
		k = nms[float32](n)
	case tensor.F64:
		k = nms[float64](n)
	default:
		return nil, fmt.Errorf("dtype %v has no reference kernel", n.Inputs[0].DType)
	}
	return sizeChecked(n, k), nil
}

// nmsBox is a box as min and max corners.
type nmsBox struct{ y0, x0, y1, x1 float64 }

func (b nmsBox) area() float64 { return (b.y1 - b.y0) * (b.x1 - b.x0) }

// overlaps reports whether a's IoU with b is above limit. Boxes that do
// not intersect, or have no area, never suppress each other.
func (a nmsBox) overlaps(b nmsBox, limit float64) bool {
	ih := math.Min(a.y1, b.y1) - math.Max(a.y0, b.y0)
	iw := math.Min(a.x1, b.x1) - math.Max(a.x0, b.x0)
	if ih <= 0 || iw <= 0 {
		return false
	}
	inter := ih * iw
	aa, ab := a.area(), b.area()
	union := aa + ab - inter
	if aa <= 0 || ab <= 0 || union <= 0 {
		return false
	}
	return inter/union > limit
}

// nms selects per batch and class greedily by decreasing score (NaN
// last, ties to the lower index), writes [batch, class, box] rows in
// batch, class and selection order, and fills the rest with -1.
func nms[T float32 | float64](n *graph.Node) Kernel {
	s := n.Attrs.NMS
	bs, cs := n.Inputs[0].Shape, n.Inputs[1].Shape
	nb, nc, nbox := bs[0], cs[1], bs[1]
	limit := min(s.MaxPerClass, nbox)
	order := make([]int, 0, nbox)
	kept := make([]nmsBox, 0, limit)
	all := make([]nmsBox, nbox)
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		boxes, scores, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), out.I64()
		row := 0
		for b := range nb {
			for i := range all {
				v := boxes[(b*nbox+i)*4:][:4]
				p, q, r, t := float64(v[0]), float64(v[1]), float64(v[2]), float64(v[3])
				if s.CenterPoint { // [xc, yc, w, h]
					all[i] = nmsBox{q - t/2, p - r/2, q + t/2, p + r/2}
				} else { // [y1, x1, y2, x2], either corner first
					all[i] = nmsBox{math.Min(p, r), math.Min(q, t), math.Max(p, r), math.Max(q, t)}
				}
			}
			for c := range nc {
				sc := scores[(b*nc+c)*nbox:][:nbox]
				order = order[:0]
				for i, v := range sc {
					if !s.HasMinScore || float64(v) > s.MinScore {
						order = append(order, i)
					}
				}
				slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(sc[j], sc[i]) })
				kept = kept[:0]
				for _, i := range order {
					if len(kept) == limit {
						break
					}
					if slices.ContainsFunc(kept, func(k nmsBox) bool { return all[i].overlaps(k, s.IOU) }) {
						continue
					}
					kept = append(kept, all[i])
					y[row*3], y[row*3+1], y[row*3+2] = int64(b), int64(c), int64(i)
					row++
				}
			}
		}
		for i := row * 3; i < len(y); i++ {
			y[i] = -1
		}
		return nil
	}
}

func prepareDet(n *graph.Node) (Kernel, error) {
	dt, err := computeDType(n, 1, 1, 1)
	if err != nil {
		return nil, err
	}
	r := n.Inputs[0].Shape.Rank()
	if r < 2 {
		return nil, fmt.Errorf("input %v is not [..., M, M]", n.Inputs[0].Shape)
	}
	m := n.Inputs[0].Shape[r-1]
	return bindFloat(n, dt, m, det[float32], det[float64]), nil
}

// det computes each matrix's determinant by LU decomposition with partial
// pivoting in float64: the product of the pivots, negated once per row
// swap. A zero pivot column gives 0.
func det[T float32 | float64](m int, ins []tensor.Tensor, out tensor.Tensor) {
	x, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](out.Data)
	a := make([]float64, m*m)
	for k := range y {
		for i, v := range x[k*m*m:][:m*m] {
			a[i] = float64(v)
		}
		d := 1.0
		for col := range m {
			p := col
			for r := col + 1; r < m; r++ {
				if math.Abs(a[r*m+col]) > math.Abs(a[p*m+col]) {
					p = r
				}
			}
			if a[p*m+col] == 0 {
				d = 0
				break
			}
			if p != col {
				for j := range m {
					a[col*m+j], a[p*m+j] = a[p*m+j], a[col*m+j]
				}
				d = -d
			}
			piv := a[col*m+col]
			d *= piv
			for r := col + 1; r < m; r++ {
				f := a[r*m+col] / piv
				for j := col; j < m; j++ {
					a[r*m+j] -= f * a[col*m+j]
				}
			}
		}
		y[k] = T(d)
	}
}
