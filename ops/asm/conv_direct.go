package asm

import "unsafe"

// The direct variant of the GEMM path, for stride-1 convolutions whose
// output rows are whole sixteen-position panels: the micro-kernel reads
// each tap's sixteen positions straight from the padded input (one
// offset per tap, conv_pack.go's koff), so no B panel is packed. The
// weights are packed in panels of 6 rows, with up to five of 5 rows when
// M/G is not a multiple of 6, so no row runs through the load-bound
// one-row kernel or a zero-padded panel; the bias, kept after the
// group's panels, seeds the accumulators of the first depth block.

// convDirectKernel computes a rows×16 tile of C (rows is 6 or 5):
//
//	for i < rows, j < 16: t[i][j] = bias[i] (0 when bias is nil)
//	                               + sum over s < k of a[s*rows+i] * x[off[s]+j]
//	c[i*ldc+j] = t[i][j], or += t[i][j] with flags&gemmAccumulate
//
// k >= 1; a holds k*rows floats, x reaches every off[s]+15, c reaches
// (rows-1)*ldc+15. The caller checks all of it.
type convDirectKernel func(rows, k int, a, x *float32, off *int, bias, c *float32, ldc int, flags uint)

// convDirectGo is the twin of the assembly kernels; indexing through
// unsafe.Add keeps bounds checks (done by the caller) out of the loop.
func convDirectGo(rows, k int, a, x *float32, off *int, bias, c *float32, ldc int, flags uint) {
	pa, px, po, pc := unsafe.Pointer(a), unsafe.Pointer(x), unsafe.Pointer(off), unsafe.Pointer(c)
	for i := range rows {
		var t [16]float32
		if bias != nil {
			b := *(*float32)(unsafe.Add(unsafe.Pointer(bias), 4*i))
			for j := range t {
				t[j] = b
			}
		}
		for s := range k {
			w := *(*float32)(unsafe.Add(pa, 4*(s*rows+i)))
			row := (*[16]float32)(unsafe.Add(px, 4**(*int)(unsafe.Add(po, 8*s))))
			for j := range t {
				t[j] += w * row[j]
			}
		}
		out := (*[16]float32)(unsafe.Add(pc, 4*i*ldc))
		for j := range out {
			if flags&gemmAccumulate != 0 {
				out[j] += t[j]
			} else {
				out[j] = t[j]
			}
		}
	}
}

// directPanels returns the rows of each weights panel of the direct
// path for m rows per group: sixes, then as many fives (at most five) as
// make up the rest; nil when m has no such split (m < 25 at worst). Five
// rows keep ten accumulators in flight, enough to hide the FMA latency,
// where fewer rows would wait on it.
func directPanels(m int) []int {
	fives := (6 - m%6) % 6
	if m < 5*fives {
		return nil
	}
	p := make([]int, 0, (m+5)/6)
	for range (m - 5*fives) / 6 {
		p = append(p, 6)
	}
	for range fives {
		p = append(p, 5)
	}
	return p
}

// convDirectOn enables the direct path (a variable for
// BenchmarkConvDirect, which compares it with packing).
var convDirectOn = true

// useDirect reports whether the plan takes the direct path: the feature
// has a direct kernel, every panel is sixteen positions of one output
// row at stride 1, and the rows per group split into panels of 6 and 5.
func (c *Conv2D) useDirect() bool {
	g := &c.g
	return convDirectOn && c.taps.direct != nil && c.v.nr == 16 && g.SW == 1 && g.OW%16 == 0 &&
		directPanels(c.mpg) != nil && c.kk > 0
}

// packDirect packs w of every group as directPanels' panels (panel rows
// interleaved per step, as the kernel reads them), then its bias.
func (c *Conv2D) packDirect(pw *ConvWeights, w, b []float32) {
	size := c.g.Groups * c.astride
	if cap(pw.data) < size {
		pw.data = make([]float32, size)
	}
	pw.data = pw.data[:size]
	for grp := range c.g.Groups {
		ga := pw.data[grp*c.astride:][:c.astride]
		m0 := 0
		for _, rows := range c.dpan {
			pan := ga[m0*c.kk:][:rows*c.kk]
			for r := range rows {
				for s, x := range w[(grp*c.mpg+m0+r)*c.kk:][:c.kk] {
					pan[s*rows+r] = x
				}
			}
			m0 += rows
		}
		if c.bias {
			copy(ga[c.mpg*c.kk:], b[grp*c.mpg:][:c.mpg])
		}
	}
}

// directProduct computes depth block [pc, pc+kc) of the tile of output
// columns [j0, j0+cols) and weight panels [p0, p1) of the group whose
// first output is y[yoff], its rows ldy apart (cols a multiple of
// sixteen; taps read xg): the first block overwrites y
// (from the bias), the others add to it. Weight panels are the outer
// loop, so the tile's output is written one panel of channels (five or
// six planes) at a time, as a few sequential streams the prefetchers
// follow, where sixteen columns of every channel in turn wrote all M/G
// planes at once (the CNN's stem, 32 planes: 1.8 → 1.3 ms with the
// caches cold); the input columns the panels share stay in L1 or L2.
func (c *Conv2D) directProduct(y []float32, ldy int, a, xg []float32, pc, kc, yoff, j0, cols, p0, p1 int) {
	g := &c.g
	off := c.koff[pc : pc+kc]
	flags := gemmAccumulate
	var bias []float32
	if pc == 0 {
		flags = 0
		if c.bias {
			bias = a[c.mpg*c.kk:][:c.mpg]
		}
	}
	m0, _ := c.panelRows(p0, p1)
	for _, rows := range c.dpan[p0:p1] {
		ap := a[m0*c.kk+pc*rows:][:kc*rows]
		var pb *float32
		if bias != nil {
			pb = &bias[m0]
		}
		for jp := j0; jp < j0+cols; jp += 16 {
			base := jp/g.OW*g.SH*c.pad.wp + jp%g.OW
			_ = xg[base+off[kc-1]+15] // koff ascends: the last tap reaches furthest
			at := yoff + m0*ldy + jp - j0
			_ = y[at+(rows-1)*ldy+15]
			c.taps.direct(rows, kc, &ap[0], &xg[base], &off[0], pb, &y[at], ldy, flags)
		}
		m0 += rows
	}
}
