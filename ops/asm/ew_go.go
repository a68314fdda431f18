package asm

import "unsafe"

// The Go twins of the elementwise primitives: the reference loops the
// assembly must reproduce bit for bit, and the "go" variant (purego
// builds, architectures without assembly yet). Each reads x[i] (and y[i])
// before writing dst[i], so dst may be an input.

var ewUnaryGo = [ewNumUnary]ewUnaryFunc{
	EwExp: ewMap(ewExp), EwLog: ewMap(ewLog), EwTanh: ewMap(ewTanh),
	EwSigmoid: ewMap(ewSigmoid), EwErf: ewMap(ewErf), EwGelu: ewMap(ewGelu),
	EwGeluTanh: ewMap(ewGeluTanh), EwSilu: ewMap(ewSilu),
	EwRelu: ewReluGo, EwNeg: ewNegGo, EwAbs: ewAbsGo,
}

// ewMap applies a scalar function.
func ewMap(f func(float32) float32) ewUnaryFunc {
	return func(dst, x *float32, n int, _ bool) {
		d, s := unsafe.Slice(dst, n), unsafe.Slice(x, n)
		for i, v := range s {
			d[i] = f(v)
		}
	}
}

// ewReluGo is x < 0 ? 0 : x: NaN and -0 pass through.
func ewReluGo(dst, x *float32, n int, _ bool) {
	d, s := unsafe.Slice(dst, n), unsafe.Slice(x, n)
	for i, v := range s {
		if v < 0 {
			v = 0
		}
		d[i] = v
	}
}

// ewNegGo flips the sign bit (NaNs included).
func ewNegGo(dst, x *float32, n int, _ bool) {
	d, s := unsafe.Slice(dst, n), unsafe.Slice(x, n)
	for i, v := range s {
		d[i] = -v
	}
}

// ewAbsGo clears the sign bit (NaNs included).
func ewAbsGo(dst, x *float32, n int, _ bool) {
	d, s := unsafe.Slice((*uint32)(unsafe.Pointer(dst)), n), unsafe.Slice((*uint32)(unsafe.Pointer(x)), n)
	for i, v := range s {
		d[i] = v &^ ewSignBit
	}
}

// The binary twins, one loop per operation and form so that the
// operation is inlined.
var (
	ewVVGo = [ewNumBinary]ewVVFunc{EwAdd: ewAddVVGo, EwSub: ewSubVVGo, EwMul: ewMulVVGo, EwDiv: ewDivVVGo, EwMax: ewMaxVVGo, EwMin: ewMinVVGo}
	ewVSGo = [ewNumBinary]ewVSFunc{EwAdd: ewAddVSGo, EwSub: ewSubVSGo, EwMul: ewMulVSGo, EwDiv: ewDivVSGo, EwMax: ewMaxVSGo, EwMin: ewMinVSGo}
	ewSVGo = [ewNumBinary]ewSVFunc{EwAdd: ewAddSVGo, EwSub: ewSubSVGo, EwMul: ewMulSVGo, EwDiv: ewDivSVGo, EwMax: ewMaxSVGo, EwMin: ewMinSVGo}
)

// ewClampGo is the twin of the clamp kernels.
func ewClampGo(dst, x *float32, lo, hi float32, n int, _ bool) {
	d, s := unsafe.Slice(dst, n), unsafe.Slice(x, n)
	for i, v := range s {
		d[i] = min(max(v, lo), hi)
	}
}

func ewAddVVGo(dst, x, y *float32, n int, _ bool) {
	d, xs, ys := unsafe.Slice(dst, n), unsafe.Slice(x, n), unsafe.Slice(y, n)
	for i := range d {
		a, b := xs[i], ys[i]
		d[i] = a + b
	}
}

func ewAddVSGo(dst, x *float32, b float32, n int, _ bool) {
	d, xs := unsafe.Slice(dst, n), unsafe.Slice(x, n)
	for i, a := range xs {
		d[i] = a + b
	}
}

func ewAddSVGo(dst *float32, a float32, y *float32, n int, _ bool) {
	d, ys := unsafe.Slice(dst, n), unsafe.Slice(y, n)
	for i, b := range ys {
		d[i] = a + b
	}
}

func ewSubVVGo(dst, x, y *float32, n int, _ bool) {
	d, xs, ys := unsafe.Slice(dst, n), unsafe.Slice(x, n), unsafe.Slice(y, n)
	for i := range d {
		a, b := xs[i], ys[i]
		d[i] = a - b
	}
}

func ewSubVSGo(dst, x *float32, b float32, n int, _ bool) {
	d, xs := unsafe.Slice(dst, n), unsafe.Slice(x, n)
	for i, a := range xs {
		d[i] = a - b
	}
}

func ewSubSVGo(dst *float32, a float32, y *float32, n int, _ bool) {
	d, ys := unsafe.Slice(dst, n), unsafe.Slice(y, n)
	for i, b := range ys {
		d[i] = a - b
	}
}

func ewMulVVGo(dst, x, y *float32, n int, _ bool) {
	d, xs, ys := unsafe.Slice(dst, n), unsafe.Slice(x, n), unsafe.Slice(y, n)
	for i := range d {
		a, b := xs[i], ys[i]
		d[i] = a * b
	}
}

func ewMulVSGo(dst, x *float32, b float32, n int, _ bool) {
	d, xs := unsafe.Slice(dst, n), unsafe.Slice(x, n)
	for i, a := range xs {
		d[i] = a * b
	}
}

func ewMulSVGo(dst *float32, a float32, y *float32, n int, _ bool) {
	d, ys := unsafe.Slice(dst, n), unsafe.Slice(y, n)
	for i, b := range ys {
		d[i] = a * b
	}
}

func ewDivVVGo(dst, x, y *float32, n int, _ bool) {
	d, xs, ys := unsafe.Slice(dst, n), unsafe.Slice(x, n), unsafe.Slice(y, n)
	for i := range d {
		a, b := xs[i], ys[i]
		d[i] = a / b
	}
}

func ewDivVSGo(dst, x *float32, b float32, n int, _ bool) {
	d, xs := unsafe.Slice(dst, n), unsafe.Slice(x, n)
	for i, a := range xs {
		d[i] = a / b
	}
}

func ewDivSVGo(dst *float32, a float32, y *float32, n int, _ bool) {
	d, ys := unsafe.Slice(dst, n), unsafe.Slice(y, n)
	for i, b := range ys {
		d[i] = a / b
	}
}

func ewMaxVVGo(dst, x, y *float32, n int, _ bool) {
	d, xs, ys := unsafe.Slice(dst, n), unsafe.Slice(x, n), unsafe.Slice(y, n)
	for i := range d {
		a, b := xs[i], ys[i]
		d[i] = max(a, b)
	}
}

func ewMaxVSGo(dst, x *float32, b float32, n int, _ bool) {
	d, xs := unsafe.Slice(dst, n), unsafe.Slice(x, n)
	for i, a := range xs {
		d[i] = max(a, b)
	}
}

func ewMaxSVGo(dst *float32, a float32, y *float32, n int, _ bool) {
	d, ys := unsafe.Slice(dst, n), unsafe.Slice(y, n)
	for i, b := range ys {
		d[i] = max(a, b)
	}
}

func ewMinVVGo(dst, x, y *float32, n int, _ bool) {
	d, xs, ys := unsafe.Slice(dst, n), unsafe.Slice(x, n), unsafe.Slice(y, n)
	for i := range d {
		a, b := xs[i], ys[i]
		d[i] = min(a, b)
	}
}

func ewMinVSGo(dst, x *float32, b float32, n int, _ bool) {
	d, xs := unsafe.Slice(dst, n), unsafe.Slice(x, n)
	for i, a := range xs {
		d[i] = min(a, b)
	}
}

func ewMinSVGo(dst *float32, a float32, y *float32, n int, _ bool) {
	d, ys := unsafe.Slice(dst, n), unsafe.Slice(y, n)
	for i, b := range ys {
		d[i] = min(a, b)
	}
}
