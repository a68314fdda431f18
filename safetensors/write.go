package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/kilnml/kiln/tensor"
)

// Named pairs a tensor with its name for Write.
type Named struct {
	Name string
	T    tensor.Tensor
}

// Write writes tensors (in name order) and optional metadata in the
// safetensors format, padding the header to 8 bytes as the reference
// writer does so that data offsets stay aligned.
func Write(w io.Writer, tensors []Named, metadata map[string]string) error {
	sorted := append([]Named(nil), tensors...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	if len(metadata) > 0 {
		m, err := json.Marshal(metadata)
		if err != nil {
			return err
		}
		hdr.WriteString(`"__metadata__":`)
		hdr.Write(m)
	}
	off := 0
	for i, nt := range sorted {
		t := nt.T
		name := dtypeName(t.DType)
		if name == "" {
			return fmt.Errorf("safetensors: tensor %q: invalid dtype %v", nt.Name, t.DType)
		}
		if want := t.Shape.NumElements() * t.DType.Size(); len(t.Data) != want || t.Shape.Validate() != nil {
			return fmt.Errorf("safetensors: tensor %q: %v needs %d bytes, has %d", nt.Name, t, want, len(t.Data))
		}
		if nt.Name == "" || nt.Name == "__metadata__" || (i > 0 && sorted[i-1].Name == nt.Name) {
			return fmt.Errorf("safetensors: invalid or repeated tensor name %q", nt.Name)
		}
		if hdr.Len() > 1 {
			hdr.WriteByte(',')
		}
		key, _ := json.Marshal(nt.Name)
		shape := []int(t.Shape)
		if shape == nil {
			shape = []int{}
		}
		sh, _ := json.Marshal(shape)
		fmt.Fprintf(&hdr, `%s:{"dtype":"%s","shape":%s,"data_offsets":[%d,%d]}`, key, name, sh, off, off+len(t.Data))
		off += len(t.Data)
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 {
		hdr.WriteByte(' ')
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(hdr.Len()))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return err
	}
	for _, nt := range sorted {
		if _, err := w.Write(nt.T.Data); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes a safetensors file.
func WriteFile(path string, tensors []Named, metadata map[string]string) error {
	var b bytes.Buffer
	if err := Write(&b, tensors, metadata); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
