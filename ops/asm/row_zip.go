package asm

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
