package graph

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/tensor"
)

// isF32orF64 is the dtype class of the sampling and detection ops (F16
// and BF16 are widened through F32 by the catalogue).
func isF32orF64(d tensor.DType) bool { return d.IsFloat() }

// inferGridSample: x [N, C, H, W] and grid [N, Ho, Wo, 2] of one float
// dtype give [N, C, Ho, Wo].
func inferGridSample(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x, grid := ins[0], ins[1]
	if !isF32orF64(x.DType) || grid.DType != x.DType {
		return 0, nil, fmt.Errorf("x %v and grid %v must share a float dtype", x.DType, grid.DType)
	}
	xs, gs := x.Shape, grid.Shape
	if xs.Rank() != 4 || gs.Rank() != 4 || gs[0] != xs[0] || gs[3] != 2 {
		return 0, nil, fmt.Errorf("x %v must be [N, C, H, W] and grid %v [N, Ho, Wo, 2]", xs, gs)
	}
	s := a.GridSample
	if s.Mode > SampleBicubic || s.Padding > PadReflection {
		return 0, nil, fmt.Errorf("mode %d or padding %d unknown", s.Mode, s.Padding)
	}
	return x.DType, tensor.Shape{xs[0], xs[1], gs[1], gs[2]}, nil
}

// inferRoiAlign: x [N, C, H, W], rois [R, 4] of x's float dtype and I64
// batch indices [R] give [R, C, OutH, OutW].
func inferRoiAlign(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x, rois, bi := ins[0], ins[1], ins[2]
	if !isF32orF64(x.DType) || rois.DType != x.DType || bi.DType != tensor.I64 {
		return 0, nil, fmt.Errorf("x %v and rois %v must share a float dtype, batch indices %v be I64", x.DType, rois.DType, bi.DType)
	}
	if x.Shape.Rank() != 4 || rois.Shape.Rank() != 2 || rois.Shape[1] != 4 || !bi.Shape.Equal(tensor.Shape{rois.Shape[0]}) {
		return 0, nil, fmt.Errorf("x %v must be [N, C, H, W], rois %v [R, 4] and batch indices %v [R]", x.Shape, rois.Shape, bi.Shape)
	}
	s := a.RoiAlign
	if s.OutH < 1 || s.OutW < 1 || s.SamplingRatio < 0 || s.OutH > 1<<16 || s.OutW > 1<<16 || s.SamplingRatio > 1<<16 {
		return 0, nil, fmt.Errorf("output %d×%d or sampling ratio %d out of range", s.OutH, s.OutW, s.SamplingRatio)
	}
	if f := float64(s.SpatialScale); math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, nil, fmt.Errorf("spatial scale %v is not finite", s.SpatialScale)
	}
	return x.DType, tensor.Shape{rois.Shape[0], x.Shape[1], s.OutH, s.OutW}, nil
}

// inferNMS: boxes [B, N, 4] and scores [B, C, N] of one float dtype give
// I64 [B·C·min(MaxPerClass, N), 3], the most rows the selection can fill.
func inferNMS(a *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	boxes, scores := ins[0], ins[1]
	if !isF32orF64(boxes.DType) || scores.DType != boxes.DType {
		return 0, nil, fmt.Errorf("boxes %v and scores %v must share a float dtype", boxes.DType, scores.DType)
	}
	bs, ss := boxes.Shape, scores.Shape
	if bs.Rank() != 3 || bs[2] != 4 || ss.Rank() != 3 || ss[0] != bs[0] || ss[2] != bs[1] {
		return 0, nil, fmt.Errorf("boxes %v must be [B, N, 4] and scores %v [B, C, N]", bs, ss)
	}
	s := a.NMS
	if s.MaxPerClass < 0 || math.IsNaN(s.IOU) || math.IsNaN(s.MinScore) {
		return 0, nil, fmt.Errorf("max boxes per class %d must be >= 0 and the thresholds (%v, %v) numbers", s.MaxPerClass, s.IOU, s.MinScore)
	}
	return tensor.I64, tensor.Shape{bs[0] * ss[1] * min(s.MaxPerClass, bs[1]), 3}, nil
}

// inferDet: x [..., M, M] of a float dtype gives its leading dims.
func inferDet(_ *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x := ins[0]
	if !isF32orF64(x.DType) {
		return 0, nil, fmt.Errorf("dtype %v not supported", x.DType)
	}
	r := x.Shape.Rank()
	if r < 2 || x.Shape[r-1] != x.Shape[r-2] {
		return 0, nil, fmt.Errorf("input %v must be [..., M, M]", x.Shape)
	}
	return x.DType, x.Shape[:r-2].Clone(), nil
}
