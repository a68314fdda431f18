package graph

import (
	"math"

	"github.com/kilnml/kiln/tensor"
)

// Spectral ops as compositions: a discrete Fourier transform is a product
// with a constant matrix of cosines and sines, so DFT and STFT build
// Transposes, Reshapes, a Gather of frames and one MatMul. The product
// runs in F64 whatever x's dtype (and the result is cast back): the
// transform's outputs that are zero in exact arithmetic come from the
// cancellation of terms as large as the input, which F32 would leave at
// a relative 1e-7 of those terms rather than near zero.

// DFT is the discrete Fourier transform of x [..., 1 or 2] (real, or
// complex as [re, im] in the last axis) along axis (not the last),
// zero-padded or truncated to length n (0: the axis's own length). The
// result is complex [..., 2] with n bins on axis, or n/2+1 with onesided
// (real input only). inverse applies the inverse transform, scaled by 1/n.
func (g *Graph) DFT(x *Node, axis, n int, inverse, onesided bool) *Node {
	if g.err != nil || !x.Valid() {
		return g.fail("DFT: invalid input")
	}
	r := x.Shape.Rank()
	ax, err := tensor.NormAxis(axis, r)
	if err != nil || r < 2 || ax == r-1 {
		return g.fail("DFT %s: axis %d of %v must be a signal axis, not the last", x.Name, axis, x.Shape)
	}
	comps := x.Shape[r-1]
	if (comps != 1 && comps != 2) || !x.DType.IsFloat() {
		return g.fail("DFT %s: input %v %v must be float [..., 1] (real) or [..., 2] (complex)", x.Name, x.DType, x.Shape)
	}
	if onesided && (comps == 2 || inverse) {
		return g.fail("DFT %s: onesided needs a real input and a forward transform", x.Name)
	}
	if n == 0 {
		n = x.Shape[ax]
	}
	if n < 1 || n > 1<<14 {
		return g.fail("DFT %s: length %d outside [1, 16384] (the transform is a dense n×n product)", x.Name, n)
	}
	if d := x.Shape[ax]; d > n {
		x = g.Slice(x, SliceSpec{Axes: []int{ax}, Starts: []int{0}, Ends: []int{n}})
	} else if d < n {
		pads := make([]int, 2*r)
		pads[r+ax] = n - d
		x = g.Pad(x, pads, PadConstant, 0)
	}
	bins := n
	if onesided {
		bins = n/2 + 1
	}
	// [rest..., n, comps] with axis moved before the components.
	perm := make([]int, 0, r)
	for i := range r - 1 {
		if i != ax {
			perm = append(perm, i)
		}
	}
	perm = append(perm, ax, r-1)
	moved := g.Transpose(x, perm...)
	rest := moved.Shape[:r-2].Clone()
	flat := g.Reshape(g.Cast(moved, tensor.F64), rest.NumElements(), n*comps)
	y := g.MatMul(flat, g.constOf(tensor.F64, tensor.Shape{n * comps, bins * 2}, dftMatrix(n, bins, comps, inverse)))
	y = g.Reshape(g.Cast(y, x.DType), append(rest, bins, 2)...)
	inv := make([]int, r)
	for i, p := range perm {
		inv[p] = i
	}
	return g.Transpose(y, inv...)
}

// dftMatrix is W [n·comps, bins·2] with y = x·W the transform of x's
// complex rows: for x_j = a + ib, y_k += x_j·(cos θ + i·s·sin θ), θ =
// 2π·jk/n, s = -1 forward and +1 inverse (which also divides by n).
// jk is reduced mod n first, so θ stays in [0, 2π) and exact for the
// symmetric points.
func dftMatrix(n, bins, comps int, inverse bool) []float64 {
	s, scale := -1.0, 1.0
	if inverse {
		s, scale = 1, 1/float64(n)
	}
	w := make([]float64, n*comps*bins*2)
	for j := range n {
		for k := range bins {
			th := 2 * math.Pi * float64(j*k%n) / float64(n)
			c, sn := math.Cos(th)*scale, s*math.Sin(th)*scale
			re := (j*comps)*bins*2 + k*2 // row of a_j, column of y_k's real part
			w[re], w[re+1] = c, sn
			if comps == 2 {
				im := re + bins*2 // row of b_j
				w[im], w[im+1] = -sn, c
			}
		}
	}
	return w
}

// STFT is the short-time Fourier transform of signal [B, L, 1 or 2]:
// frames of length frameLength every step samples, each multiplied by
// window [frameLength] (nil: none) and transformed (onesided: n/2+1
// bins, real input only), giving [B, frames, bins, 2].
func (g *Graph) STFT(signal *Node, step int, window *Node, frameLength int, onesided bool) *Node {
	if g.err != nil || !signal.Valid() {
		return g.fail("STFT: invalid input")
	}
	s := signal.Shape
	if s.Rank() != 3 || step < 1 || frameLength < 1 || frameLength > s[1] {
		return g.fail("STFT %s: signal %v must be [B, L, 1 or 2], step %d >= 1 and frame length %d in [1, L]", signal.Name, s, step, frameLength)
	}
	frames := (s[1]-frameLength)/step + 1
	idx := make([]float64, frames*frameLength)
	for f := range frames {
		for j := range frameLength {
			idx[f*frameLength+j] = float64(f*step + j)
		}
	}
	x := g.Gather(signal, g.constOf(tensor.I64, tensor.Shape{frames, frameLength}, idx), 1) // [B, frames, n, c]
	if window != nil {
		if !window.Shape.Equal(tensor.Shape{frameLength}) {
			return g.fail("STFT %s: window %v must be [%d]", signal.Name, window.Shape, frameLength)
		}
		x = g.Mul(x, g.Reshape(window, 1, 1, frameLength, 1))
	}
	return g.DFT(x, 2, frameLength, false, onesided)
}
