package asm

import (
	"fmt"
	"math"
	"unsafe"
)

// Taps are the two taps per output of one axis of a linear resize whose
// source positions follow no pattern Lerp2 covers (align_corners,
// factors other than 2, downsampling): output o reads src[I0[o]] and
// src[I1[o]] with weights W0[o] and W1[o]. NewTaps checks the indices
// once, when a plan is made, so LerpTaps can read without checking them
// per run, and lays them out for the vector kernel.
//
// That kernel does not gather (VGATHERDPS measured slower than the
// scalar loop on Zen 5): where the taps of each block of 16 outputs lie
// within 32 consecutive sources (any upsampling, downsampling to half),
// it loads those 32 (masked past the source's end) and picks every
// output's two taps with a two-register permute, from indices relative
// to the block's first source, computed here once.
type Taps struct {
	i0, i1 []int32
	w0, w1 []float32
	srcLen int
	// Per block of 16 outputs, when every block's taps span at most 32
	// sources (else nil): its first source, the load masks (bit j of
	// the low half: source base+j exists; high half: base+16+j), and
	// each output's taps relative to base.
	base   []int32
	mask   []uint32
	r0, r1 []int32
	// narrow: every block's taps span at most 16 sources (upsampling),
	// so one vector of sources holds them all.
	narrow bool
	// full (narrow only): the leading blocks whose sixteen sources all
	// exist (every block but those at the source's end).
	full int
	// win (narrow only) is the window layout of blocks of 16 outputs,
	// for kernels that blend each aligned vector of 16 sources once per
	// row and keep the last two; win8 the same for blocks of 8 outputs
	// and vectors of 8, where every block's taps fit (see windows).
	win, win8 []uint32
}

// winRec is the length of a block's record in Taps.win, in words:
// four vectors of 16.
const winRec = 4 * tapsBlock

// tapsBlock is the number of outputs of a permute block.
const tapsBlock = 16

// window lays out the taps for the permute kernel (see Taps), if every
// full block's taps span at most 32 sources.
func (t *Taps) window() {
	blocks := len(t.i0) / tapsBlock
	base, mask := make([]int32, blocks), make([]uint32, blocks)
	r0, r1 := make([]int32, blocks*tapsBlock), make([]int32, blocks*tapsBlock)
	for b := range blocks {
		lo, hi := t.i0[b*tapsBlock], t.i0[b*tapsBlock]
		for o := b * tapsBlock; o < (b+1)*tapsBlock; o++ {
			lo, hi = min(lo, t.i0[o], t.i1[o]), max(hi, t.i0[o], t.i1[o])
		}
		if hi-lo >= 2*tapsBlock {
			return
		}
		base[b] = lo
		for j := range 2 * tapsBlock {
			if int(lo)+j < t.srcLen {
				mask[b] |= 1 << j
			}
		}
		for o := b * tapsBlock; o < (b+1)*tapsBlock; o++ {
			r0[o], r1[o] = t.i0[o]-lo, t.i1[o]-lo
		}
	}
	t.base, t.mask, t.r0, t.r1 = base, mask, r0, r1
	t.narrow = true
	for o := range blocks * tapsBlock {
		t.narrow = t.narrow && r0[o] < tapsBlock && r1[o] < tapsBlock
	}
	for t.narrow && t.full < blocks && mask[t.full]&(1<<tapsBlock-1) == 1<<tapsBlock-1 {
		t.full++
	}
	if t.narrow { // a block spans under 16 sources from base: within base&^15 + 32
		t.win, t.win8 = t.windows(tapsBlock), t.windows(8)
	}
}

// windows returns the window layout of blocks of width outputs (a power
// of two), or nil if some block's taps do not lie in [c, c+2·width), c
// its least tap rounded down to a multiple of width: block b's record,
// 4·width words from 4·width·b (64-byte aligned), holds each output's
// two taps relative to c (first | second<<16), then the first weights'
// bits, the second weights' bits, then c.
func (t *Taps) windows(width int) []uint32 {
	blocks, rl := len(t.i0)/width, 4*width
	win := alignedU32(blocks * rl)
	for b := range blocks {
		rec, c := win[b*rl:][:rl], int32(math.MaxInt32)
		for o := b * width; o < (b+1)*width; o++ {
			c = min(c, t.i0[o], t.i1[o])
		}
		c &^= int32(width - 1)
		for j := range width {
			o := b*width + j
			r0, r1 := t.i0[o]-c, t.i1[o]-c
			if r0 >= int32(2*width) || r1 >= int32(2*width) {
				return nil
			}
			rec[j] = uint32(r0) | uint32(r1)<<16
			rec[width+j], rec[2*width+j] = math.Float32bits(t.w0[o]), math.Float32bits(t.w1[o])
		}
		rec[3*width] = uint32(c)
	}
	return win
}

// alignedU32 returns n zeroed words starting at a 64-byte boundary (the
// heap does not move), so no vector load of a record splits a cache line.
func alignedU32(n int) []uint32 {
	s := make([]uint32, n+15)
	off := int(-uintptr(unsafe.Pointer(&s[0])) % 64 / 4)
	return s[off : off+n : off+n]
}

// NewTaps returns the taps of outputs o < len(i0), reading a source of
// at least srcLen elements. The four slices have one length, and every
// index lies in [0, srcLen). The slices are kept, not copied: they must
// not change afterwards.
func NewTaps(i0, i1 []int32, w0, w1 []float32, srcLen int) (*Taps, error) {
	n := len(i0)
	if len(i1) != n || len(w0) != n || len(w1) != n {
		return nil, fmt.Errorf("asm: taps: lengths %d, %d, %d, %d differ", n, len(i1), len(w0), len(w1))
	}
	for o := range n {
		if i0[o] < 0 || int(i0[o]) >= srcLen || i1[o] < 0 || int(i1[o]) >= srcLen {
			return nil, fmt.Errorf("asm: taps: output %d reads %d and %d of %d", o, i0[o], i1[o], srcLen)
		}
	}
	t := &Taps{i0: i0, i1: i1, w0: w0, w1: w1, srcLen: srcLen}
	t.window()
	return t, nil
}

// Len is the number of outputs.
func (t *Taps) Len() int { return len(t.i0) }

// LerpTaps sets dst[o] = w0[o]·src[i0[o]] + w1[o]·src[i1[o]] for every
// output of t, each product rounded to float32 and then summed (no fused
// multiply-add), so every variant gives the twin's bits, NaN payloads
// aside: the horizontal pass of a linear resize.
// dst has t.Len() elements and does not overlap src, which has at least
// the length t was made for.
func (k *RowKernels) LerpTaps(dst, src []float32, t *Taps) {
	sameLen("LerpTaps", len(dst), t.Len())
	if len(src) < t.srcLen {
		panic(fmt.Sprintf("asm: LerpTaps: source of %d elements, taps read %d", len(src), t.srcLen))
	}
	if len(dst) == 0 {
		return
	}
	if overlap32(dst, src) {
		panic("asm: LerpTaps: dst overlaps src")
	}
	done := 0
	if k.lerpTaps != nil && t.base != nil && len(t.base) > 0 {
		k.lerpTaps(&dst[0], &src[0], &t.base[0], &t.mask[0], &t.r0[0], &t.r1[0], &t.w0[0], &t.w1[0], len(t.base))
		done = len(t.base) * tapsBlock
	}
	if n := len(dst) - done; n > 0 {
		lerpTapsGo(&dst[done], &src[0], &t.i0[done], &t.i1[done], &t.w0[done], &t.w1[done], n)
	}
}

// LerpTapsRows is LerpTaps of each of the rows source rows of src (rows
// of t's source length, back to back) into the rows of dst (rows of
// t.Len(), back to back): the horizontal pass of a band of a linear
// resize in one call. Where the taps are narrow (every block within 16
// sources: upsampling), the vector kernel runs blocks outer and rows
// inner, each block's tables loaded once for the band; the bits are
// LerpTaps's.
func (k *RowKernels) LerpTapsRows(dst, src []float32, t *Taps, rows int) {
	n, w := t.Len(), t.srcLen
	sameLen("LerpTapsRows", len(dst), rows*n)
	if len(src) < rows*w {
		panic(fmt.Sprintf("asm: LerpTapsRows: source of %d elements for %d rows of %d", len(src), rows, w))
	}
	if rows == 0 || n == 0 {
		return
	}
	if overlap32(dst, src[:rows*w]) {
		panic("asm: LerpTapsRows: dst overlaps src")
	}
	if k.lerpTapsRows == nil || !t.narrow || len(t.base) == 0 {
		for r := range rows {
			k.LerpTaps(dst[r*n:(r+1)*n], src[r*w:(r+1)*w], t)
		}
		return
	}
	k.lerpTapsRows(&dst[0], &src[0], w, n, rows, &t.base[0], &t.mask[0], &t.r0[0], &t.r1[0], &t.w0[0], &t.w1[0], len(t.base), t.full/4)
	if done := len(t.base) * tapsBlock; done < n {
		for r := range rows {
			lerpTapsGo(&dst[r*n+done], &src[r*w], &t.i0[done], &t.i1[done], &t.w0[done], &t.w1[done], n-done)
		}
	}
}

// lerpTapsRowsFunc is the lerpTapsRows primitive: the whole blocks of
// narrow taps, of rows rows, the first groups·4 blocks with all sixteen
// sources present (Taps.full).
type lerpTapsRowsFunc func(y, x *float32, w, ow, rows int, base *int32, mask *uint32, r0, r1 *int32, w0, w1 *float32, blocks, groups int)

// lerpTapsFunc is the permute primitive: blocks of 16 outputs laid out
// by Taps.window.
type lerpTapsFunc func(y, x *float32, base *int32, mask *uint32, r0, r1 *int32, w0, w1 *float32, blocks int)

// lerpTapsGo is the twin of the lerpTaps primitive: y[o] =
// w0[o]·x[i0[o]] + w1[o]·x[i1[o]] for o < n.
func lerpTapsGo(y, x *float32, i0, i1 *int32, w0, w1 *float32, n int) {
	ys, a, b, u, v := f32s(y, n), i32s(i0, n), i32s(i1, n), f32s(w0, n), f32s(w1, n)
	for o := range ys {
		p, q := addF32(x, int(a[o])), addF32(x, int(b[o]))
		// The conversions keep targets that fuse (arm64) from fusing,
		// so every platform rounds as the vector code does.
		ys[o] = float32(u[o]**p) + float32(v[o]**q)
	}
}

// i32s views n int32s at p (nil for n == 0).
func i32s(p *int32, n int) []int32 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice(p, n)
}

// addI32 is &p[i].
func addI32(p *int32, i int) *int32 { return (*int32)(unsafe.Add(unsafe.Pointer(p), 4*i)) }

// BlendTaps writes a band of output rows of a linear resize vertical
// pass first: with x holding source rows of t's source length w, output
// row r (dst[r·n : (r+1)·n], n = t.Len()) is LerpTaps of the row v =
// wy0[r]·(row i0[r] of x) + wy1[r]·(row i1[r] of x). Every product is
// rounded to float32 and then summed, in that order (v as Blend computes
// it, then LerpTaps's steps), so every variant gives the twin's bits,
// NaN payloads aside. No row of v is stored: the vector kernels blend
// sources in registers, those of each block of outputs or, for narrow
// taps (upsampling), each aligned vector of sources once per row, kept
// while the blocks that read it run (Taps.win). Rows are counted by
// len(i0); i1, wy0 and wy1 have its length, dst has rows·n elements and
// does not overlap x, and every index names a row of x.
func (k *RowKernels) BlendTaps(dst, x []float32, t *Taps, i0, i1 []int32, wy0, wy1 []float32) {
	rows, n, w := len(i0), t.Len(), t.srcLen
	sameLen("BlendTaps", len(i1), rows)
	sameLen("BlendTaps", len(wy0), rows)
	sameLen("BlendTaps", len(wy1), rows)
	sameLen("BlendTaps", len(dst), rows*n)
	if rows == 0 || n == 0 {
		return
	}
	xr := 0
	if w > 0 {
		xr = len(x) / w
	}
	for r := range rows {
		if i0[r] < 0 || int(i0[r]) >= xr || i1[r] < 0 || int(i1[r]) >= xr {
			panic(fmt.Sprintf("asm: BlendTaps: row %d reads rows %d and %d of %d", r, i0[r], i1[r], xr))
		}
	}
	if overlap32(dst, x) {
		panic("asm: BlendTaps: dst overlaps x")
	}
	done := 0
	switch {
	case len(t.win) > 0 && k.blendTapsWin != nil:
		k.blendTapsWin(&dst[0], &x[0], w, n, &i0[0], &i1[0], &wy0[0], &wy1[0], rows, &t.win[0], len(t.win)/winRec)
		done = len(t.win) / winRec * tapsBlock
	case len(t.win8) > 0 && k.blendTapsWin8 != nil:
		k.blendTapsWin8(&dst[0], &x[0], w, n, &i0[0], &i1[0], &wy0[0], &wy1[0], rows, &t.win8[0], len(t.win8)/32)
		done = len(t.win8) / 32 * 8
	case k.blendTaps != nil && len(t.base) > 0:
		k.blendTaps(&dst[0], &x[0], w, n, &i0[0], &i1[0], &wy0[0], &wy1[0], rows,
			&t.base[0], &t.mask[0], &t.r0[0], &t.r1[0], &t.w0[0], &t.w1[0], len(t.base))
		done = len(t.base) * tapsBlock
	}
	if done < n {
		blendTapsGo(dst, x, t, i0, i1, wy0, wy1, done)
	}
}

// BlendTapsVector reports whether BlendTaps runs t's whole blocks of
// outputs in the vector kernel on this variant (else the twin, scalar,
// runs all of them).
func (k *RowKernels) BlendTapsVector(t *Taps) bool {
	return k.blendTaps != nil && len(t.base) > 0 || k.blendTapsWin8 != nil && len(t.win8) > 0
}

// blendTapsFunc is the blendTaps primitive: BlendTaps's whole blocks of
// outputs, laid out by Taps.window.
type blendTapsFunc func(y, x *float32, w, ow int, i0, i1 *int32, wy0, wy1 *float32, rows int,
	base *int32, mask *uint32, r0, r1 *int32, tw0, tw1 *float32, blocks int)

// blendTapsWinFunc is the blendTapsWin primitive: BlendTaps's whole
// blocks of outputs of narrow taps, in the window layout (Taps.win):
// per row, each aligned vector of 16 sources blended once, the last two
// kept, every block's taps picked from them; blendTapsWin8 the same on
// blocks of 8 outputs (Taps.win8).
type blendTapsWinFunc func(y, x *float32, w, ow int, i0, i1 *int32, wy0, wy1 *float32, rows int, win *uint32, blocks int)

// blendTapsWinGo is the twin of the blendTapsWin primitives, step for
// step, on blocks of width outputs (16: blendTapsWin, 8: blendTapsWin8):
// the blend of a vector's sources past the row's end is zero, and no tap
// reads it.
func blendTapsWinGo(width int, y, x *float32, w, ow int, i0, i1 *int32, wy0, wy1 *float32, rows int, win *uint32, blocks int) {
	rl := 4 * width
	n, recs := blocks*width, unsafe.Slice(win, blocks*rl)
	rs0, rs1, as, bs := i32s(i0, rows), i32s(i1, rows), f32s(wy0, rows), f32s(wy1, rows)
	top := 0 // rows of x read
	for r := range rows {
		top = max(top, int(rs0[r])+1, int(rs1[r])+1)
	}
	xs := f32s(x, top*w)
	pair := make([]float32, 2*width) // the blends of vectors at cur and cur+width
	blend := func(s0, s1 []float32, wa, wb float32, c int, d []float32) {
		for l := range d {
			d[l] = 0
			if i := c + l; i < w {
				d[l] = float32(wa*s0[i]) + float32(wb*s1[i])
			}
		}
	}
	for r := range rows {
		s0, s1 := xs[int(rs0[r])*w:][:w], xs[int(rs1[r])*w:][:w]
		ys := f32s(addF32(y, r*ow), n)
		cur := -2 * width
		for b := range blocks {
			rec := recs[b*rl:][:rl]
			c := int(rec[3*width])
			if c != cur && c != cur+width { // neither kept: blend both
				cur = c - 2*width
			}
			for cur < c {
				copy(pair[:width], pair[width:])
				cur += width
				blend(s0, s1, as[r], bs[r], cur+width, pair[width:])
			}
			for j := range width {
				u, v := math.Float32frombits(rec[width+j]), math.Float32frombits(rec[2*width+j])
				ys[b*width+j] = float32(u*pair[rec[j]&0xffff]) + float32(v*pair[rec[j]>>16])
			}
		}
	}
}

// blendTapsGo is the twin of the blendTaps primitive, on outputs o0 ..
// t.Len()-1 of every row.
func blendTapsGo(dst, x []float32, t *Taps, i0, i1 []int32, wy0, wy1 []float32, o0 int) {
	n, w := t.Len(), t.srcLen
	for r := range i0 {
		s0, s1 := x[int(i0[r])*w:][:w], x[int(i1[r])*w:][:w]
		a, b := wy0[r], wy1[r]
		// The conversions keep targets that fuse (arm64) from fusing,
		// so every platform rounds as the vector code does.
		v := func(i int32) float32 { return float32(a*s0[i]) + float32(b*s1[i]) }
		y := dst[r*n : (r+1)*n]
		for o := o0; o < n; o++ {
			y[o] = float32(t.w0[o]*v(t.i0[o])) + float32(t.w1[o]*v(t.i1[o]))
		}
	}
}
