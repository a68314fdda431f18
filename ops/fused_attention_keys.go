package ops

import (
	"math"

	"github.com/kilnml/kiln/tensor"
)

// Keys a padding mask removes. In a padded batch the mask gives the pad
// keys a large negative value (-10000, -3.4e38 or -Inf; a bool mask
// false), the same for every head and query row. Their softmax weights
// are then exactly 0 in float32, and the flash kernel leaves them out of
// both products: it gathers the keys that can matter (and their values
// and mask values) and runs its blocks over those alone.
//
// A key is left out only when a bound proves its weight is below 2^-158
// for every query row of the head, far under float32's smallest
// subnormal (2^-149), so leaving it out changes no weight (outputs move
// only by the order of the sums): by
// Cauchy-Schwarz the scaled score of query i and key j lies within
// ±c·|k_j| of 0, with c = |scale|·max_i |q_i|, so x_ij = score + mask_j
// lies in [lo_j, hi_j] = mask_j ∓ c·|k_j|, and every row's max is at least
// L = max_j lo_j. A key with hi_j < L - 110 has weight exp(x_ij - max_i) <
// e^-110. The bounds are widened by a relative 2^-10 (c) and 2^-20 (the
// sums) to cover the float32 rounding of the products and the mask add.

// keyBoundSlack is how far below every row's max a left-out key's
// logit must be proven to lie: e^-110 < 2^-158.
const keyBoundSlack = 110

// keysOf returns the keys and values of head kvh the blocks run over:
// the gathered ones, or the head's rows in place.
func (p *flashPlan) keysOf(w *flashWorker, ins []tensor.Tensor, kvh int) (ks, vs []float32) {
	if w.gathered {
		return w.kg[:w.nkeys*p.d], w.vg[:w.nkeys*p.dv]
	}
	return ins[1].F32()[kvh*p.sk*p.d:][:p.sk*p.d], ins[2].F32()[kvh*p.sk*p.dv:][:p.sk*p.dv]
}

// chooseKeys sets w.nkeys, w.gathered and w.raw for head kvh: with a
// padding mask, the keys the bound cannot rule out gathered with their
// values and mask values (when some are ruled out), else all keys in
// place; raw when the mask is 0 for every key the blocks run over.
func (p *flashPlan) chooseKeys(w *flashWorker, ins []tensor.Tensor, kvh int) {
	w.sk = p.sk
	if p.kvLen {
		w.sk = keysInUse(ins[len(ins)-1], kvh/p.hk, p.sk)
	}
	w.nkeys, w.gathered, w.raw = w.sk, false, p.rawScale
	if !p.padding || p.sk == 0 {
		return
	}
	b := kvh / p.hk
	mask := w.maskc[:p.sk] // the mask row as float32 logits
	if p.mask == maskBool {
		keep := ins[3].Data
		for j := range mask {
			mask[j] = 0
			if keep[b*p.mst[0]+j*p.mst[3]] == 0 {
				mask[j] = float32(math.Inf(-1))
			}
		}
	} else {
		add := ins[3].F32()
		for j := range mask {
			mask[j] = add[b*p.mst[0]+j*p.mst[3]]
		}
	}
	cut, ok := 0.0, false
	if !narrowMask(mask) { // else no key's bound can fall below the cut
		cut, ok = p.keyCut(w, ins, kvh)
	}
	if ok {
		if n := p.keptPrefix(w, cut); n >= 0 {
			w.nkeys = n // right padding: the kept keys are in place
		} else {
			ks, vs := p.keysOf(w, ins, kvh)
			p.gatherKeys(w, ks, vs, cut)
		}
	}
	w.raw = p.scaleOK && zeros(w.maskc[:w.nkeys])
}

// narrowMask reports whether the mask values span less than
// keyBoundSlack, so keyCut can remove no key: every bound hi_j is at
// least mask_j, so at least the smallest mask value, while the cut is
// keyBoundSlack below L, which is at most the largest. BERT's mask for an
// unpadded sequence (all 0) is the common case: its keys' norms need not
// be computed. NaN and infinite values are not narrow.
func narrowMask(mask []float32) bool {
	if len(mask) == 0 {
		return false
	}
	lo, hi := float64(mask[0]), float64(mask[0])
	for _, m := range mask {
		lo, hi = min(lo, float64(m)), max(hi, float64(m))
	}
	return hi-lo < keyBoundSlack
}

// keyCut computes the bound hi_j of every key of head kvh into w.keyHi
// and returns the cut below which a key's weight is proven 0, with ok
// when some key falls below it.
func (p *flashPlan) keyCut(w *flashWorker, ins []tensor.Tensor, kvh int) (cut float64, ok bool) {
	b, hk := kvh/p.hk, kvh%p.hk
	qs := ins[0].F32()[(b*p.h+hk*p.group)*p.sq*p.d:][:p.group*p.sq*p.d]
	qmax := 0.0 // the largest squared norm
	for i := 0; i < len(qs); i += p.d {
		qmax = max(qmax, p.rk.SumSqDev(qs[i:i+p.d], 0))
	}
	c := math.Abs(float64(p.scale)) * math.Sqrt(qmax) * (1 + 1.0/1024)
	if math.IsInf(c, 0) || math.IsNaN(c) {
		return 0, false
	}
	ks, _ := p.keysOf(w, ins, kvh)
	hi := w.keyHi
	lmax := math.Inf(-1)
	for j, mj := range w.maskc[:p.sk] {
		kn := c * math.Sqrt(p.rk.SumSqDev(ks[j*p.d:(j+1)*p.d], 0))
		lo, up := float64(mj)-kn, float64(mj)+kn
		if math.IsNaN(lo) || math.IsNaN(up) {
			return 0, false // a NaN mask value, or an Inf key against an infinite mask value: no bound
		}
		// Widen for rounding (an infinite bound needs none).
		if !math.IsInf(lo, 0) {
			lo -= math.Abs(lo) / (1 << 20)
		}
		if !math.IsInf(up, 0) {
			up += math.Abs(up) / (1 << 20)
		}
		lmax = max(lmax, lo)
		hi[j] = float32(min(up, math.MaxFloat32)) // the widening covers this rounding
	}
	if math.IsInf(lmax, -1) {
		return 0, false // every key removed: the kernel's NaN rows
	}
	cut = lmax - keyBoundSlack
	for _, h := range hi {
		if float64(h) < cut {
			return cut, true
		}
	}
	return 0, false
}

// zeros reports whether every x is ±0: adding such a mask changes no
// weight (exp(-0) = exp(+0)), so the kernel need not add it.
func zeros(x []float32) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return true
}

// keptPrefix returns n when the keys the cut keeps are exactly [0, n)
// (a batch padded on the right), else -1. The blocks then run over the
// first n keys in place, and, as for causality's skipped keys, the block
// kernel poisons the columns of non-finite values past them.
func (p *flashPlan) keptPrefix(w *flashWorker, cut float64) int {
	n := 0
	for n < len(w.keyHi) && !(float64(w.keyHi[n]) < cut) {
		n++
	}
	for _, h := range w.keyHi[n:] {
		if !(float64(h) < cut) {
			return -1
		}
	}
	return n
}

// gatherKeys moves the keys whose bound w.keyHi reaches cut, their
// values and mask values to the front of w.kg, w.vg and w.maskc, and
// marks in w.poison the value columns where a left-out key's value is
// not finite.
func (p *flashPlan) gatherKeys(w *flashWorker, ks, vs []float32, cut float64) {
	clear(w.poison)
	n := 0
	for j, h := range w.keyHi {
		v := vs[j*p.dv : (j+1)*p.dv]
		if float64(h) < cut {
			for c, x := range v {
				if x-x != 0 { // Inf or NaN: its weight 0 times it is NaN
					w.poison[c] = true
				}
			}
			continue
		}
		copy(w.kg[n*p.d:(n+1)*p.d], ks[j*p.d:])
		copy(w.vg[n*p.dv:(n+1)*p.dv], v)
		w.maskc[n] = w.maskc[j] // n <= j: read before it is overwritten
		n++
	}
	w.nkeys, w.gathered = n, true
}

// poisonColumns gives NaN to the output columns w.poison marks.
func (p *flashPlan) poisonColumns(w *flashWorker, y []float32, mq int) {
	nan := float32(math.NaN())
	for c, bad := range w.poison {
		if bad {
			for i := range mq {
				y[i*p.dv+c] = nan
			}
		}
	}
}
