package asm

import "testing"

// checkResizeFuzz runs the resize and transposed-convolution row kernels
// (BlendRows, BlendLerp2, BlendTaps, LerpTapsRows, AddStride2) on the fuzz-chosen row
// x, read as rows of a fuzz-chosen width, with fuzz-chosen row picks,
// weights and taps, against their definitions in exact float32 steps
// (lerpRef, a plain sum): every variant promises the twin's bits.
func checkResizeFuzz(t *testing.T, in *fuzzIn, k *RowKernels, x []float32, fail func(string, ...any)) {
	t.Helper()
	w := 2 + in.intn(40)
	xr := len(x) / w
	if xr == 0 {
		return
	}
	rows := 1 + in.intn(4)
	i0, i1 := make([]int32, rows), make([]int32, rows)
	wy0, wy1 := in.floats(rows, 0), in.floats(rows, 0)
	for r := range rows {
		i0[r], i1[r] = int32(in.intn(xr)), int32(in.intn(xr))
	}
	row := func(i int32) []float32 { return x[int(i)*w:][:w] }
	v := func(r int, j int32) float32 { return lerpRef(wy0[r], row(i0[r])[j], wy1[r], row(i1[r])[j]) }

	y := newGuarded(rows*w, in.intn(8))
	k.BlendRows(y.Data, x[:xr*w], w, 0, i0, i1, wy0, wy1)
	y.check(t, "BlendRows")
	for r := range rows {
		for j := range w {
			if got, want := y.Data[r*w+j], v(r, int32(j)); !bitsEq(got, want) {
				fail("BlendRows w=%d: row %d [%d] = %v, want %v", w, r, j, got, want)
			}
		}
	}

	a, b := in.float(0), in.float(0)
	ends := &Lerp2Ends{W: [4]float32(in.floats(4, 0))}
	for e := range ends.I {
		ends.I[e] = int32(in.intn(w))
	}
	y = newGuarded(rows*2*w, in.intn(8))
	k.BlendLerp2(y.Data, x[:xr*w], w, i0, i1, wy0, wy1, a, b, ends)
	y.check(t, "BlendLerp2")
	for r := range rows {
		got := y.Data[r*2*w : (r+1)*2*w]
		want := make([]float32, 2*w)
		want[0] = lerpRef(ends.W[0], v(r, ends.I[0]), ends.W[1], v(r, ends.I[1]))
		want[2*w-1] = lerpRef(ends.W[2], v(r, ends.I[2]), ends.W[3], v(r, ends.I[3]))
		for j := range int32(w - 1) {
			want[2*j+1], want[2*j+2] = lerpRef(a, v(r, j), b, v(r, j+1)), lerpRef(b, v(r, j), a, v(r, j+1))
		}
		if !slicesBitsEq(got, want) {
			fail("BlendLerp2 w=%d a=%v b=%v: row %d = %v, want %v", w, a, b, r, got, want)
		}
	}

	n := in.intn(70)
	ti0, ti1 := make([]int32, n), make([]int32, n)
	// Taps near o·w/n, as resizes' are, so blocks take the permute
	// layout; or align_corners taps, which upsampling lays out in windows.
	align := in.intn(2) == 0
	for o := range n {
		c := o * w / max(n, 1)
		ti0[o] = int32(min(max(c+in.intn(9)-4, 0), w-1))
		ti1[o] = int32(min(max(c+in.intn(9)-4, 0), w-1))
		if align {
			s := o * (w - 1) / max(n-1, 1)
			ti0[o], ti1[o] = int32(s), int32(min(s+1, w-1))
		}
	}
	tw0, tw1 := in.floats(n, 0), in.floats(n, 0)
	tp, err := NewTaps(ti0, ti1, tw0, tw1, w)
	if err != nil {
		fail("NewTaps: %v", err)
	}
	y = newGuarded(rows*n, in.intn(8))
	k.BlendTaps(y.Data, x[:xr*w], tp, i0, i1, wy0, wy1)
	y.check(t, "BlendTaps")
	for r := range rows {
		for o := range n {
			want := lerpRef(tw0[o], v(r, ti0[o]), tw1[o], v(r, ti1[o]))
			if got := y.Data[r*n+o]; !bitsEq(got, want) {
				fail("BlendTaps w=%d n=%d: row %d [%d] = %v, want %v", w, n, r, o, got, want)
			}
		}
	}
	for _, lay := range []struct { // the window primitives' twin on its own
		width int
		win   []uint32
	}{{tapsBlock, tp.win}, {8, tp.win8}} {
		blocks := len(lay.win) / (4 * lay.width)
		if blocks == 0 {
			continue
		}
		yw := make([]float32, rows*n)
		blendTapsWinGo(lay.width, &yw[0], &x[0], w, n, &i0[0], &i1[0], &wy0[0], &wy1[0], rows, &lay.win[0], blocks)
		for r := range rows {
			for o := range blocks * lay.width {
				if got, want := yw[r*n+o], lerpRef(tw0[o], v(r, ti0[o]), tw1[o], v(r, ti1[o])); !bitsEq(got, want) {
					fail("blendTapsWinGo(%d) w=%d n=%d: row %d [%d] = %v, want %v", lay.width, w, n, r, o, got, want)
				}
			}
		}
	}

	y = newGuarded(xr*n, in.intn(8))
	k.LerpTapsRows(y.Data, x[:xr*w], tp, xr)
	y.check(t, "LerpTapsRows")
	for r := range xr {
		for o := range n {
			want := lerpRef(tw0[o], row(int32(r))[ti0[o]], tw1[o], row(int32(r))[ti1[o]])
			if got := y.Data[r*n+o]; !bitsEq(got, want) {
				fail("LerpTapsRows w=%d n=%d: row %d [%d] = %v, want %v", w, n, r, o, got, want)
			}
		}
	}

	ldd := 2*w - 1 + in.intn(4)
	y = newGuarded((xr-1)*ldd+2*w-1, in.intn(8))
	copy(y.Data, in.floats(len(y.Data), 0))
	want := append([]float32(nil), y.Data...)
	for r := range xr {
		for j := range w {
			want[r*ldd+2*j] += x[r*w+j]
		}
	}
	k.AddStride2(y.Data, ldd, x, w, xr, w)
	y.check(t, "AddStride2")
	if !slicesBitsEq(y.Data, want) {
		fail("AddStride2 w=%d ldd=%d: %v, want %v", w, ldd, y.Data, want)
	}
}
