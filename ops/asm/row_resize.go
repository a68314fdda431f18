package asm

import "unsafe"

// Row kernels of upsampling (Resize, Upsample): repeating each value s
// times (nearest with an integer scale) and the horizontal pass of a 2×
// linear resize, where every output pair lies between two neighbouring
// inputs with the same two weights. Both are pure data movement plus a
// few multiplies, so the vector versions run at memory speed where the
// scalar loops spent their time on index arithmetic.

// Repeat sets dst[i·s+j] = src[i] for j < s: nearest upsampling of a
// row by the integer factor s >= 1. dst has s·len(src) elements and does
// not overlap src.
func (k *RowKernels) Repeat(dst, src []float32, s int) {
	if s < 1 {
		panic("asm: Repeat: factor below 1")
	}
	sameLen("Repeat", len(dst), s*len(src))
	if len(src) == 0 {
		return
	}
	if overlap32(dst, src) {
		panic("asm: Repeat: dst overlaps src")
	}
	if s == 1 {
		copy(dst, src)
		return
	}
	f := k.repeat
	switch {
	case k.repeatWide != nil && s >= k.repeatWideMin:
		f = k.repeatWide
	case f == nil: // variants without the primitive
		f = repeatGo
	}
	f(&dst[0], &src[0], len(src), s)
}

// Lerp2 is the horizontal pass of a 2× linear upsampling between
// neighbouring inputs: for i < len(src)-1,
//
//	dst[2i]   = a·src[i] + b·src[i+1]
//	dst[2i+1] = b·src[i] + a·src[i+1]
//
// each product rounded to float32 and then summed (no fused
// multiply-add), so every variant gives the twin's bits, NaN payloads
// aside. dst has 2·(len(src)-1) elements and does not overlap src.
func (k *RowKernels) Lerp2(dst, src []float32, a, b float32) {
	if len(src) < 2 {
		sameLen("Lerp2", len(dst), 0)
		return
	}
	n := len(src) - 1
	sameLen("Lerp2", len(dst), 2*n)
	if overlap32(dst, src) {
		panic("asm: Lerp2: dst overlaps src")
	}
	f := k.lerp2
	if f == nil {
		f = lerp2Go
	}
	f(&dst[0], &src[0], n, a, b)
}

// Blend sets dst[i] = a·x0[i] + b·x1[i], each product rounded to
// float32 and then summed (the twin's bits in every variant, NaN payloads
// aside): the vertical pass of a linear resize in one sweep. The slices
// have one length; dst may be x0 or x1 but not partly overlap either.
func (k *RowKernels) Blend(dst, x0, x1 []float32, a, b float32) {
	n := rowDst("Blend", dst, x0)
	rowDst("Blend", dst, x1)
	if n == 0 {
		return
	}
	f := k.blend
	if f == nil {
		f = blendGo
	}
	f(&dst[0], &x0[0], &x1[0], n, a, b)
}

// blendGo is the twin of the blend primitive: y[i] = a·x0[i] + b·x1[i].
func blendGo(y, x0, x1 *float32, n int, a, b float32) {
	ys, us, vs := f32s(y, n), f32s(x0, n), f32s(x1, n)
	for i, u := range us {
		ys[i] = float32(a*u) + float32(b*vs[i])
	}
}

// repeatGo is the twin of the repeat primitive: y[i·s+j] = x[i] for
// i < n, j < s.
func repeatGo(y, x *float32, n, s int) {
	ys := f32s(y, n*s)
	for i, v := range f32s(x, n) {
		d := ys[i*s : (i+1)*s]
		for j := range d {
			d[j] = v
		}
	}
}

// lerp2Go is the twin of the lerp2 primitive: for i < n, y[2i] =
// a·x[i] + b·x[i+1] and y[2i+1] = b·x[i] + a·x[i+1], reading x[0..n].
func lerp2Go(y, x *float32, n int, a, b float32) {
	ys, xs := f32s(y, 2*n), f32s(x, n+1)
	for i := range n {
		u, v := xs[i], xs[i+1]
		// The conversions keep targets that fuse (arm64) from fusing,
		// so every platform rounds as the vector code does.
		ys[2*i] = float32(a*u) + float32(b*v)
		ys[2*i+1] = float32(b*u) + float32(a*v)
	}
}

// The vector bodies of these primitives take whole vectors only (n a
// multiple of their step); the split* constructors build a primitive
// that runs the body on the largest such prefix and then, for Repeat and
// Lerp2, the body once more on the last step elements, rewriting some
// outputs with the same values (their dst never overlaps src, so the
// inputs are unchanged). Rows shorter than a step, and Blend's remainder
// (its dst may be an input, which a second pass would read rewritten),
// go to rest: a narrower variant or the twin. No masked tail is needed
// and nothing outside the slices is touched.

type (
	repeatBody func(y, x *float32, n int)
	lerp2Func  func(y, x *float32, n int, a, b float32)
	blendFunc  func(y, x0, x1 *float32, n int, a, b float32)
)

// splitRepeat runs r2 or r4 (factors 2 and 4) on whole steps, rest on
// the remainder and on every other factor.
func splitRepeat(step int, r2, r4 repeatBody, rest func(y, x *float32, n, s int)) func(y, x *float32, n, s int) {
	return func(y, x *float32, n, s int) {
		body := r2
		if s == 4 {
			body = r4
		}
		if n < step || s != 2 && s != 4 {
			rest(y, x, n, s)
			return
		}
		m := n &^ (step - 1)
		body(y, x, m)
		if m < n {
			body(addF32(y, (n-step)*s), addF32(x, n-step), step)
		}
	}
}

func splitLerp2(step int, body, rest lerp2Func) lerp2Func {
	return func(y, x *float32, n int, a, b float32) {
		if n < step {
			rest(y, x, n, a, b)
			return
		}
		m := n &^ (step - 1)
		body(y, x, m, a, b)
		if m < n {
			body(addF32(y, 2*(n-step)), addF32(x, n-step), step, a, b)
		}
	}
}

func splitBlend(step int, body, rest blendFunc) blendFunc {
	return func(y, x0, x1 *float32, n int, a, b float32) {
		m := n &^ (step - 1)
		if m > 0 {
			body(y, x0, x1, m, a, b)
		}
		if m < n {
			rest(addF32(y, m), addF32(x0, m), addF32(x1, m), n-m, a, b)
		}
	}
}

// addF32 is &p[i].
func addF32(p *float32, i int) *float32 { return (*float32)(unsafe.Add(unsafe.Pointer(p), 4*i)) }
