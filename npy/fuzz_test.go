package npy

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode: any bytes either fail with an error or decode to a tensor
// that encodes and decodes back to the same dtype, shape and bytes.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.npy"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := Read(bytes.NewReader(b)); err == nil {
			if _, err := Encode(r); err != nil {
				t.Fatalf("Read gave %v that cannot be encoded: %v", r, err)
			}
		}
		got, err := Decode(b)
		if err != nil {
			return
		}
		enc, err := Encode(got)
		if err != nil {
			t.Fatalf("decoded %v but cannot encode it: %v", got, err)
		}
		back, err := Decode(enc)
		if err != nil || back.DType != got.DType || !back.Shape.Equal(got.Shape) || !bytes.Equal(back.Data, got.Data) {
			t.Fatalf("round trip: %v %v vs %v", err, back, got)
		}
	})
}
