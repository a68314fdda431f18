package asm

import (
	"fmt"
	"math"
	"math/bits"
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
// at a time, reading each tap's sixteen inputs straight from the input
// (one offset per step, as the direct convolution path does; edge tiles
// mask the lanes past the input's edges, where a zero-padded copy would
// hold zeros), and stores its sums every other float: the two column
// phases of an output row fill its even and its odd cells.

// convPhaseKernel computes, for each tile t < ntiles with offsets
// tiles[6t : 6t+6] = x_0, x_1, o_0, o_1, m_0, m_1, and for r < n,
// segment u < 2, j < 16:
//
//	s := bias[r] + sum over steps q < k of a[q·rows + r] · x[x_u + off[q] + j]   (FMAs, q ascending)
//	o[o_u + r·ldo + 2j] = s
//
// where, with masks, a term whose lane j is clear in masks[m_u + q] is
// a zero that reads nothing (the input's edges, read in place);
// rows is 4, 8 or 12 (the rows computed; a holds k·rows floats, bias
// rows), or 16 or 24, which compute segment 0 only (u < 1: for planes of
// one segment, where a second would compute it again), 1 <= n <= rows,
// k >= 1, ntiles >= 1. Only those cells of o are written. With pairs
// (rows of 12 or fewer, n even) rows 2c and 2c+1 are the two column
// phases of channel c, written whole: for c < n/2,
//
//	o[o_u + c·ldo + 2j + e] = row 2c+e's s at lane j   (e < 2)
//
// With whole (rows of 12 or fewer) each row's sums are stored as they
// are, sixteen consecutive floats a segment (a stride-1 convolution's
// output rows, conv_point.go):
//
//	o[o_u + r·ldo + j] = s
//
// clamped first with gemmRelu (s < 0 ? 0 : s) or gemmClamp (to [+0, hi],
// hi the flags' upper half), as the GEMM kernels clamp (whole only).
// flags holds the store (a phaseStore) in its low two bits and those
// clamp bits. tiles holds one more tile, which is not computed: the
// kernels fetch each next tile's inputs ahead (the last fetches its own
// again). The caller checks every read and write.
type convPhaseKernel func(rows, n, k int, a, x *float32, off *int, bias, o *float32, ldo int, tiles *int, ntiles int, masks *uint64, flags uint)

// phaseStore is how a phase kernel stores its sums (the low two bits of
// its flags).
type phaseStore uint

const (
	phaseSpread phaseStore = iota // every other float: a column phase of the output rows
	phasePairs                    // rows 2c and 2c+1 interleaved: both column phases of channel c
	phaseWhole                    // each row as it is
)

// phaseFetchOut is the flag bit (RunWhole's) that has the kernel fetch
// the next tile's output lines for writing (PREFETCHW) as it starts a
// tile, as the GEMM kernels fetch their C tile: a stem's output, larger
// than L2 and written a tile of twelve planes at a time, otherwise
// waits on each line at the stores. SqueezeNet's stem (3 → 64 channels
// at 111², 3.1 MiB out) with its output evicted from the caches ran in
// 287-347 µs against 340-381 without (hot: 240-266 against 242-262),
// and in the model in 0.319 ms against 0.346; MobileNetV2's pointwise
// steps alike (Zen 5, one thread). A hint: the Go twin ignores it.
const phaseFetchOut uint = 32

// convPhaseGo is the twin of the assembly kernels (the tests' reference).
func convPhaseGo(rows, n, k int, a, x *float32, off *int, bias, o *float32, ldo int, tiles *int, ntiles int, masks *uint64, flags uint) {
	store := phaseStore(flags & 3)
	hi := math.Float32frombits(uint32(flags >> 32))
	as, bs, offs, ts := f32s(a, k*rows), f32s(bias, rows), unsafe.Slice(off, k), unsafe.Slice(tiles, phaseTile*ntiles)
	for t := range ntiles {
		for u := range phaseSegments(rows) {
			xu, ou, mu := ts[phaseTile*t+u], ts[phaseTile*t+2+u], ts[phaseTile*t+4+u]
			for r := range n {
				for j := range 16 {
					s := bs[r]
					for q, at := range offs {
						if masks != nil && *(*uint64)(unsafe.Add(unsafe.Pointer(masks), 8*(mu+q)))>>j&1 == 0 {
							s += as[q*rows+r] * 0 // the masked lane's zero (keeps 0·Inf a NaN, as the FMA on it)
							continue
						}
						s += as[q*rows+r] * *(*float32)(unsafe.Add(unsafe.Pointer(x), 4*(xu+at+j)))
					}
					at := ou + r*ldo + 2*j
					switch store {
					case phasePairs:
						at = ou + r/2*ldo + 2*j + r%2
					case phaseWhole:
						at = ou + r*ldo + j
						switch {
						case flags&gemmRelu != 0 && s < 0:
							s = 0
						case flags&gemmClamp != 0:
							s = min(max(s, 0), hi)
						}
					}
					*(*float32)(unsafe.Add(unsafe.Pointer(o), 4*at)) = s
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
	least  int // the least offset
}

// NewPhaseProduct returns the phase product over steps at offsets off
// (at least one; an offset below 0 reads before a segment's first
// input, as tiles of the input read in place do at its edges) with the
// chosen convolution kernels, or nil where they have no vector phase
// kernel (the caller takes another path).
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
	p := &PhaseProduct{kernel: kernel, off: append([]int(nil), off...), least: off[0]}
	for _, o := range off {
		p.reach = max(p.reach, o+16)
		p.least = min(p.least, o)
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
// and first outputs (from the run's output base); edge tiles also name
// each segment's masks.
type PhaseTiles struct {
	at                   []int // phaseTile a tile: x_0, x_1, o_0, o_1, m_0, m_1
	xFirst, xLast, oLast int   // the least and largest input offsets, the largest output offset
	// Edge tiles (PhaseProduct.EdgeTiles): the masks, and the product
	// and input length whose reads they were checked for.
	masks []uint64
	of    *PhaseProduct
	xLen  int
}

// phaseTile is the ints a tile takes in the kernels' table.
const phaseTile = 6

// NewPhaseTiles returns the tiles whose offsets are at[4t : 4t+4] = the
// two segments' inputs, then their outputs (each >= 0; at least one
// tile).
func NewPhaseTiles(at []int) (*PhaseTiles, error) {
	if len(at) == 0 || len(at)%4 != 0 {
		return nil, fmt.Errorf("asm: phase tiles need four offsets a tile, have %d", len(at))
	}
	t := &PhaseTiles{xFirst: at[0]}
	for i, v := range at {
		if v < 0 {
			return nil, fmt.Errorf("asm: phase tile %d has offset %d", i/4, v)
		}
		if i%4 < 2 {
			t.xFirst, t.xLast = min(t.xFirst, v), max(t.xLast, v)
		} else {
			t.oLast = max(t.oLast, v)
		}
	}
	for i := 0; i < len(at); i += 4 {
		t.at = append(t.at, at[i:i+4]...)
		t.at = append(t.at, 0, 0)
	}
	t.at = append(t.at, t.at[len(t.at)-phaseTile:]...) // a tile past the last: see convPhaseKernel
	return t, nil
}

// PhaseMasks are a product's edge masks, by class: masks[c][q] keeps
// the lanes of class c's segments that step q reads (bit j: input
// x_u + off[q] + j; a clear bit reads a zero, and nothing).
type PhaseMasks struct {
	of      *PhaseProduct
	m       []uint64 // class-major, a step each: the kernels' table
	classes int
}

// NewMasks returns p's edge masks of the given classes (each Steps()
// long).
func (p *PhaseProduct) NewMasks(masks [][]uint16) (*PhaseMasks, error) {
	pm := &PhaseMasks{of: p, classes: len(masks)}
	for c, m := range masks {
		if len(m) != len(p.off) {
			return nil, fmt.Errorf("asm: edge mask class %d has %d steps, the product %d", c, len(m), len(p.off))
		}
		for _, v := range m {
			pm.m = append(pm.m, uint64(v))
		}
	}
	if pm.classes == 0 {
		return nil, fmt.Errorf("asm: edge masks need a class")
	}
	return pm, nil
}

// EdgeTiles returns p's tiles over an input of xLen floats read in
// place, masked at its edges: at[6t : 6t+6] are the two segments'
// inputs and outputs, then the class of each segment's masks in m (p's).
// Every lane a mask keeps must lie in the input (panels of 16 and 24
// rows read the first segment only, but both are checked).
func (p *PhaseProduct) EdgeTiles(at []int, m *PhaseMasks, xLen int) (*PhaseTiles, error) {
	if len(at) == 0 || len(at)%phaseTile != 0 {
		return nil, fmt.Errorf("asm: edge tiles need %d values a tile, have %d", phaseTile, len(at))
	}
	if m.of != p {
		return nil, fmt.Errorf("asm: edge masks of another product")
	}
	k := len(p.off)
	t := &PhaseTiles{at: append(slices.Clone(at), at[len(at)-phaseTile:]...), masks: m.m, of: p, xLen: xLen}
	for i := 0; i < len(at); i += phaseTile {
		for u := range 2 {
			xu, c := at[i+u], at[i+4+u]
			if at[i+2+u] < 0 || c < 0 || c >= m.classes {
				return nil, fmt.Errorf("asm: edge tile %d: output %d, mask class %d of %d", i/phaseTile, at[i+2+u], c, m.classes)
			}
			t.oLast = max(t.oLast, at[i+2+u])
			for q, o := range p.off {
				mask := uint16(m.m[c*k+q])
				if mask == 0 {
					continue
				}
				lo, hi := xu+o+bits.TrailingZeros16(mask), xu+o+15-bits.LeadingZeros16(mask)
				if lo < 0 || hi >= xLen {
					return nil, fmt.Errorf("asm: edge tile %d segment %d step %d reads x[%d..%d] of %d", i/phaseTile, u, q, lo, hi, xLen)
				}
			}
			t.at[i+4+u] = c * k // the kernels' index of the class's first mask
			if i+phaseTile == len(at) {
				t.at[i+phaseTile+4+u] = c * k // and the tile past the last's
			}
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
// floats (edge tiles: x's masked lanes are zeros). The cells between
// are left as they are. It panics where a read or write falls outside
// its slice.
func (p *PhaseProduct) Run(rows, n int, a, bias, x, y []float32, base, ldo int, ts *PhaseTiles) {
	p.run(rows, n, a, bias, x, y, base, ldo, ts, uint(phaseSpread))
}

// RunPairs is Run over a panel whose rows pair the two column phases of
// n/2 channels (n even, rows below PhaseOneRows), where both phases read
// the same steps (a 2×2 kernel at stride 2 without pads): row 2c + e is
// channel c's phase of output columns of parity e, and the pair is
// written whole, for each segment, c < n/2, j < 16 and e < 2:
//
//	y[base + o_u + c·ldo + 2j + e] = row 2c+e's sum at lane j
//
// (vectors stored whole where Run stores every other float, and each
// output row written once instead of by two runs).
func (p *PhaseProduct) RunPairs(rows, n int, a, bias, x, y []float32, base, ldo int, ts *PhaseTiles) {
	if n%2 != 0 || rows >= PhaseOneRows {
		panic(fmt.Sprintf("asm: phase pairs run of %d of %d rows", n, rows))
	}
	p.run(rows, n, a, bias, x, y, base, ldo, ts, uint(phasePairs))
}

// RunWhole is Run storing each row's sums as they are (rows below
// PhaseOneRows): for each segment, r < n and j < 16,
//
//	y[base + o_u + r·ldo + j] = bias[r] + Σ_q a[q·rows + r] · x[x_u + off[q] + j]
//
// (a stride-1 convolution's output rows, where Run fills one column
// phase's cells), each clamped first as clamp says: 0, gemmRelu, or
// clampFlags(hi).
func (p *PhaseProduct) RunWhole(rows, n int, a, bias, x, y []float32, base, ldo int, ts *PhaseTiles, clamp uint) {
	if rows >= PhaseOneRows || clamp&^(gemmRelu|gemmClamp|math.MaxUint32<<32) != 0 {
		panic(fmt.Sprintf("asm: phase whole run of %d rows, clamp %#x", rows, clamp))
	}
	p.run(rows, n, a, bias, x, y, base, ldo, ts, uint(phaseWhole)|clamp|phaseFetchOut)
}

func (p *PhaseProduct) run(rows, n int, a, bias, x, y []float32, base, ldo int, ts *PhaseTiles, flags uint) {
	store := phaseStore(flags & 3)
	if !slices.Contains(PhaseRows[:], rows) || n < 1 || n > rows || ldo < 0 || base < 0 {
		panic(fmt.Sprintf("asm: phase run of %d of %d rows, output base %d, stride %d (edge tiles %v)", n, rows, base, ldo, ts.of != nil))
	}
	k := len(p.off)
	if len(a) < k*rows || len(bias) < rows {
		panic(fmt.Sprintf("asm: phase run of %d rows, %d steps: A of %d, bias of %d", rows, k, len(a), len(bias)))
	}
	var masks *uint64
	switch {
	case ts.of != nil:
		if ts.of != p || len(x) < ts.xLen {
			panic(fmt.Sprintf("asm: phase edge tiles checked for another product or %d floats of x, have %d", ts.xLen, len(x)))
		}
		masks = &ts.masks[0] // every tile names a class: there are masks
	case ts.xLast+p.reach > len(x) || ts.xFirst+p.least < 0:
		panic(fmt.Sprintf("asm: phase segments at %d..%d read %d..%d floats from them, x of %d", ts.xFirst, ts.xLast, p.least, p.reach, len(x)))
	}
	outRows, width := n, 31 // a row's outputs: every other float of 31, 32 floats, or 16
	switch store {
	case phasePairs:
		outRows, width = n/2, 32
	case phaseWhole:
		width = 16
	}
	if base+ts.oLast+(outRows-1)*ldo+width > len(y) {
		panic(fmt.Sprintf("asm: phase segment writes %d rows from %d (stride %d) past y of %d", outRows, base+ts.oLast, ldo, len(y)))
	}
	if overlapsAny(y, a, bias, x) {
		panic("asm: phase run output overlaps an operand")
	}
	p.kernel(rows, n, k, &a[0], &x[0], &p.off[0], &bias[0], &y[base], ldo, &ts.at[0], len(ts.at)/phaseTile-1, masks, flags)
}
