package tensor

import (
	"strings"
	"testing"
	"unsafe"
)

func TestDTypes(t *testing.T) {
	sizes := map[DType]int{F32: 4, F16: 2, BF16: 2, F64: 8, I8: 1, U8: 1, I32: 4, I64: 8, Bool: 1}
	if len(DTypes()) != 9 {
		t.Fatalf("DTypes() = %v", DTypes())
	}
	for _, d := range DTypes() {
		if !d.Valid() || d.Size() != sizes[d] {
			t.Errorf("%v: valid %v size %d", d, d.Valid(), d.Size())
		}
		got, err := ParseDType(d.String())
		if err != nil || got != d {
			t.Errorf("ParseDType(%q) = %v, %v", d.String(), got, err)
		}
		isFloat := d == F32 || d == F16 || d == BF16 || d == F64
		isInt := d == I8 || d == U8 || d == I32 || d == I64
		if d.IsFloat() != isFloat || d.IsInt() != isInt {
			t.Errorf("%v: IsFloat %v IsInt %v", d, d.IsFloat(), d.IsInt())
		}
	}
	for _, name := range []string{"", "invalid", "F32", "float32", "f8", "dtype(200)"} {
		if d, err := ParseDType(name); err == nil {
			t.Errorf("ParseDType(%q) = %v, want an error", name, d)
		}
	}
	if Invalid.Valid() || Invalid.Size() != 0 || DType(200).Valid() || DType(200).Size() != 0 {
		t.Error("invalid dtypes report as valid")
	}
	if DType(200).String() != "dtype(200)" || Invalid.String() != "invalid" {
		t.Errorf("String: %s %s", DType(200), Invalid)
	}
}

func TestMakeAndView(t *testing.T) {
	x, err := Make(F64, Shape{2, 3})
	if err != nil || len(x.Data) != 48 || x.String() != "f64[2 3]" || x.NumElements() != 6 {
		t.Fatalf("Make: %v %v", x, err)
	}
	for _, tc := range []struct {
		dt DType
		s  Shape
	}{{Invalid, Shape{1}}, {DType(99), Shape{1}}, {F32, Shape{-1}}, {F32, Shape{1 << 40, 1 << 40}}} {
		if _, err := Make(tc.dt, tc.s); err == nil {
			t.Errorf("Make(%v, %v) accepted", tc.dt, tc.s)
		}
		if _, err := View(tc.dt, tc.s, nil); err == nil {
			t.Errorf("View(%v, %v) accepted", tc.dt, tc.s)
		}
	}
	// Make copies the shape it is given.
	s := Shape{4}
	y, _ := Make(I8, s)
	s[0] = 5
	if y.Shape[0] != 4 {
		t.Error("Make kept the caller's shape slice")
	}

	buf := make([]byte, 24)
	v, err := View(I32, Shape{2, 3}, buf)
	if err != nil {
		t.Fatal(err)
	}
	v.I32()[5] = -7
	if Elems[int32](buf)[5] != -7 {
		t.Error("View does not share memory")
	}
	if _, err := View(I32, Shape{2, 3}, buf[:20]); err == nil || !strings.Contains(err.Error(), "24 bytes") {
		t.Errorf("short view: %v", err)
	}
	if _, err := View(I32, Shape{2, 2}, buf); err == nil {
		t.Error("long view accepted")
	}
	c := v.Clone()
	c.I32()[5] = 1
	c.Shape[0] = 9
	if v.I32()[5] != -7 || v.Shape[0] != 2 {
		t.Error("Clone shares memory")
	}
}

func TestNewPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New with a negative dim did not panic")
		}
	}()
	New(F32, 2, -1)
}

func TestFromSlices(t *testing.T) {
	f, err := FromF32(Shape{2, 2}, []float32{1, 2, 3, 4})
	if err != nil || f.F32()[3] != 4 {
		t.Fatalf("FromF32: %v %v", f, err)
	}
	if _, err := FromF32(Shape{2, 2}, []float32{1, 2, 3}); err == nil || !strings.Contains(err.Error(), "4 elements") {
		t.Errorf("FromF32 short: %v", err)
	}
	if _, err := FromF32(Shape{-2}, nil); err == nil {
		t.Error("FromF32 negative dim accepted")
	}
	if _, err := FromF32(Shape{2}, []float32{1, 2, 3}); err == nil {
		t.Error("FromF32 long accepted")
	}
	vals := []float32{5}
	s, _ := FromF32(nil, vals)
	vals[0] = 6
	if s.F32()[0] != 5 {
		t.Error("FromF32 does not copy")
	}
	if x, err := FromF64(Shape{1}, []float64{2.5}); err != nil || x.F64()[0] != 2.5 {
		t.Error("FromF64")
	}
	if x, err := FromI32(Shape{1}, []int32{-3}); err != nil || x.I32()[0] != -3 {
		t.Error("FromI32")
	}
	if x, err := FromI64(Shape{1}, []int64{1 << 60}); err != nil || x.I64()[0] != 1<<60 {
		t.Error("FromI64")
	}
	if x, err := FromBool(Shape{2}, []bool{true, false}); err != nil || !x.Bool()[0] || x.Data[0] != 1 || x.Data[1] != 0 {
		t.Error("FromBool")
	}
	if x, err := FromI32(Shape{0, 3}, nil); err != nil || x.NumElements() != 0 || len(x.I32()) != 0 {
		t.Errorf("empty FromI32: %v %v", x, err)
	}
}

func TestElemsBytes(t *testing.T) {
	f := []float32{1.5, -2, 3}
	b := Bytes(f)
	if len(b) != 12 || unsafe.Pointer(&b[0]) != unsafe.Pointer(&f[0]) {
		t.Fatal("Bytes copies or has the wrong length")
	}
	back := Elems[float32](b)
	if len(back) != 3 || &back[0] != &f[0] || back[1] != -2 {
		t.Fatal("Elems does not round-trip")
	}
	// Little-endian layout of 1.5 (0x3fc00000).
	if b[0] != 0 || b[1] != 0 || b[2] != 0xc0 || b[3] != 0x3f {
		t.Errorf("bytes of 1.5: % x", b[:4])
	}
	i64 := Elems[int64](Bytes([]int64{-1, 2}))
	if len(i64) != 2 || i64[0] != -1 || i64[1] != 2 {
		t.Error("int64 round trip")
	}
	if Bytes([]float64(nil)) != nil || Elems[float64](nil) != nil || Elems[float64](make([]byte, 7)) != nil {
		t.Error("empty inputs should give nil")
	}
}

func TestAccessors(t *testing.T) {
	accessors := map[DType]func(Tensor) int{
		F32:  func(x Tensor) int { return len(x.F32()) },
		F64:  func(x Tensor) int { return len(x.F64()) },
		F16:  func(x Tensor) int { return len(x.F16()) },
		BF16: func(x Tensor) int { return len(x.BF16()) },
		I8:   func(x Tensor) int { return len(x.I8()) },
		U8:   func(x Tensor) int { return len(x.U8()) },
		I32:  func(x Tensor) int { return len(x.I32()) },
		I64:  func(x Tensor) int { return len(x.I64()) },
		Bool: func(x Tensor) int { return len(x.Bool()) },
	}
	for _, dt := range DTypes() {
		x := New(dt, 3)
		for as, f := range accessors {
			checkAccess(t, x, as, f)
		}
	}
}

// checkAccess calls the accessor for dtype as on x: it must return 3
// elements when as is x's dtype and panic otherwise.
func checkAccess(t *testing.T, x Tensor, as DType, f func(Tensor) int) {
	t.Helper()
	defer func() {
		if r := recover(); (r != nil) != (as != x.DType) {
			t.Errorf("%v accessed as %v: panic %v", x, as, r)
		}
	}()
	if got := f(x); got != 3 {
		t.Errorf("%v accessed as %v: %d elements", x, as, got)
	}
}
