package asm

import (
	"errors"
	"fmt"
	"unsafe"
)

// Transpose32 is a prepared permutation of a row-major tensor of 32-bit
// words (any 4-byte dtype): output dim i walks input dim perm[i]. Dims are
// first coalesced (size-1 dims dropped, neighbours contiguous in both
// layouts merged). What is left is either
//
//   - runs: the innermost output dim is contiguous in the input too, so
//     the output is a sequence of copied runs (e.g. the attention head
//     shuffle [B, S, H, D] → [B, H, S, D] with runs of D words); or
//   - tiles: a batch of 2-D transposes between the input's innermost dim
//     and the output's, done in square cache tiles of tileSize words per
//     side whose 8×8 blocks go through the transpose8 primitive (edges in
//     Go), so both the reads and the writes stay within a few lines.
//
// Work is split over par in chunks of whole runs or tiles.
type Transpose32 struct {
	k     *RowKernels
	n     int   // elements
	batch []int // outer dims (runs: all but the innermost; tiles: all but the two)
	bsrc  []int // their input strides
	bdst  []int // their output strides
	nb    int   // number of batch entries

	run int // > 0: run mode, run length

	rows, cols     int // tile mode: output's innermost dim (input rows) and input's innermost (output rows)
	lds, ldd       int // input stride of rows, output stride of cols
	tilesR, tilesC int

	c        *Chunks
	dst, src []uint32 // operands of the current run
}

// tileSize is the side of a cache tile: 64×64 words is 16 KiB read and
// 16 KiB written. Within a tile the primitive walks down 8-column blocks,
// finishing whole output lines (see transpose_amd64.s); 32 to 128 measure
// alike on 1000×1000 and 1024×1024, 16 and below lose to call overhead.
const tileSize = 64

// NewTranspose32 prepares the permutation of shape by perm.
func NewTranspose32(shape, perm []int, k *RowKernels, par Par) (*Transpose32, error) {
	if len(perm) != len(shape) {
		return nil, fmt.Errorf("asm: transpose: perm %v for rank %d", perm, len(shape))
	}
	if k == nil {
		k = BestRows()
	}
	t := &Transpose32{k: k, n: 1}
	seen := make([]bool, len(shape))
	xs := make([]int, len(shape))
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] < 0 {
			return nil, fmt.Errorf("asm: transpose: negative dim in %v", shape)
		}
		xs[i] = t.n
		t.n *= shape[i]
	}
	// Output dims with their input strides, coalesced.
	var dims, src []int
	for _, p := range perm {
		if p < 0 || p >= len(shape) || seen[p] {
			return nil, fmt.Errorf("asm: transpose: perm %v is not a permutation", perm)
		}
		seen[p] = true
		d, s := shape[p], xs[p]
		switch {
		case d == 1:
		case len(dims) > 0 && src[len(src)-1] == s*d:
			dims[len(dims)-1] *= d
			src[len(src)-1] = s
		default:
			dims, src = append(dims, d), append(src, s)
		}
	}
	dst := make([]int, len(dims))
	for i, st := len(dims)-1, 1; i >= 0; i-- {
		dst[i] = st
		st *= dims[i]
	}
	if t.n == 0 {
		t.c = NewChunks(par, 0, 1, nil)
		return t, nil
	}
	last := len(dims) - 1
	minItems := 1
	if last < 0 || src[last] == 1 {
		t.run = 1
		if last >= 0 {
			t.run = dims[last]
			dims, src, dst = dims[:last], src[:last], dst[:last]
		}
		minItems = max(1, (1<<14)/t.run)
	} else {
		j := 0
		for src[j] != 1 {
			j++
		}
		t.rows, t.lds = dims[last], src[last]
		t.cols, t.ldd = dims[j], dst[j]
		t.tilesR, t.tilesC = (t.rows+tileSize-1)/tileSize, (t.cols+tileSize-1)/tileSize
		keep := func(i int) bool { return i != j && i != last }
		dims, src, dst = filter(dims, keep), filter(src, keep), filter(dst, keep)
		minItems = max(1, (1<<14)/(tileSize*tileSize))
	}
	t.batch, t.bsrc, t.bdst = dims, src, dst
	t.nb = 1
	for _, d := range dims {
		t.nb *= d
	}
	items := t.nb
	if t.run == 0 {
		items *= t.tilesR * t.tilesC
	}
	t.c = NewChunks(par, items, minItems, t.work)
	return t, nil
}

func filter(s []int, keep func(i int) bool) []int {
	var out []int
	for i, v := range s {
		if keep(i) {
			out = append(out, v)
		}
	}
	return out
}

// Len is the number of elements of the input (and output).
func (t *Transpose32) Len() int { return t.n }

// Run writes the permutation of src into dst; both hold Len words and
// must not overlap.
func (t *Transpose32) Run(dst, src []uint32) error {
	if len(dst) != t.n || len(src) != t.n {
		return fmt.Errorf("asm: transpose: %d and %d words, want %d", len(dst), len(src), t.n)
	}
	if t.n > 0 {
		d, s := uintptr(unsafe.Pointer(&dst[0])), uintptr(unsafe.Pointer(&src[0]))
		if d < s+uintptr(4*t.n) && s < d+uintptr(4*t.n) {
			return errors.New("asm: transpose: dst overlaps src")
		}
	}
	t.dst, t.src = dst, src
	t.c.Do()
	t.dst, t.src = nil, nil
	return nil
}

// offsets returns the input and output offsets of batch entry b.
func (t *Transpose32) offsets(b int) (so, do int) {
	for i := len(t.batch) - 1; i >= 0; i-- {
		q := b / t.batch[i]
		r := b - q*t.batch[i]
		so += r * t.bsrc[i]
		do += r * t.bdst[i]
		b = q
	}
	return so, do
}

func (t *Transpose32) work(_, lo, hi int) {
	if t.run > 0 {
		t.runs(lo, hi)
		return
	}
	per := t.tilesR * t.tilesC
	for it := lo; it < hi; it++ {
		b, tile := it/per, it%per
		so, do := t.offsets(b)
		r0, c0 := tile/t.tilesC*tileSize, tile%t.tilesC*tileSize
		t.tile(so, do, r0, min(r0+tileSize, t.rows), c0, min(c0+tileSize, t.cols))
	}
}

// runs copies runs [lo, hi), stepping the batch index like an odometer
// (only the first run's offsets need divisions).
func (t *Transpose32) runs(lo, hi int) {
	so, do := t.offsets(lo)
	dims, src := t.batch, t.bsrc
	var idx [8]int // the batch index of run lo; ranks past 8 use offsets()
	if len(dims) > len(idx) {
		for b := lo; b < hi; b++ {
			so, do = t.offsets(b)
			copy(t.dst[do:do+t.run], t.src[so:so+t.run])
		}
		return
	}
	for i, b := len(dims)-1, lo; i >= 0; i-- {
		idx[i] = b % dims[i]
		b /= dims[i]
	}
	for b := lo; b < hi; b++ {
		copy(t.dst[do:do+t.run], t.src[so:so+t.run])
		// Output runs are consecutive, so the output offset just grows.
		do += t.run
		for i := len(dims) - 1; i >= 0; i-- {
			so += src[i]
			if idx[i]++; idx[i] < dims[i] {
				break
			}
			so -= src[i] * dims[i]
			idx[i] = 0
		}
	}
}

// tile moves input rows [r0, r1) × columns [c0, c1) of one batch entry:
// element (r, c) is src[so + r·lds + c] and goes to dst[do + c·ldd + r].
func (t *Transpose32) tile(so, do, r0, r1, c0, c1 int) {
	src, dst, lds, ldd := t.src, t.dst, t.lds, t.ldd
	r8, c8 := (r1-r0)&^7, (c1-c0)&^7
	if r8 > 0 && c8 > 0 {
		s, d := so+r0*lds+c0, do+c0*ldd+r0
		// The last words the primitive touches: checked here, in Go.
		_ = src[s+(r8-1)*lds+c8-1]
		_ = dst[d+(c8-1)*ldd+r8-1]
		t.k.transpose8(&dst[d], ldd, &src[s], lds, r8, c8)
	}
	for r := r0; r < r1; r++ {
		cs := c0 + c8
		if r >= r0+r8 {
			cs = c0
		}
		row := src[so+r*lds+cs : so+r*lds+c1]
		for i, v := range row {
			dst[do+(cs+i)*ldd+r] = v
		}
	}
}
