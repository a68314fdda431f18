package asm

import (
	"fmt"
	"unsafe"
)

// The transposed convolution of a 4×4 input plane with a 4×4 kernel at
// stride 2, pad 1 (a DCGAN generator's 4² → 8² step), as a GEMM whose
// vectors are the sixteen taps of one output channel (ops'
// convtranspose_t4.go). There are only sixteen input cells: a phase
// product (conv_phase.go) puts them in one vector and must broadcast a
// weight for every FMA; here each broadcast input feeds three FMAs and
// the weights load as vectors, straight from the layout ONNX stores
// them in (input channel, output channel, ky, kx), so weights computed
// at run time need no packing. The sums of every tap of every cell
// (a 4×4 patch per cell and channel, overlapping its neighbours') then
// fold into the 8×8 output plane in registers.

// convT4SumsKernel computes, for cell < 16, v < ConvT4Cols, t < 16:
//
//	c[256v + 16·cell + t] = sum over q < k of x[16q + cell] · w[q·ldw + 16v + t]   (q ascending)
//
// k >= 1; the caller checks every read and write.
type convT4SumsKernel func(k int, x, w *float32, ldw int, c *float32)

// convT4PlanesKernel computes, for each channel ch < n, the 8×8 output
// plane o[64ch : 64ch+64] from the channel's tap sums p[256ch:] (as
// convT4SumsKernel lays them out) and bias[ch] (convT4PlanesGo says in
// what order). n >= 1; the caller checks every read and write.
type convT4PlanesKernel func(n int, p, bias, o *float32)

// ConvT4Cols is the output channels one ConvT4.Sums call computes.
const ConvT4Cols = 3

// ConvT4 runs the two steps of a 4×4-input transposed convolution
// (kernel 4×4, stride 2, pad 1) on the chosen convolution kernels.
type ConvT4 struct {
	sums   convT4SumsKernel
	planes convT4PlanesKernel
}

// NewConvT4 returns the chosen kernels' ConvT4, or nil where they have
// none (no AVX-512: the caller takes another path).
func NewConvT4() *ConvT4 {
	k := convFamily.best()
	if k.t4sums == nil {
		return nil
	}
	return &ConvT4{sums: k.t4sums, planes: k.t4planes}
}

// Sums sets c[256v + 16·cell + t] (v < ConvT4Cols, cell < 16, t < 16) to
// the sum over input channels q < depth of x[16q + cell] · w[q·ldw + 16v
// + t]: x holds depth 4×4 input planes, w each input channel's weights
// of ConvT4Cols output channels, sixteen taps (ky, kx) each, ldw apart.
func (k *ConvT4) Sums(c, x, w []float32, ldw, depth int) error {
	const cols = 16 * ConvT4Cols
	switch {
	case depth < 1:
		return fmt.Errorf("asm: ConvT4 sums need a depth of at least 1, have %d", depth)
	case ldw < cols:
		return fmt.Errorf("asm: ConvT4 weights' stride %d is under %d", ldw, cols)
	case len(x) < 16*depth:
		return fmt.Errorf("asm: ConvT4 input has %d floats, %d planes need %d", len(x), depth, 16*depth)
	case len(w) < (depth-1)*ldw+cols:
		return fmt.Errorf("asm: ConvT4 weights have %d floats, need %d", len(w), (depth-1)*ldw+cols)
	case len(c) < 16*cols:
		return fmt.Errorf("asm: ConvT4 sums have %d floats, need %d", len(c), 16*cols)
	}
	k.sums(depth, unsafe.SliceData(x), unsafe.SliceData(w), ldw, unsafe.SliceData(c))
	return nil
}

// Planes writes the 8×8 output planes o[64ch : 64ch+64] of the channels
// ch < len(bias) from their tap sums p[256ch : 256ch+256] (Sums' layout)
// and bias.
func (k *ConvT4) Planes(o, p, bias []float32) error {
	n := len(bias)
	switch {
	case n == 0:
		return fmt.Errorf("asm: ConvT4 planes need at least one channel")
	case len(p) < 256*n:
		return fmt.Errorf("asm: ConvT4 sums have %d floats, %d channels need %d", len(p), n, 256*n)
	case len(o) < 64*n:
		return fmt.Errorf("asm: ConvT4 output has %d floats, %d channels need %d", len(o), n, 64*n)
	}
	k.planes(n, unsafe.SliceData(p), unsafe.SliceData(bias), unsafe.SliceData(o))
	return nil
}

// convT4SumsGo is the twin of the assembly sums.
func convT4SumsGo(k int, x, w *float32, ldw int, c *float32) {
	xs, ws, cs := f32s(x, 16*k), f32s(w, (k-1)*ldw+16*ConvT4Cols), f32s(c, 256*ConvT4Cols)
	for v := range ConvT4Cols {
		for cell := range 16 {
			for t := range 16 {
				var s float32
				for q := range k {
					s += xs[16*q+cell] * ws[q*ldw+16*v+t]
				}
				cs[256*v+16*cell+t] = s
			}
		}
	}
}

// convT4PlanesGo is the twin of the assembly planes, in its order of
// additions. Output cell (2j+py, 2i+px) takes, of the kernel's rows,
// row 1 of input row j and row 3 of row j-1 (py = 0) or row 2 of row j
// and row 0 of row j+1 (py = 1); within each, of the kernel's columns,
// column 1 of input column i and 3 of i-1 (px = 0) or 2 of i and 0 of
// i+1 (px = 1); cells past the plane are zeros.
func convT4PlanesGo(n int, p, bias, o *float32) {
	ps, bs, os := f32s(p, 256*n), f32s(bias, n), f32s(o, 64*n)
	for ch := range n {
		sums := ps[256*ch:][:256]
		tap := func(ky, kx, j, i int) float32 {
			if j < 0 || j > 3 || i < 0 || i > 3 {
				return 0
			}
			return sums[16*(4*j+i)+4*ky+kx]
		}
		cols := func(ky, px, j, i int) float32 {
			if px == 0 {
				return tap(ky, 1, j, i) + tap(ky, 3, j, i-1)
			}
			return tap(ky, 2, j, i) + tap(ky, 0, j, i+1)
		}
		for j := range 4 {
			for i := range 4 {
				for py := range 2 {
					for px := range 2 {
						var s float32
						if py == 0 {
							s = cols(1, px, j, i) + cols(3, px, j-1, i)
						} else {
							s = cols(2, px, j, i) + cols(0, px, j+1, i)
						}
						os[64*ch+(2*j+py)*8+2*i+px] = s + bs[ch]
					}
				}
			}
		}
	}
}
