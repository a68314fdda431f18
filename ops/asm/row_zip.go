package asm

import (
	"fmt"
	"unsafe"
)

// Zip2Add sets dst[2i] = a[i] + b and dst[2i+1] = c[i] + b: two rows
// interleaved, plus a constant. It is how a transposed convolution
// whose kernel equals its stride (2, the U-Net decoder's) writes an
// output row from the rows of its two horizontal taps, bias added. a
// and c have one length, dst twice it, and dst overlaps neither.
func (k *RowKernels) Zip2Add(dst, a, c []float32, b float32) {
	sameLen("Zip2Add", len(c), len(a))
	sameLen("Zip2Add", len(dst), 2*len(a))
	if len(a) == 0 {
		return
	}
	if overlap32(dst, a) || overlap32(dst, c) {
		panic("asm: Zip2Add: dst overlaps a source")
	}
	n, done := len(a), 0
	if k.zip2Add != nil && n >= 16 {
		done = n &^ 15
		k.zip2Add(&dst[0], &a[0], &c[0], done, b)
	}
	if done < n {
		zip2AddGo(&dst[2*done], &a[done], &c[done], n-done, b)
	}
}

// zip2AddGo is the twin of the zip2Add primitive: y[2i] = a[i] + b,
// y[2i+1] = c[i] + b for i < n.
func zip2AddGo(y, a, c *float32, n int, b float32) {
	ys, as, cs := f32s(y, 2*n), f32s(a, n), f32s(c, n)
	for i, v := range as {
		d := ys[2*i : 2*i+2]
		d[0], d[1] = v+b, cs[i]+b
	}
}

// ZipSumRows writes rows of two interleaved sums: for r < rows and
// output o < w of row r, with j = o/2,
//
//	dst[r·ldd + o] = b + src[offs[0] + r·lds + j] + src[offs[1] + r·lds + j] + …
//
// over the sources offs[:ne] for even o and offs[ne:] for odd o, added
// in list order from b (every variant gives the twin's bits, NaN
// payloads aside). It is how a transposed convolution at stride 2 along
// its rows writes an output row from its taps' products, once, bias
// included: the even outputs take the taps that land on even columns,
// the odd ones the others, each source a tap's product row shifted to
// the input cell its output reads. At most 16 sources; dst does not
// overlap src, and every source reads inside src.
func (k *RowKernels) ZipSumRows(dst []float32, ldd int, src []float32, offs []int, ne, lds, rows, w int, b float32) {
	if rows < 0 || w < 0 || ne < 0 || ne > len(offs) || len(offs) > 16 || lds < 0 {
		panic(fmt.Sprintf("asm: ZipSumRows: %d rows of %d, %d sources (%d even), source stride %d", rows, w, len(offs), ne, lds))
	}
	if rows == 0 || w == 0 {
		return
	}
	if ldd < w || len(dst) < (rows-1)*ldd+w {
		panic(fmt.Sprintf("asm: ZipSumRows: %d rows of %d in dst of %d (stride %d)", rows, w, len(dst), ldd))
	}
	for i, o := range offs {
		n := w / 2 // the odd outputs' reads
		if i < ne {
			n = (w + 1) / 2
		}
		if o < 0 || n > 0 && o+(rows-1)*lds+n > len(src) {
			panic(fmt.Sprintf("asm: ZipSumRows: source %d at %d reads %d rows of %d (stride %d) past src of %d", i, o, rows, n, lds, len(src)))
		}
	}
	if overlap32(dst, src) {
		panic("asm: ZipSumRows: dst overlaps src")
	}
	var o0 *int
	if len(offs) > 0 {
		o0 = &offs[0]
	}
	switch {
	case k.zipSum != nil:
		k.zipSum(&dst[0], ldd, &src[0], o0, ne, len(offs), lds, rows, w, b)
	case k.zipSum16 != nil && w >= 16:
		done := w &^ 15
		k.zipSum16(&dst[0], ldd, &src[0], o0, ne, len(offs), lds, rows, done, b)
		if done < w { // the rest of each row: the same sources, done/2 on
			var rest [16]int
			for i, o := range offs {
				rest[i] = o + done/2
			}
			zipSumGo(&dst[done], ldd, &src[0], &rest[0], ne, len(offs), lds, rows, w-done, b)
		}
	default:
		zipSumGo(&dst[0], ldd, &src[0], o0, ne, len(offs), lds, rows, w, b)
	}
}

// ZipSumVector reports whether ZipSumRows runs a vector kernel here (else
// its Go twin, which a caller may prefer to avoid).
func (k *RowKernels) ZipSumVector() bool { return k.zipSum != nil || k.zipSum16 != nil }

// zipSumGo is the twin of the zipSum primitive.
func zipSumGo(y *float32, ldd int, x *float32, offs *int, ne, nt, lds, rows, w int, b float32) {
	ys := f32s(y, (rows-1)*ldd+w)
	var os []int
	if nt > 0 {
		os = unsafe.Slice(offs, nt)
	}
	for r := range rows {
		row := ys[r*ldd : r*ldd+w]
		for o := range row {
			lo, hi := 0, ne // the even outputs' sources
			if o%2 == 1 {
				lo, hi = ne, nt
			}
			v := b
			for _, off := range os[lo:hi] {
				v += *(*float32)(unsafe.Add(unsafe.Pointer(x), 4*(off+r*lds+o/2)))
			}
			row[o] = v
		}
	}
}
