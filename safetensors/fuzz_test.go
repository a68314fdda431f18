package safetensors

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any bytes parse or fail with an error; a parsed file's
// tensors all lie inside it and read back with matching sizes, and
// writing them again gives a file that parses to the same tensors.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.safetensors"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add(header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)))
	f.Fuzz(func(t *testing.T, b []byte) {
		sf, err := Parse(b)
		if err != nil {
			return
		}
		var named []Named
		for _, e := range sf.Entries() {
			ten, err := sf.Tensor(e.Name)
			if err != nil {
				if e.DType.Valid() {
					t.Fatalf("%s: %v", e.Name, err)
				}
				continue
			}
			named = append(named, Named{e.Name, ten})
		}
		var out bytes.Buffer
		if err := Write(&out, named, sf.Metadata); err != nil {
			t.Fatalf("re-writing: %v", err)
		}
		back, err := Parse(out.Bytes())
		if err != nil {
			t.Fatalf("re-parsing: %v", err)
		}
		for _, nt := range named {
			got, err := back.Tensor(nt.Name)
			if err != nil || !bytes.Equal(got.Data, nt.T.Data) || !got.Shape.Equal(nt.T.Shape) {
				t.Fatalf("%s changed in the round trip", nt.Name)
			}
		}
	})
}
