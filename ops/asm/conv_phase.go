package asm

import (
	"fmt"
	"slices"
	"unsafe"
)

// Stride-2 phase products. A transposed convolution at stride 2 whose
// output is twice its input along both axes splits into four output
// phases (row and column parity); each phase is an ordinary stride-1
// convolution of the input with the taps that land on it, so no product
// is computed that a later pass must add to another (ops'
// convtranspose_phase.go). A PhaseProduct computes such a phase for a
// panel of output channels and two segments of sixteen input positions
// at a time, reading each tap's sixteen inputs straight from a
// zero-padded copy of the input (one offset per step, as the direct
// convolution path does), and stores its sums every other float: the two
// column phases of an output row fill its even and its odd cells.

// convPhaseKernel computes, for each tile t < ntiles with offsets
// tiles[4t : 4t+4] = x_0, x_1, o_0, o_1, and for r < n, segment u < 2,
// j < 16:
//
//	s := bias[r] + sum over steps q < k of a[q·rows + r] · x[x_u + off[q] + j]   (FMAs, q ascending)
//	o[o_u + r·ldo + 2j] = s
//
// rows is 4, 8 or 12 (the rows computed; a holds k·rows floats, bias
// rows), or 16 or 24, which compute segment 0 only (u < 1: for planes of
// one segment, where a second would compute it again), 1 <= n <= rows,
// k >= 1, ntiles >= 1. Only those cells of o are written. tiles holds one more tile, which is not computed: the
// kernels fetch each next tile's inputs ahead (the last fetches its own
// again). The caller checks every read and write.
type convPhaseKernel func(rows, n, k int, a, x *float32, off *int, bias, o *float32, ldo int, tiles *int, ntiles int)

// convPhaseGo is the twin of the assembly kernels (the tests' reference).
func convPhaseGo(rows, n, k int, a, x *float32, off *int, bias, o *float32, ldo int, tiles *int, ntiles int) {
	as, bs, offs, ts := f32s(a, k*rows), f32s(bias, rows), unsafe.Slice(off, k), unsafe.Slice(tiles, 4*ntiles)
	for t := range ntiles {
		for u := range phaseSegments(rows) {
			xu, ou := ts[4*t+u], ts[4*t+2+u]
			for r := range n {
				for j := range 16 {
					s := bs[r]
					for q, at := range offs {
						s += as[q*rows+r] * *(*float32)(unsafe.Add(unsafe.Pointer(x), 4*(xu+at+j)))
					}
					*(*float32)(unsafe.Add(unsafe.Pointer(o), 4*(ou+r*ldo+2*j))) = s
				}
			}
		}
	}
}

// PhaseProduct is the product of one phase's taps, given as offsets
// from a segment's first input (in floats, one per step of the depth:
// input channel and tap).
type PhaseProduct struct {
	kernel convPhaseKernel
	off    []int
	reach  int // one past the farthest float a segment's steps read
}

// NewPhaseProduct returns the phase product over steps at offsets off
// (each >= 0, at least one) with the chosen convolution kernels, or nil
// where they have no vector phase kernel (the caller takes another
// path).
func NewPhaseProduct(off []int) (*PhaseProduct, error) {
	k := convFamily.best()
	if k.phase == nil {
		return nil, nil
	}
	return newPhaseProduct(k.phase, off)
}

// HasPhaseProduct reports whether the chosen convolution kernels have a
// vector phase product (NewPhaseProduct returns one).
func HasPhaseProduct() bool { return convFamily.best().phase != nil }

func newPhaseProduct(kernel convPhaseKernel, off []int) (*PhaseProduct, error) {
	if len(off) == 0 {
		return nil, fmt.Errorf("asm: a phase product needs at least one step")
	}
	p := &PhaseProduct{kernel: kernel, off: append([]int(nil), off...)}
	for q, o := range off {
		if o < 0 {
			return nil, fmt.Errorf("asm: phase product step %d at offset %d", q, o)
		}
		p.reach = max(p.reach, o+16)
	}
	return p, nil
}

// Steps is the depth of the product: the rows of A a panel holds.
func (p *PhaseProduct) Steps() int { return len(p.off) }

// PhaseRows are the panel heights a PhaseProduct computes; a panel of
// fewer channels is packed to the next one with zero rows. Panels of
// more than 12 (PhaseOneRows) compute each tile's first segment only.
var PhaseRows = [...]int{4, 8, 12, 16, 24}

// PhaseOneRows is the least panel height computed one segment a tile.
const PhaseOneRows = 16

// phaseSegments is the segments of a tile a panel of rows computes.
func phaseSegments(rows int) int {
	if rows >= PhaseOneRows {
		return 1
	}
	return 2
}

// PhaseTiles are the tiles of one PhaseProduct run: each two segments of
// sixteen positions, by the offsets of their first inputs (in the input)
// and first outputs (from the run's output base).
type PhaseTiles struct {
	at           []int
	xLast, oLast int // the largest input and output offsets
}

// NewPhaseTiles returns the tiles whose offsets are at[4t : 4t+4] = the
// two segments' inputs, then their outputs (each >= 0; at least one
// tile).
func NewPhaseTiles(at []int) (*PhaseTiles, error) {
	if len(at) == 0 || len(at)%4 != 0 {
		return nil, fmt.Errorf("asm: phase tiles need four offsets a tile, have %d", len(at))
	}
	t := &PhaseTiles{at: append(append([]int(nil), at...), at[len(at)-4:]...)} // a tile past the last: see convPhaseKernel
	for i, v := range at {
		if v < 0 {
			return nil, fmt.Errorf("asm: phase tile %d has offset %d", i/4, v)
		}
		if i%4 < 2 {
			t.xLast = max(t.xLast, v)
		} else {
			t.oLast = max(t.oLast, v)
		}
	}
	return t, nil
}

// Run computes channels 0..n-1 of a panel of rows (PhaseRows) for each
// tile of ts: for each of its segments (input offset x_u, output offset
// o_u; the first only for panels of PhaseOneRows or more), r < n and
// j < 16,
//
//	y[base + o_u + r·ldo + 2j] = bias[r] + Σ_q a[q·rows + r] · x[x_u + off[q] + j]
//
// where a holds the panel, Steps() rows of rows floats, and bias rows
// floats. The cells between are left as they are. It panics where a
// read or write falls outside its slice.
func (p *PhaseProduct) Run(rows, n int, a, bias, x, y []float32, base, ldo int, ts *PhaseTiles) {
	if !slices.Contains(PhaseRows[:], rows) || n < 1 || n > rows || ldo < 0 || base < 0 {
		panic(fmt.Sprintf("asm: phase run of %d of %d rows, output base %d, stride %d", n, rows, base, ldo))
	}
	k := len(p.off)
	if len(a) < k*rows || len(bias) < rows {
		panic(fmt.Sprintf("asm: phase run of %d rows, %d steps: A of %d, bias of %d", rows, k, len(a), len(bias)))
	}
	if ts.xLast+p.reach > len(x) {
		panic(fmt.Sprintf("asm: phase segment at %d reads %d floats past x of %d", ts.xLast, p.reach, len(x)))
	}
	if base+ts.oLast+(n-1)*ldo+31 > len(y) {
		panic(fmt.Sprintf("asm: phase segment writes %d rows from %d (stride %d) past y of %d", n, base+ts.oLast, ldo, len(y)))
	}
	if overlapsAny(y, a, bias, x) {
		panic("asm: phase run output overlaps an operand")
	}
	p.kernel(rows, n, k, &a[0], &x[0], &p.off[0], &bias[0], &y[base], ldo, &ts.at[0], len(ts.at)/4-1)
}
