package asm

import "testing"

// checkZipSumFuzz runs ZipSumRows (a transposed convolution's output rows
// at stride 2) on the fuzz-chosen row x with fuzz-chosen widths, row
// count, strides, bias and up to sixteen sources split between the even
// and odd outputs, against its definition in float32 steps (b plus the
// sources in list order): every variant promises the twin's bits, and
// writes nothing outside its rows.
func checkZipSumFuzz(t *testing.T, in *fuzzIn, k *RowKernels, x []float32, fail func(string, ...any)) {
	t.Helper()
	w := 1 + in.intn(80)
	rows := 1 + in.intn(4)
	lds := (w+1)/2 + in.intn(3)
	span := (rows-1)*lds + (w+1)/2 // what one source reads
	if len(x) < span {
		return
	}
	nt := in.intn(17)
	ne := in.intn(nt + 1)
	offs := make([]int, nt)
	for i := range offs {
		offs[i] = in.intn(len(x) - span + 1)
	}
	b := in.float(0)
	ldd := w + in.intn(4)
	y := newGuarded((rows-1)*ldd+w, in.intn(8))
	copy(y.Data, in.floats(len(y.Data), 0))
	want := zipSumWant(y.Data, ldd, x, offs, ne, lds, rows, w, b)
	k.ZipSumRows(y.Data, ldd, x, offs, ne, lds, rows, w, b)
	y.check(t, "ZipSumRows")
	if !slicesBitsEq(y.Data, want) {
		fail("ZipSumRows w=%d rows=%d %d sources (%d even) ldd=%d lds=%d: %v, want %v", w, rows, nt, ne, ldd, lds, y.Data, want)
	}
}
