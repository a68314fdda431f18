package mmapfile

import (
	"fmt"
	"io"
	"math"
	"os"
)

// File is a read-only view of a file's bytes.
type File struct {
	data   []byte
	unmap  func([]byte) error
	closed bool
}

// Bytes is the file's content. It must not be written (a mapped file is
// mapped read-only and a write faults) and is invalid after Close.
func (f *File) Bytes() []byte { return f.data }

// Mapped reports whether the bytes are a memory mapping (as opposed to a
// heap copy).
func (f *File) Mapped() bool { return f.unmap != nil }

// Close releases the mapping. Views into Bytes must not be used after it.
func (f *File) Close() error {
	if f == nil || f.closed {
		return nil
	}
	f.closed = true
	data := f.data
	f.data = nil
	if f.unmap != nil {
		return f.unmap(data)
	}
	return nil
}

// Open maps the file at path.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close() // a mapping outlives its descriptor
	return FromOS(fd)
}

// OpenIn maps a file named relative to root; os.Root refuses names that
// escape it (through "..", absolute paths or symbolic links).
func OpenIn(root *os.Root, name string) (*File, error) {
	fd, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	return FromOS(fd)
}

// FromOS maps an open file. Only regular files are accepted: a device or
// pipe has no size to map and could be read forever.
func FromOS(fd *os.File) (*File, error) {
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("mmapfile: %s is not a regular file", fd.Name())
	}
	size := st.Size()
	if size < 0 || uint64(size) > math.MaxInt {
		return nil, fmt.Errorf("mmapfile: %s: size %d does not fit in memory", fd.Name(), size)
	}
	if size == 0 {
		return &File{}, nil
	}
	if data, unmap, err := mapFile(fd, int(size)); err == nil {
		return &File{data: data, unmap: unmap}, nil
	}
	// Mapping can fail on some file systems; reading still works.
	data := make([]byte, size)
	if _, err := io.ReadFull(fd, data); err != nil {
		return nil, fmt.Errorf("mmapfile: reading %s: %w", fd.Name(), err)
	}
	return &File{data: data}, nil
}
