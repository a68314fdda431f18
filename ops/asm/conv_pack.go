package asm

import (
	"sync"
	"unsafe"

	"github.com/kilnml/kiln/ops/cpuid"
)

// Packing input patches straight into the GEMM's B panels: panel row s
// (after the row of ones that meets the bias column) holds, for the
// panel's NR output positions, the input cell each reads through tap
// s = (c, ky, kx). Taps read a zero-padded copy of the input (the input
// itself when no window leaves it), so no position needs a bounds test:
// tap s of output (oy, ox) is xp[oy·SH·wp + ox·SW + koff[s]].

// convPad is the zero-padded input of a run.
type convPad struct {
	copy   bool // the windows leave the input: taps read a padded copy
	hp, wp int  // padded plane
	c      *Chunks
	x, buf []float32 // the input and its padded copy during a run
	// rows, where the variant has it, writes padded rows a plane at a
	// time through masks (conv_pad.go); nil: padRow in Go.
	rows  padRowsKernel
	masks []uint32
}

// convPadFree holds the padded-input buffers not in use. Every
// convolution of a program (they run one after another) takes the same
// one, so it stays in cache, where a buffer per convolution would be
// cold each run; concurrent runs take different ones.
var convPadFree freeList

// freeList holds float32 buffers not in use, shared by every plan of a
// kind: the last one given back is taken first, so it is likely in cache.
type freeList struct {
	sync.Mutex
	bufs [][]float32
}

// take returns a buffer of n floats: a free one when there is one (grown
// if short), else a new one. Its contents are whatever it last held.
func (f *freeList) take(n int) []float32 {
	var b []float32
	f.Lock()
	if k := len(f.bufs); k > 0 {
		b = f.bufs[k-1]
		f.bufs = f.bufs[:k-1]
	}
	f.Unlock()
	if cap(b) < n {
		b = make([]float32, n)
	}
	return b[:n]
}

// give hands a buffer back.
func (f *freeList) give(b []float32) {
	f.Lock()
	f.bufs = append(f.bufs, b)
	f.Unlock()
}

// preparePad sizes the padded input and the tap offsets into it.
func (c *Conv2D) preparePad(par Par) {
	g, p := &c.g, &c.pad
	p.hp = max(g.PT+g.H, (g.OH-1)*g.SH+(g.KH-1)*g.DH+1)
	p.wp = max(g.PL+g.W, (g.OW-1)*g.SW+(g.KW-1)*g.DW+1)
	// The packing path's Winograd runs read past the output's tiles.
	hw, ww := c.winoGemmPad()
	p.hp, p.wp = max(p.hp, hw), max(p.wp, ww)
	p.copy = p.hp != g.H || p.wp != g.W || g.PT != 0 || g.PL != 0
	if !p.copy || g.OH == 0 || g.OW == 0 {
		p.hp, p.wp = g.H, g.W
		p.copy = false
	} else {
		p.c = NewChunks(par, g.N*g.C, max(1, (1<<14)/(p.hp*p.wp)), c.padPlanes)
		if g.Groups == 1 {
			p.c = NewChunks(par, g.N*p.hp, max(1, (1<<14)/(g.C*p.wp)), c.padBands)
		}
		if p.rows = c.taps.padRows; p.rows != nil {
			p.masks = padMasks(g.W, p.wp, g.PL)
		}
	}
	c.koff = make([]int, 0, c.kk)
	for ci := range c.cpg {
		for ky := range g.KH {
			for kx := range g.KW {
				c.koff = append(c.koff, (ci*p.hp+ky*g.DH)*p.wp+kx*g.DW)
			}
		}
	}
}

// padInput returns what taps read: x, or a padded copy of it in a buffer
// taken from convPadFree until releasePad. Unless fill is set the copy
// is left to the run (padPlanes, reading x until releasePad).
func (c *Conv2D) padInput(x []float32, fill bool) []float32 {
	g, p := &c.g, &c.pad
	if !p.copy {
		return x
	}
	size := g.N * g.C * p.hp * p.wp
	p.buf, p.x = convPadFree.take(size), x
	if fill {
		p.c.Do()
	}
	return p.buf
}

// releasePad gives the padded buffer back.
func (c *Conv2D) releasePad() {
	p := &c.pad
	p.x = nil
	if p.buf == nil {
		return
	}
	convPadFree.give(p.buf)
	p.buf = nil
}

// padPlanes writes padded planes [lo, hi), borders included (the buffer
// last held another convolution's input).
func (c *Conv2D) padPlanes(_, lo, hi int) {
	g, p := &c.g, &c.pad
	for plane := lo; plane < hi; plane++ {
		dst := p.buf[plane*p.hp*p.wp:][:p.hp*p.wp]
		src := p.x[plane*c.hw:][:c.hw]
		clear(dst[:g.PT*p.wp])
		c.padRows(dst[g.PT*p.wp:], src, g.H)
		clear(dst[(g.PT+g.H)*p.wp:])
	}
}

// padBands writes padded rows [lo, hi), numbered over (image, padded
// row), of every channel. An ungrouped convolution's workers take its
// tiles (output rows, all channels) in contiguous shares, so a worker
// padding the band of rows its own tiles read then reads it from its
// own cache; split by planes, each tile read every worker's lines, and
// the next run's padding took back the lines the other core had read
// (3×3 stride-2 convolutions from 32 channels at 64² and 64 at 32², two
// threads on the 2-vCPU Zen 5 VM: 152-168 → 121-128 µs and 136-152 →
// 117-129).
func (c *Conv2D) padBands(_, lo, hi int) {
	g, p := &c.g, &c.pad
	for it := lo; it < hi; {
		n, r0 := it/p.hp, it%p.hp
		r1 := min(p.hp, r0+hi-it) // this image's rows of the band
		mid0, mid1 := max(r0, g.PT), min(r1, g.PT+g.H)
		for ch := range g.C {
			plane := n*g.C + ch
			dst := p.buf[plane*p.hp*p.wp:][:p.hp*p.wp]
			if mid0 >= mid1 {
				clear(dst[r0*p.wp : r1*p.wp])
				continue
			}
			clear(dst[r0*p.wp : mid0*p.wp])
			src := p.x[plane*c.hw:][:c.hw]
			c.padRows(dst[mid0*p.wp:], src[(mid0-g.PT)*g.W:], mid1-mid0)
			clear(dst[mid1*p.wp : r1*p.wp])
		}
		it += r1 - r0
	}
}

// padRow writes one padded row: PL zeros, the input row src, zeros to
// the end of dst. Rows of a few elements (a late layer's 2×2 or 4×4
// planes) go element by element: three runtime calls a row cost more
// than the row.
func (c *Conv2D) padRow(dst, src []float32) {
	pl := c.g.PL
	if len(dst) <= 16 {
		for i := range dst {
			dst[i] = 0
		}
		for i, v := range src {
			dst[pl+i] = v
		}
		return
	}
	clear(dst[:pl])
	copy(dst[pl:pl+len(src)], src)
	clear(dst[pl+len(src):])
}

// packPanel packs rows [p0, p0+kc) of the panel of output positions
// [j, j+cols) of one plane (cols <= NR; columns past cols are zero) into
// dst (kc×NR) from the group's padded input channels xg. The row of ones
// (p0 = 0 with a bias) is already there: see convWorker.panel.
func (c *Conv2D) packPanel(dst, xg []float32, j, cols, p0, kc int) {
	g, nr, wp := &c.g, c.v.nr, c.pad.wp
	d := dst[:kc*nr]
	t0 := p0 // first tap
	if c.bias {
		if p0 == 0 {
			d = d[nr:]
		} else {
			t0--
		}
	}
	taps := c.koff[t0 : t0+len(d)/nr]
	n := len(taps)
	if n == 0 {
		return
	}
	oy, ox := j/g.OW, j%g.OW
	if nr != 16 || cols != 16 || ox+cols > g.OW {
		c.packRows(d, xg, j, cols, taps)
		return
	}
	// Sixteen positions of one output row; koff ascends, so the last tap
	// reaches furthest.
	base := oy*g.SH*wp + ox*g.SW
	_ = d[n*16-1]
	_ = xg[base+taps[n-1]+15*g.SW]
	switch g.SW {
	case 1:
		c.taps.s1(&d[0], &xg[base], &taps[0], n)
	case 2:
		c.taps.s2(&d[0], &xg[base], &taps[0], n)
	default:
		for s, off := range taps {
			gather16(d[s*16:s*16+16], xg[base+off:], g.SW)
		}
	}
}

// convTapsKernel packs n panel rows of sixteen positions at a fixed
// stride (1 or 2):
//
//	for s < n, t < 16: dst[16s+t] = src[off[s] + t·stride]
//
// n >= 1; off holds n offsets, each with off[s]+15·stride inside src, and
// dst 16n floats. The caller checks all of it.
type convTapsKernel func(dst, src *float32, off *int, n int)

// convKernels are the packers (and the 2×2 max-pool fold) of one
// feature: those of the GEMM or row variant of that feature go with it.
type convKernels struct {
	feature      cpuid.Variant
	s1, s2       convTapsKernel
	maxPairs     maxPairsKernel
	direct       convDirectKernel // nil: stride-1 convolutions pack too (conv_direct.go)
	rows1, rows2 convRowsKernel   // nil: panels spanning rows pack in Go (packRows)
	phase        convPhaseKernel  // nil: no vector stride-2 phase product (conv_phase.go)
	padRows      padRowsKernel    // nil: padded rows are written in Go (conv_pad.go)
	t4sums       convT4SumsKernel // nil: no 4×4-input transposed convolution (conv_convt4.go)
	t4planes     convT4PlanesKernel
	packTaps     convTPackTapsKernel // nil: weights pack tap by tap in Go (conv_packtaps.go)
}

// rowsKernel is the packer of panels spanning rows at stride sw, or nil.
func (k *convKernels) rowsKernel(sw int) convRowsKernel {
	switch sw {
	case 1:
		return k.rows1
	case 2:
		return k.rows2
	}
	return nil
}

// convKernelsGo are the pure-Go twins (convFamily, variant.go).
var convKernelsGo = &convKernels{feature: cpuid.Generic, s1: convTaps16S1Go, s2: convTaps16S2Go, maxPairs: maxPairsGo}

// convKernelsFor returns the kernels of feature f (the Go twins when
// there are none).
func convKernelsFor(f cpuid.Variant) *convKernels { return convFamily.forFeature(f) }

func convTaps16S1Go(dst, src *float32, off *int, n int) { convTaps16Go(dst, src, off, n, 1) }
func convTaps16S2Go(dst, src *float32, off *int, n int) { convTaps16Go(dst, src, off, n, 2) }

// convTaps16Go is the twin of the assembly packers; indexing through
// unsafe.Add keeps bounds checks (done by the caller) out of the loop.
func convTaps16Go(dst, src *float32, off *int, n, stride int) {
	d, x, o := unsafe.Pointer(dst), unsafe.Pointer(src), unsafe.Pointer(off)
	for s := range n {
		at := *(*int)(unsafe.Add(o, 8*s))
		row := (*[16]float32)(unsafe.Add(d, 64*s))
		for t := range row {
			row[t] = *(*float32)(unsafe.Add(x, 4*(at+t*stride)))
		}
	}
}

// gather16 sets d[t] = x[t·stride] for t < 16.
func gather16(d, x []float32, stride int) {
	_ = x[15*stride]
	dd := (*[16]float32)(d)
	for t := range dd {
		dd[t] = x[t*stride]
	}
}

// packRows is packPanel for positions that span output rows (or any NR
// other than 16): one segment of consecutive positions per output row.
func (c *Conv2D) packRows(d, xg []float32, j, cols int, taps []int) {
	g, nr, wp := &c.g, c.v.nr, c.pad.wp
	type segment struct{ at, n, src int }
	var segs [64]segment // an NR of at most 64 positions
	nseg := 0
	oy, ox := j/g.OW, j%g.OW
	for i := 0; i < cols; oy, ox = oy+1, 0 {
		n := min(g.OW-ox, cols-i)
		segs[nseg] = segment{i, n, oy*g.SH*wp + ox*g.SW}
		nseg++
		i += n
	}
	if k := c.taps.rowsKernel(g.SW); k != nil && nr == 16 {
		var ks convSegs
		reach := 0 // the furthest cell a segment reads past its tap
		for i, sg := range segs[:nseg] {
			ks[i] = makeConvSeg(sg.at, sg.n, sg.src, g.SW)
			reach = max(reach, sg.src+(sg.n-1)*g.SW)
		}
		n := len(taps)
		_ = d[16*n-1]
		_ = xg[taps[n-1]+reach] // koff ascends
		k(&d[0], &xg[0], &taps[0], n, nseg, ks)
		return
	}
	for s, off := range taps {
		row := d[s*nr : (s+1)*nr]
		clear(row[cols:])
		for _, sg := range segs[:nseg] {
			out := row[sg.at : sg.at+sg.n]
			src := xg[sg.src+off:]
			if g.SW == 1 {
				copy(out, src[:sg.n])
				continue
			}
			for t := range out {
				out[t] = src[t*g.SW]
			}
		}
	}
}
