package npy

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnml/kiln/tensor"
)

// want recomputes gen.py's formulas: floats i*0.5-1.25, ints i*37-100
// wrapped, bools i%3 == 0, bf16 the top half of the float32 formula.
func want(t *testing.T, dt tensor.DType, s tensor.Shape) tensor.Tensor {
	t.Helper()
	out := tensor.New(dt, s...)
	for i := range s.NumElements() {
		f := float64(i)*0.5 - 1.25
		n := int64(i)*37 - 100
		switch dt {
		case tensor.F32:
			out.F32()[i] = float32(f)
		case tensor.F64:
			out.F64()[i] = f
		case tensor.F16:
			out.F16()[i] = tensor.F32ToF16(float32(f))
		case tensor.BF16:
			out.BF16()[i] = uint16(math.Float32bits(float32(f)) >> 16)
		case tensor.I8:
			out.I8()[i] = int8(n)
		case tensor.U8:
			out.U8()[i] = uint8(n)
		case tensor.I32:
			out.I32()[i] = int32(n)
		case tensor.I64:
			out.I64()[i] = n
		case tensor.Bool:
			out.Bool()[i] = i%3 == 0
		}
	}
	return out
}

func TestReadNumpyFiles(t *testing.T) {
	for _, c := range []struct {
		file string
		dt   tensor.DType
		s    tensor.Shape
	}{
		{"f4", tensor.F32, tensor.Shape{2, 3}},
		{"f2", tensor.F16, tensor.Shape{4}},
		{"f8", tensor.F64, tensor.Shape{2, 2, 2}},
		{"i1", tensor.I8, tensor.Shape{5}},
		{"u1", tensor.U8, tensor.Shape{5}},
		{"i4", tensor.I32, tensor.Shape{3, 2}},
		{"i8", tensor.I64, tensor.Shape{2, 3}},
		{"b1", tensor.Bool, tensor.Shape{7}},
		{"bf16", tensor.BF16, tensor.Shape{6}},
		{"scalar_f4", tensor.F32, tensor.Shape{}},
		{"empty_f4", tensor.F32, tensor.Shape{0, 3}},
		{"big_f4", tensor.F32, tensor.Shape{2, 3}},
		{"big_i8", tensor.I64, tensor.Shape{4}},
		{"v2_f4", tensor.F32, tensor.Shape{2, 3}},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", c.file+".npy")
			got, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			w := want(t, c.dt, c.s)
			if got.DType != w.DType || !got.Shape.Equal(w.Shape) || !bytes.Equal(got.Data, w.Data) {
				t.Fatalf("got %v %x, want %v %x", got, got.Data, w, w.Data)
			}
			// The streaming reader agrees with the in-memory one.
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got2, err := Read(f)
			if err != nil || !bytes.Equal(got2.Data, w.Data) || !got2.Shape.Equal(w.Shape) {
				t.Fatalf("Read: %v %v", err, got2)
			}
		})
	}
}

// TestEncodeMatchesNumpy: NumPy's own bytes for the little-endian files,
// header padding included, are what Encode produces.
func TestEncodeMatchesNumpy(t *testing.T) {
	for _, c := range []struct {
		file string
		dt   tensor.DType
		s    tensor.Shape
	}{
		{"f4", tensor.F32, tensor.Shape{2, 3}}, {"f2", tensor.F16, tensor.Shape{4}},
		{"f8", tensor.F64, tensor.Shape{2, 2, 2}}, {"i1", tensor.I8, tensor.Shape{5}},
		{"u1", tensor.U8, tensor.Shape{5}}, {"i4", tensor.I32, tensor.Shape{3, 2}},
		{"i8", tensor.I64, tensor.Shape{2, 3}}, {"b1", tensor.Bool, tensor.Shape{7}},
		{"bf16", tensor.BF16, tensor.Shape{6}}, {"scalar_f4", tensor.F32, tensor.Shape{}},
		{"empty_f4", tensor.F32, tensor.Shape{0, 3}},
	} {
		ref, err := os.ReadFile(filepath.Join("testdata", c.file+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Encode(want(t, c.dt, c.s))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, ref) {
			t.Errorf("%s: Encode differs from NumPy:\n got %q\nwant %q", c.file, got, ref)
		}
	}
}

func TestRoundTripEveryDType(t *testing.T) {
	dir := t.TempDir()
	for _, dt := range tensor.DTypes() {
		w := want(t, dt, tensor.Shape{3, 1, 2})
		p := filepath.Join(dir, dt.String()+".npy")
		if err := WriteFile(p, w); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p)
		if err != nil || got.DType != dt || !bytes.Equal(got.Data, w.Data) || !got.Shape.Equal(w.Shape) {
			t.Errorf("%v: %v %v", dt, err, got)
		}
	}
	// Back-to-back arrays in one stream read in turn.
	var buf bytes.Buffer
	a, b := want(t, tensor.I32, tensor.Shape{2}), want(t, tensor.F64, tensor.Shape{3})
	if err := Write(&buf, a); err != nil {
		t.Fatal(err)
	}
	if err := Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	for _, w := range []tensor.Tensor{a, b} {
		got, err := Read(&buf)
		if err != nil || !bytes.Equal(got.Data, w.Data) {
			t.Fatalf("stream: %v %v", err, got)
		}
	}
}

func TestLongHeaderUsesVersion2(t *testing.T) {
	s := make(tensor.Shape, 30000) // a header past 65535 bytes
	for i := range s {
		s[i] = 1
	}
	w := want(t, tensor.F32, s)
	b, err := Encode(w)
	if err != nil {
		t.Fatal(err)
	}
	if b[6] != 2 {
		t.Fatalf("version %d, want 2", b[6])
	}
	got, err := Decode(b)
	if err != nil || got.Shape.Rank() != 30000 || got.F32()[0] != -1.25 {
		t.Fatalf("%v %v", err, got)
	}
}

func TestBoolBytesNormalised(t *testing.T) {
	b, _ := Encode(want(t, tensor.Bool, tensor.Shape{3}))
	b[len(b)-2] = 7 // element 1, false, becomes a non-zero byte
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Data[1] != 1 || b[len(b)-2] != 7 {
		t.Fatalf("got bytes %v; input must stay unchanged (%d)", got.Data, b[len(b)-2])
	}
}

func TestBadFiles(t *testing.T) {
	good, _ := Encode(want(t, tensor.F32, tensor.Shape{2, 3}))
	hdr := func(dict string) []byte {
		b := []byte(magic + "\x01\x00")
		b = append(b, byte(len(dict)), byte(len(dict)>>8))
		return append(b, dict...)
	}
	cases := map[string]struct {
		data []byte
		msg  string
	}{
		"empty":         {nil, "magic"},
		"bad magic":     {append([]byte("\x93NUMPX"), good[6:]...), "bad magic"},
		"version 9":     {append([]byte(magic+"\x09\x00"), good[8:]...), "version"},
		"truncated hdr": {good[:40], "header"},
		"truncated dat": {good[:len(good)-1], "data bytes"},
		"trailing":      {append(append([]byte(nil), good...), 0), "data bytes"},
		"fortran":       {mustRead(t, "fortran_f4"), "Fortran"},
		"u4":            {mustRead(t, "u4"), "unsupported dtype"},
		"complex":       {mustRead(t, "c8"), "unsupported dtype"},
		"absurd shape":  {hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }\n"), "more than"},
		"huge shape":    {hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }\n"), "data bytes"},
		"negative dim":  {hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }\n"), "non-negative"},
		"not a dict":    {hdr("('descr', '<f4')\n"), "not a dict"},
		"missing key":   {hdr("{'descr': '<f4', 'shape': (2,), }\n"), "needs descr"},
		"extra key":     {hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n"), "unknown header key"},
		"structured":    {hdr("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n"), "structured"},
		"unterminated":  {hdr("{'descr': '<f4\n"), "unterminated"},
		"deep":          {hdr(strings.Repeat("(", 50) + "\n"), "nested"},
		"junk":          {hdr("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }\n"), "unexpected"},
	}
	for name, c := range cases {
		_, err := Decode(c.data)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: Decode error %v, want one mentioning %q", name, err, c.msg)
		}
		_, err = Read(bytes.NewReader(c.data))
		if err == nil && name != "trailing" {
			t.Errorf("%s: Read accepted it", name)
		}
	}
	if _, err := Encode(tensor.Tensor{DType: tensor.F32, Shape: tensor.Shape{3}, Data: make([]byte, 8)}); err == nil {
		t.Error("Encode accepted data of the wrong length")
	}
	if _, err := Encode(tensor.Tensor{}); err == nil {
		t.Error("Encode accepted an invalid dtype")
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".npy"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
