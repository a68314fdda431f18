package ops

import (
	"math"

	"github.com/kilnml/kiln/tensor"
)

// The flash kernel's per-block softmax steps (see fused_attention.go):
// masking the block's scores, then folding them into each query row's
// running max and sum.

// maskBlock scales a block of scores, then applies the mask and
// causality, and leaves each row's max in w.mx.
func (p *flashPlan) maskBlock(w *flashWorker, ins []tensor.Tensor, b, h, i0, mq, j0, nk int) {
	s := w.s
	ninf := float32(math.Inf(-1))
	var add []float32
	var keep []uint8
	st := 0
	switch p.mask {
	case maskAdd:
		add, st = ins[3].F32(), p.mst[3]
	case maskBool:
		keep, st = ins[3].Data, p.mst[3]
	}
	if w.gathered { // the kept keys' mask values, gathered
		add, keep, st = w.maskc[:w.nkeys], nil, 1
	}
	for i := range mq {
		row := s[i*p.ld : i*p.ld+nk]
		base := 0
		switch {
		case w.gathered:
			base = j0
		case p.mask != maskNone:
			base = b*p.mst[0] + h*p.mst[1] + (i0+i)*p.mst[2] + j0*p.mst[3]
		}
		if add != nil && st == 1 && !p.causal { // the common padding mask: one pass
			w.mx[i] = p.rk.ScaleAddMax(row, add[base:base+nk], p.scale)
			continue
		}
		if p.scale != 1 {
			p.rk.Scale(row, p.scale)
		}
		if add != nil || keep != nil {
			switch {
			case add != nil && st == 1:
				p.rk.Axpy(row, add[base:base+nk], 1)
			case add != nil:
				for j := range row {
					row[j] += add[base+j*st]
				}
			default:
				for j := range row {
					if keep[base+j*st] == 0 {
						row[j] = ninf
					}
				}
			}
		}
		if p.causal {
			// Query i0+i sees keys up to i0+i+sk-sq (sk the keys in use).
			for j := max(0, i0+i+w.sk-p.sq+1-j0); j < nk; j++ {
				row[j] = ninf
			}
		}
		w.mx[i] = p.rk.Max(row)
	}
}

// softmaxBlock folds a block of scores into the running softmax of each
// query row: with the new running max m', the block's weights become
// exp(s - m') (unnormalised, so the largest is exactly 1 and a single
// visible key passes its value through exactly, subnormals included), the
// running sum l and the output row are rescaled by exp(m - m'), and the
// P·V product then adds to the row. The output is divided by l at the end.
func (p *flashPlan) softmaxBlock(w *flashWorker, y []float32, mq, nk int) {
	s := float32(1) // scores still to scale
	if w.raw {
		s = p.scale
	}
	for i := range mq {
		row := w.s[i*p.ld : i*p.ld+nk]
		mx := w.mx[i] // from maskBlock
		if w.raw {
			// MaxNum may pass a NaN score over: its weight, the sum and
			// so the output row are NaN anyway. But -Inf from a row of
			// only NaN (or -Inf) scores must not read as "nothing
			// visible": Max settles it.
			mx = p.rk.MaxNum(row)
			if math.IsInf(float64(mx), -1) {
				mx = p.rk.Max(row)
			}
			// Rounding is monotonic, so for s > 0 the largest rounded
			// product is the rounded product of the largest score.
			mx *= s
		}
		best := max(w.m[i], mx)
		if math.IsInf(float64(best), -1) { // nothing visible yet
			clear(row)
			continue
		}
		sum := float32(p.rk.ExpScaleShift(row, row, s, best))
		if math.IsInf(float64(w.m[i]), -1) {
			// The first visible keys: nothing to rescale (the output
			// row is the first block's product, or 0 from one of no
			// visible keys).
			w.l[i], w.m[i] = sum, best
			continue
		}
		corr := exp32(w.m[i] - best)
		w.l[i] = w.l[i]*corr + sum
		if corr != 1 {
			p.rk.Scale(y[i*p.dv:(i+1)*p.dv], corr)
		}
		w.m[i] = best
	}
}

// Constants of exp: x = n·ln2 + r with ln2 split in two parts so that
// n·ln2hi is exact, and the Cephes expf polynomial for e^r on |r| <= ln2/2
// (relative error about 1 ulp).
const (
	expLog2e = 1.44269504088896341
	expLn2hi = 0.693359375
	expLn2lo = -2.12194440e-4
	expP0    = 1.9875691500e-4
	expP1    = 1.3981999507e-3
	expP2    = 8.3334519073e-3
	expP3    = 4.1665795894e-2
	expP4    = 1.6666665459e-1
	expP5    = 5.0000001201e-1
)

// exp32 is e^x for float32, about 1 ulp of error. Beyond float32's range it gives 0 or +Inf; NaN stays NaN.
func exp32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x < -87.33654:
		return 0
	case x > 88.72283:
		return float32(math.Inf(1))
	}
	t := x * expLog2e
	ni := int32(t) // toward zero; then to nearest
	if d := t - float32(ni); d > 0.5 {
		ni++
	} else if d < -0.5 {
		ni--
	}
	n := float32(ni)
	r := x - n*expLn2hi - n*expLn2lo
	q := ((((expP0*r+expP1)*r+expP2)*r+expP3)*r+expP4)*r + expP5
	e := q*r*r + r + 1
	if ni > 127 { // 2^128 is not a float32: scale in two steps
		return e * 2 * math.Float32frombits(uint32(ni-1+127)<<23)
	}
	return e * math.Float32frombits(uint32(ni+127)<<23)
}
