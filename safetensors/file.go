package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/kilnml/kiln/internal/mmapfile"
	"github.com/kilnml/kiln/tensor"
)

// maxHeader bounds the JSON header, as the reference implementation does
// (100 MB); real headers are kilobytes.
const maxHeader = 100 << 20

// dtypes maps the format's dtype names to kiln's.
var dtypes = map[string]tensor.DType{
	"F32": tensor.F32, "F16": tensor.F16, "BF16": tensor.BF16, "F64": tensor.F64,
	"I8": tensor.I8, "U8": tensor.U8, "I32": tensor.I32, "I64": tensor.I64, "BOOL": tensor.Bool,
}

// sizes of the dtypes kiln cannot hold, so their entries can still be
// validated.
var otherSizes = map[string]int{
	"I16": 2, "U16": 2, "U32": 4, "U64": 8, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
	"F8_E4M3FNUZ": 1, "F8_E5M2FNUZ": 1, "C64": 8,
}

func dtypeName(dt tensor.DType) string {
	for k, v := range dtypes {
		if v == dt {
			return k
		}
	}
	return ""
}

// Entry describes one tensor of a file.
type Entry struct {
	Name      string
	DType     tensor.DType // Invalid when kiln has no such dtype
	FileDType string       // as written in the file: "F32", "BF16", "U16", ...
	Shape     tensor.Shape
	Begin     int // byte offsets in the data section
	End       int
}

// File is an opened safetensors file.
type File struct {
	// Metadata is the optional "__metadata__" string map.
	Metadata map[string]string

	entries []Entry // in data order
	byName  map[string]int
	data    []byte // the data section
	mm      *mmapfile.File
}

// Open memory-maps and validates a safetensors file.
func Open(path string) (*File, error) {
	mm, err := mmapfile.Open(path)
	return mapped(mm, err, path)
}

// OpenIn is Open for the file name inside root, which the name cannot
// leave (a sharded checkpoint's index names its files).
func OpenIn(root *os.Root, name string) (*File, error) {
	mm, err := mmapfile.OpenIn(root, name)
	return mapped(mm, err, name)
}

// mapped validates an opened mapping and keeps it until Close.
func mapped(mm *mmapfile.File, err error, name string) (*File, error) {
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	f, err := Parse(mm.Bytes())
	if err != nil {
		mm.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f.mm = mm
	return f, nil
}

// Parse validates a safetensors file held in memory; tensors are views
// into b.
func Parse(b []byte) (*File, error) {
	if len(b) < 8 {
		return nil, errors.New("safetensors: file too short for a header length")
	}
	n := binary.LittleEndian.Uint64(b)
	if n > maxHeader || n > uint64(len(b)-8) {
		return nil, fmt.Errorf("safetensors: header length %d exceeds the file (%d bytes) or the %d-byte limit", n, len(b), maxHeader)
	}
	hdr := b[8 : 8+n]
	if len(hdr) == 0 || hdr[0] != '{' {
		return nil, errors.New("safetensors: header is not a JSON object (wrong file type?)")
	}
	f := &File{data: b[8+n:], byName: map[string]int{}}
	if err := f.parseHeader(hdr); err != nil {
		return nil, err
	}
	return f, f.checkLayout()
}

// rawEntry is one tensor's header entry as written.
type rawEntry struct {
	DType       string        `json:"dtype"`
	Shape       []json.Number `json:"shape"`
	DataOffsets []json.Number `json:"data_offsets"`
}

// parseHeader walks the top-level object token by token, so duplicate
// names are caught (a map would keep only the last).
func (f *File) parseHeader(hdr []byte) error {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("safetensors: header: %w", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("safetensors: header: %w", err)
		}
		name, _ := tok.(string)
		if _, dup := f.byName[name]; dup || (name == "__metadata__" && f.Metadata != nil) {
			return fmt.Errorf("safetensors: header: %q appears twice", name)
		}
		if name == "__metadata__" {
			if err := dec.Decode(&f.Metadata); err != nil {
				return fmt.Errorf("safetensors: __metadata__ must map strings to strings: %w", err)
			}
			if f.Metadata == nil {
				f.Metadata = map[string]string{}
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("safetensors: header: %w", err)
		}
		e, err := parseEntry(name, raw)
		if err != nil {
			return err
		}
		f.byName[name] = len(f.entries)
		f.entries = append(f.entries, e)
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("safetensors: header: %w", err)
	}
	// Only space padding may follow the object.
	rest := hdr[dec.InputOffset():]
	if len(bytes.Trim(rest, " \t\r\n\x00")) != 0 {
		return errors.New("safetensors: header: text after the JSON object")
	}
	return nil
}

func parseEntry(name string, raw []byte) (Entry, error) {
	var r rawEntry
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return Entry{}, fmt.Errorf("safetensors: tensor %q: %w", name, err)
	}
	e := Entry{Name: name, FileDType: r.DType, DType: dtypes[r.DType]}
	size := e.DType.Size()
	if size == 0 {
		size = otherSizes[r.DType]
	}
	if size == 0 {
		return Entry{}, fmt.Errorf("safetensors: tensor %q: unknown dtype %q", name, r.DType)
	}
	for _, num := range r.Shape {
		v, err := num.Int64()
		if err != nil || v < 0 || v > tensor.MaxElements {
			return Entry{}, fmt.Errorf("safetensors: tensor %q: bad dim %s", name, num)
		}
		e.Shape = append(e.Shape, int(v))
	}
	if err := e.Shape.Validate(); err != nil {
		return Entry{}, fmt.Errorf("safetensors: tensor %q: %w", name, err)
	}
	if len(r.DataOffsets) != 2 {
		return Entry{}, fmt.Errorf("safetensors: tensor %q: data_offsets needs [begin, end]", name)
	}
	var off [2]int
	for i, num := range r.DataOffsets {
		v, err := num.Int64()
		if err != nil || v < 0 || v > math.MaxInt {
			return Entry{}, fmt.Errorf("safetensors: tensor %q: bad offset %s", name, num)
		}
		off[i] = int(v)
	}
	e.Begin, e.End = off[0], off[1]
	if want := e.Shape.NumElements() * size; e.End < e.Begin || e.End-e.Begin != want {
		return Entry{}, fmt.Errorf("safetensors: tensor %q: %s%v needs %d bytes, offsets [%d, %d) hold %d", name, r.DType, e.Shape, want, e.Begin, e.End, e.End-e.Begin)
	}
	return e, nil
}

// checkLayout: tensors lie inside the data section, in order, without
// overlaps or holes.
func (f *File) checkLayout() error {
	sort.SliceStable(f.entries, func(i, j int) bool { return f.entries[i].Begin < f.entries[j].Begin })
	pos := 0
	for i, e := range f.entries {
		f.byName[e.Name] = i
		switch {
		case e.Begin < pos:
			return fmt.Errorf("safetensors: tensor %q [%d, %d) overlaps the one before", e.Name, e.Begin, e.End)
		case e.Begin > pos:
			return fmt.Errorf("safetensors: hole before tensor %q (bytes [%d, %d) unused)", e.Name, pos, e.Begin)
		}
		pos = e.End
	}
	if pos != len(f.data) {
		return fmt.Errorf("safetensors: tensors cover %d bytes, the data section has %d", pos, len(f.data))
	}
	return nil
}

// Entries lists the tensors in file order.
func (f *File) Entries() []Entry { return append([]Entry(nil), f.entries...) }

// Names lists the tensor names, sorted.
func (f *File) Names() []string {
	out := make([]string, len(f.entries))
	for i, e := range f.entries {
		out[i] = e.Name
	}
	sort.Strings(out)
	return out
}

// Entry describes one tensor by name.
func (f *File) Entry(name string) (Entry, bool) {
	i, ok := f.byName[name]
	if !ok {
		return Entry{}, false
	}
	return f.entries[i], true
}

// Tensor returns a tensor's data as a view into the file: valid until
// Close, not to be written, and possibly unaligned (Clone it before using
// typed accessors such as F32()).
func (f *File) Tensor(name string) (tensor.Tensor, error) {
	e, ok := f.Entry(name)
	if !ok {
		return tensor.Tensor{}, fmt.Errorf("safetensors: no tensor %q", name)
	}
	if f.data == nil && e.End > 0 {
		return tensor.Tensor{}, errors.New("safetensors: file is closed")
	}
	if !e.DType.Valid() {
		return tensor.Tensor{}, fmt.Errorf("safetensors: tensor %q has dtype %s, which kiln does not support", name, e.FileDType)
	}
	return tensor.View(e.DType, e.Shape, f.data[e.Begin:e.End])
}

// Close unmaps the file; tensor views become invalid.
func (f *File) Close() error {
	f.data = nil
	return f.mm.Close()
}

// String summarises the file: count and dtypes.
func (f *File) String() string {
	count := map[string]int{}
	for _, e := range f.entries {
		count[e.FileDType]++
	}
	var parts []string
	for k, v := range count {
		parts = append(parts, fmt.Sprintf("%d %s", v, k))
	}
	sort.Strings(parts)
	return fmt.Sprintf("safetensors: %d tensors (%s)", len(f.entries), strings.Join(parts, ", "))
}
