package asm

import (
	"slices"
	"testing"
)

// FuzzEwUnary runs one unary function over fuzz-chosen values, length and
// misalignment, in place or not, on every variant: each must match the Go
// twin bit for bit (any NaN for NaN) and write nothing outside dst.
func FuzzEwUnary(f *testing.F) {
	f.Add([]byte{0, 17, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte{3, 64, 1, 1, 0x80, 1, 0x81, 4, 7, 200, 5, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		op := EwUnary(in.intn(int(ewNumUnary)))
		n, off, inPlace := in.intn(300), in.intn(8), in.byte()&1 == 1
		x := in.floats(n, 0)
		want := make([]float32, n)
		if err := ewGo.Unary(op, want, x); err != nil {
			t.Fatal(err)
		}
		for _, v := range EwVariants() {
			g := newGuarded(n, off)
			src := x
			if inPlace {
				copy(g.Data, x)
				src = g.Data
			}
			if err := v.Unary(op, g.Data, src); err != nil {
				t.Fatalf("%s %v: %v", v.Name, op, err)
			}
			g.check(t, v.Name+" "+op.String())
			if i := firstDiff(g.Data, want); i >= 0 {
				t.Fatalf("%s %v(%v) n=%d off=%d in place %v: element %d = %v, twin %v",
					v.Name, op, x[i], n, off, inPlace, i, g.Data[i], want[i])
			}
		}
	})
}

// FuzzEwBinary runs one binary operation in one form (vector-vector,
// vector-scalar, scalar-vector) on every variant against the Go twin, bit
// for bit, with the output fresh or in place of an operand.
func FuzzEwBinary(f *testing.F) {
	f.Add([]byte{0, 0, 33, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	f.Add([]byte{3, 1, 9, 5, 1, 0x80, 2, 0x82, 11, 12, 13})
	f.Add([]byte{4, 2, 70, 0, 2, 0, 0, 0x81, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		op := EwBinary(in.intn(int(ewNumBinary)))
		form, n, off := in.intn(3), in.intn(300), in.intn(8)
		alias := in.intn(3) // 0 fresh output, 1 in place of x, 2 in place of y
		x, y, s := in.floats(n, 0), in.floats(n, 0), in.float(0)
		run := func(k *EwKernels, dst, x, y []float32) error {
			switch form {
			case 0:
				return k.Binary(op, dst, x, y)
			case 1:
				return k.BinaryScalar(op, dst, x, s)
			default:
				return k.ScalarBinary(op, dst, s, y)
			}
		}
		want := make([]float32, n)
		if err := run(ewGo, want, x, y); err != nil {
			t.Fatal(err)
		}
		for _, v := range EwVariants() {
			g := newGuarded(n, off)
			xs, ys := slices.Clone(x), slices.Clone(y)
			switch {
			case alias == 1 && form != 2:
				copy(g.Data, x)
				xs = g.Data
			case alias == 2 && form != 1:
				copy(g.Data, y)
				ys = g.Data
			}
			if err := run(v, g.Data, xs, ys); err != nil {
				t.Fatalf("%s %v form %d: %v", v.Name, op, form, err)
			}
			g.check(t, v.Name+" "+op.String())
			if i := firstDiff(g.Data, want); i >= 0 {
				t.Fatalf("%s %v form %d n=%d off=%d alias %d: element %d: %v op %v (s %v) = %v, twin %v",
					v.Name, op, form, n, off, alias, i, x[i], y[i], s, g.Data[i], want[i])
			}
		}
	})
}
