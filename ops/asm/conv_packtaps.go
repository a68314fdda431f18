package asm

import (
	"fmt"
	"unsafe"
)

// Packing weights tap by tap. A transposed convolution's weights are
// stored (input channel, output channel, kernel taps); its phase
// products (conv_phase.go) want each tap's output channels in a row, so
// weights computed at run time are transposed every run, a block of
// output channels by taps per input channel (ops'
// convtranspose_phase.go). In Go, one float at a time, that cost a
// 256 → 128 channel DCGAN step at 8² as much as 60% of its products.

// convTPackTapsKernel sets, for q < c, r < n, t < taps, with e = 2 where
// spread (n <= 8: a U-Net panel's rows pair two column phases per
// channel), else 1,
//
//	dst[off[t] + q·step[t] + e·r] = w[q·ldw + r·taps + t]
//
// and reports whether any weight it read is NaN or infinite. 1 <= n,
// taps <= 16, c >= 1; the caller checks every read and write.
type convTPackTapsKernel func(dst, w *float32, c, ldw, n, taps int, off, step *int, spread bool) bool

// TapPacker packs weights tap by tap on the chosen convolution kernels.
type TapPacker struct{ pack convTPackTapsKernel }

// NewTapPacker returns the chosen kernels' TapPacker, or nil where they
// have none (the caller packs in Go).
func NewTapPacker() *TapPacker {
	k := convFamily.best()
	if k.packTaps == nil {
		return nil
	}
	return &TapPacker{pack: k.packTaps}
}

// TapPackerMax is the most output channels and taps one Pack handles.
const TapPackerMax = 16

// Pack sets dst[off[t] + q·step[t] + r] = w[q·ldw + r·taps + t] for input
// channels q < c, output channels r < n and taps t < len(off) (a block of
// n output channels' taps, per input channel, from weights stored input
// channel by output channel by tap), and reports whether any of those
// weights is NaN or infinite.
func (p *TapPacker) Pack(dst, w []float32, c, ldw, n int, off, step []int) (bool, error) {
	return p.pack2(dst, w, c, ldw, n, off, step, false)
}

// PackSpread is Pack with each tap's channels every other float,
// dst[off[t] + q·step[t] + 2r], for n <= TapPackerMax/2.
func (p *TapPacker) PackSpread(dst, w []float32, c, ldw, n int, off, step []int) (bool, error) {
	if n > TapPackerMax/2 {
		return false, fmt.Errorf("asm: spread tap packing of %d output channels, at most %d", n, TapPackerMax/2)
	}
	return p.pack2(dst, w, c, ldw, n, off, step, true)
}

// pack2 checks the operands of Pack (spread: PackSpread) and runs it.
func (p *TapPacker) pack2(dst, w []float32, c, ldw, n int, off, step []int, spread bool) (bool, error) {
	taps, e := len(off), 1
	if spread {
		e = 2
	}
	switch {
	case c < 1 || n < 1 || n > TapPackerMax || taps < 1 || taps > TapPackerMax || len(step) != taps:
		return false, fmt.Errorf("asm: tap packing of %d input channels, %d output channels, %d taps (%d steps)", c, n, taps, len(step))
	case ldw < n*taps || len(w) < (c-1)*ldw+n*taps:
		return false, fmt.Errorf("asm: tap packing reads %d floats %d apart from %d weights", n*taps, ldw, len(w))
	}
	for t := range taps {
		if off[t] < 0 || step[t] < 0 || off[t]+(c-1)*step[t]+e*(n-1)+1 > len(dst) {
			return false, fmt.Errorf("asm: tap %d packs from %d, %d apart, past %d floats", t, off[t], step[t], len(dst))
		}
	}
	return p.pack(unsafe.SliceData(dst), unsafe.SliceData(w), c, ldw, n, taps, unsafe.SliceData(off), unsafe.SliceData(step), spread), nil
}

// convTPackTapsGo is the twin of the assembly packer.
func convTPackTapsGo(dst, w *float32, c, ldw, n, taps int, off, step *int, spread bool) bool {
	offs, steps, ws := unsafe.Slice(off, taps), unsafe.Slice(step, taps), f32s(w, (c-1)*ldw+n*taps)
	e := 1
	if spread {
		e = 2
	}
	bad := false
	for q := range c {
		for r := range n {
			for t := range taps {
				v := ws[q*ldw+r*taps+t]
				*(*float32)(unsafe.Add(unsafe.Pointer(dst), 4*(offs[t]+q*steps[t]+e*r))) = v
				bad = bad || v-v != 0
			}
		}
	}
	return bad
}
