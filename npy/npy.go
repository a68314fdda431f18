package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kilnml/kiln/tensor"
)

// magic starts every .npy file.
const magic = "\x93NUMPY"

// maxHeader bounds the header dict; NumPy itself refuses more than 10000
// bytes by default, so this only stops a hostile length from allocating.
const maxHeader = 1 << 20

// descrs maps the little-endian descriptors to kiln dtypes. The byte-order
// character is handled separately, so '|' (not applicable) and '<' both
// reach here as '<'.
var descrs = map[string]tensor.DType{
	"f4": tensor.F32, "f2": tensor.F16, "f8": tensor.F64,
	"i1": tensor.I8, "u1": tensor.U8, "i4": tensor.I32, "i8": tensor.I64, "b1": tensor.Bool,
	"u2": tensor.BF16, // the documented bfloat16 convention
}

// descrOf is the descriptor Write uses for each dtype.
func descrOf(dt tensor.DType) (string, error) {
	switch dt {
	case tensor.F32:
		return "<f4", nil
	case tensor.F16:
		return "<f2", nil
	case tensor.F64:
		return "<f8", nil
	case tensor.I8:
		return "|i1", nil
	case tensor.U8:
		return "|u1", nil
	case tensor.I32:
		return "<i4", nil
	case tensor.I64:
		return "<i8", nil
	case tensor.Bool:
		return "|b1", nil
	case tensor.BF16:
		return "<u2", nil
	}
	return "", fmt.Errorf("npy: no descriptor for dtype %v", dt)
}

// parseDescr returns the dtype and whether the data is big-endian.
func parseDescr(d string) (tensor.DType, bool, error) {
	if len(d) != 3 || strings.IndexByte("<>|=", d[0]) < 0 {
		return 0, false, fmt.Errorf("npy: unsupported dtype descriptor %q", d)
	}
	dt, ok := descrs[d[1:]]
	if !ok {
		return 0, false, fmt.Errorf("npy: unsupported dtype descriptor %q (kiln reads f2 f4 f8 i1 u1 i4 i8 b1, and u2 as bfloat16 bits)", d)
	}
	// '=' is the writer's native order; every platform kiln runs on is
	// little-endian.
	return dt, d[0] == '>' && dt.Size() > 1, nil
}

// readHeader reads the magic, version and header dict, and returns the
// dtype, shape, byte order and the total header length in bytes.
func readHeader(r io.Reader) (tensor.DType, tensor.Shape, bool, int, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil {
		return 0, nil, false, 0, fmt.Errorf("npy: reading magic: %w", noEOF(err))
	}
	if string(pre[:6]) != magic {
		return 0, nil, false, 0, errors.New("npy: not a .npy file (bad magic)")
	}
	var hlen, prefix int
	switch major := pre[6]; major {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return 0, nil, false, 0, fmt.Errorf("npy: reading header length: %w", noEOF(err))
		}
		hlen, prefix = int(binary.LittleEndian.Uint16(pre[8:10])), 10
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return 0, nil, false, 0, fmt.Errorf("npy: reading header length: %w", noEOF(err))
		}
		n := binary.LittleEndian.Uint32(l[:])
		if n > maxHeader {
			return 0, nil, false, 0, fmt.Errorf("npy: header of %d bytes is too large", n)
		}
		hlen, prefix = int(n), 12
	default:
		return 0, nil, false, 0, fmt.Errorf("npy: unsupported format version %d.%d", major, pre[7])
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return 0, nil, false, 0, fmt.Errorf("npy: reading %d-byte header: %w", hlen, noEOF(err))
	}
	h, err := parseHeader(string(hb))
	if err != nil {
		return 0, nil, false, 0, err
	}
	if h.fortran {
		return 0, nil, false, 0, errors.New("npy: Fortran-ordered arrays are not supported (save with np.ascontiguousarray)")
	}
	dt, big, err := parseDescr(h.descr)
	if err != nil {
		return 0, nil, false, 0, err
	}
	s := tensor.Shape(h.shape)
	if err := s.Validate(); err != nil {
		return 0, nil, false, 0, fmt.Errorf("npy: %w", err)
	}
	return dt, s, big, prefix + hlen, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Read reads one array from r. It reads exactly the array's bytes, so
// arrays written back to back can be read in turn. Memory grows with the
// data actually present, so a header declaring an absurd shape over a
// short stream fails without allocating that shape.
func Read(r io.Reader) (tensor.Tensor, error) {
	dt, s, big, _, err := readHeader(r)
	if err != nil {
		return tensor.Tensor{}, err
	}
	want := s.NumElements() * dt.Size()
	data, err := readN(r, want)
	if err != nil {
		return tensor.Tensor{}, fmt.Errorf("npy: %v%v needs %d data bytes: %w", dt, s, want, err)
	}
	return finish(dt, s, big, data)
}

// readN reads exactly n bytes, growing the buffer as data arrives.
func readN(r io.Reader, n int) ([]byte, error) {
	const chunk = 1 << 20 // first allocation; doubles as data keeps coming
	buf := make([]byte, 0, min(n, chunk))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, min(n-len(buf), cap(buf)))...)[:len(buf)]
		}
		m, err := io.ReadFull(r, buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return nil, noEOF(err)
		}
	}
	return buf, nil
}

// Decode parses a whole .npy file held in memory; trailing bytes are an
// error. The tensor's Data is a view into b when no byte swap is needed
// (data starts at a 16- or 64-byte aligned offset, so typed views of it
// are aligned when b is).
func Decode(b []byte) (tensor.Tensor, error) {
	br := bytes.NewReader(b)
	dt, s, big, off, err := readHeader(br)
	if err != nil {
		return tensor.Tensor{}, err
	}
	want := s.NumElements() * dt.Size()
	if have := len(b) - off; have != want {
		return tensor.Tensor{}, fmt.Errorf("npy: %v%v needs %d data bytes, file has %d", dt, s, want, have)
	}
	return finish(dt, s, big, b[off:])
}

// finish byte-swaps big-endian data, maps Bool bytes to 0 or 1 (NumPy
// reads any non-zero byte as true; a Go bool must be 0 or 1) and checks
// the length. data is copied before any change: Decode's input is the
// caller's.
func finish(dt tensor.DType, s tensor.Shape, big bool, data []byte) (tensor.Tensor, error) {
	copied := false
	own := func() {
		if !copied {
			data, copied = append([]byte(nil), data...), true
		}
	}
	if sz := dt.Size(); big {
		own()
		for i := 0; i+sz <= len(data); i += sz {
			for a, b := i, i+sz-1; a < b; a, b = a+1, b-1 {
				data[a], data[b] = data[b], data[a]
			}
		}
	}
	if dt == tensor.Bool {
		for i, c := range data {
			if c > 1 {
				own()
				data[i] = 1
			}
		}
	}
	return tensor.View(dt, s, data)
}

// ReadFile reads a .npy file. Only regular files are read: a FIFO or a
// device could block or never end.
func ReadFile(path string) (tensor.Tensor, error) {
	if st, err := os.Stat(path); err != nil {
		return tensor.Tensor{}, err
	} else if !st.Mode().IsRegular() {
		return tensor.Tensor{}, fmt.Errorf("npy: %s is not a regular file (%v)", path, st.Mode().Type())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return tensor.Tensor{}, err
	}
	t, err := Decode(b)
	if err != nil {
		return tensor.Tensor{}, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Encode returns t as a .npy file: version 1.0 unless the header needs 2.0,
// little-endian, C order, data aligned to 64 bytes as NumPy does.
func Encode(t tensor.Tensor) ([]byte, error) {
	d, err := descrOf(t.DType)
	if err != nil {
		return nil, err
	}
	if _, err := tensor.View(t.DType, t.Shape, t.Data); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	var sh strings.Builder
	sh.WriteByte('(')
	for i, n := range t.Shape {
		if i > 0 {
			sh.WriteString(", ")
		}
		fmt.Fprint(&sh, n)
	}
	if len(t.Shape) == 1 {
		sh.WriteByte(',')
	}
	sh.WriteByte(')')
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", d, sh.String())
	prefix := 10
	if len(dict)+1+prefix > 65535 {
		prefix = 12
	}
	pad := 63 - (prefix+len(dict)+1+63)%64
	hlen := len(dict) + pad + 1
	out := make([]byte, 0, prefix+hlen+len(t.Data))
	out = append(out, magic...)
	if prefix == 10 {
		out = append(out, 1, 0)
		out = binary.LittleEndian.AppendUint16(out, uint16(hlen))
	} else {
		out = append(out, 2, 0)
		out = binary.LittleEndian.AppendUint32(out, uint32(hlen))
	}
	out = append(out, dict...)
	out = append(out, bytes.Repeat([]byte{' '}, pad)...)
	out = append(out, '\n')
	return append(out, t.Data...), nil
}

// Write writes t to w in .npy format.
func Write(w io.Writer, t tensor.Tensor) error {
	b, err := Encode(t)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// WriteFile writes t to a .npy file.
func WriteFile(path string, t tensor.Tensor) error {
	b, err := Encode(t)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
