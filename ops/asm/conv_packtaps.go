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

// convTPackTapsKernel sets, for q < c, r < n, t < taps,
//
//	dst[off[t] + q·step[t] + r] = w[q·ldw + r·taps + t]
//
// and reports whether any weight it read is NaN or infinite. 1 <= n,
// taps <= 16, c >= 1; the caller checks every read and write.
type convTPackTapsKernel func(dst, w *float32, c, ldw, n, taps int, off, step *int) bool

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
	taps := len(off)
	switch {
	case c < 1 || n < 1 || n > TapPackerMax || taps < 1 || taps > TapPackerMax || len(step) != taps:
		return false, fmt.Errorf("asm: tap packing of %d input channels, %d output channels, %d taps (%d steps)", c, n, taps, len(step))
	case ldw < n*taps || len(w) < (c-1)*ldw+n*taps:
		return false, fmt.Errorf("asm: tap packing reads %d floats %d apart from %d weights", n*taps, ldw, len(w))
	}
	for t := range taps {
		if off[t] < 0 || step[t] < 0 || off[t]+(c-1)*step[t]+n > len(dst) {
			return false, fmt.Errorf("asm: tap %d packs from %d, %d apart, past %d floats", t, off[t], step[t], len(dst))
		}
	}
	return p.pack(unsafe.SliceData(dst), unsafe.SliceData(w), c, ldw, n, taps, unsafe.SliceData(off), unsafe.SliceData(step)), nil
}

// convTPackTapsGo is the twin of the assembly packer.
func convTPackTapsGo(dst, w *float32, c, ldw, n, taps int, off, step *int) bool {
	offs, steps, ws := unsafe.Slice(off, taps), unsafe.Slice(step, taps), f32s(w, (c-1)*ldw+n*taps)
	bad := false
	for q := range c {
		for r := range n {
			for t := range taps {
				v := ws[q*ldw+r*taps+t]
				*(*float32)(unsafe.Add(unsafe.Pointer(dst), 4*(offs[t]+q*steps[t]+r))) = v
				bad = bad || v-v != 0
			}
		}
	}
	return bad
}
