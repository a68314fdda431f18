package asm

import "unsafe"

// Padded rows. The packing path and the Winograd runs read a padded
// copy of the input (conv_pack.go: padPlanes; conv_wino_gemm.go:
// padBandRows), written a row at a time: pl zeros, the input row, zeros
// to the padded width. In Go that is three runtime calls a row, which
// for a YOLO-style detector's convolutions (16-32 channels, rows of 40-160
// floats) took 13% of its run; the vector kernels write a whole plane's
// rows in one call, sixteen floats at a time through opmasks.

// padRowsKernel writes rows padded rows (padRowsGo) from the chunk masks
// of padMasks(w, wp, pl). rows >= 1; the caller checks every read and
// write.
type padRowsKernel func(dst, src *float32, rows, w, wp, pl int, masks *uint32, chunks int)

// padMasks returns, per chunk of sixteen floats of a padded row of wp
// floats (the input's w floats at pl), the lanes it loads from the input
// row (low half) and the lanes it stores (high half).
func padMasks(w, wp, pl int) []uint32 {
	var m []uint32
	for d := 0; d < wp; d += 16 {
		lo, hi := max(0, pl-d), min(16, pl+w-d)
		var load uint32
		if hi > lo {
			load = (1<<hi - 1) &^ (1<<lo - 1)
		}
		store := uint32(1)<<min(16, wp-d) - 1
		m = append(m, load|store<<16)
	}
	return m
}

// padRowsGo is the twin of the vector kernels.
func padRowsGo(dst, src *float32, rows, w, wp, pl int, _ *uint32, _ int) {
	d, s := f32s(dst, rows*wp), f32s(src, rows*w)
	for r := range rows {
		row := d[r*wp : (r+1)*wp]
		clear(row[:pl])
		copy(row[pl:pl+w], s[r*w:(r+1)*w])
		clear(row[pl+w:])
	}
}

// padRows writes rows padded rows of c's padded input into dst from the
// input rows in src (the kernel of c's variant where it has one).
func (c *Conv2D) padRows(dst, src []float32, rows int) {
	g, p := &c.g, &c.pad
	if rows <= 0 {
		return
	}
	_, _ = dst[rows*p.wp-1], src[rows*g.W-1]
	if p.rows == nil {
		for r := range rows {
			c.padRow(dst[r*p.wp:][:p.wp], src[r*g.W:][:g.W])
		}
		return
	}
	p.rows(unsafe.SliceData(dst), unsafe.SliceData(src), rows, g.W, p.wp, g.PL, unsafe.SliceData(p.masks), len(p.masks))
}
