package mmapfile

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
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

// Open maps the file at path. Only regular files are accepted, checked
// before opening: opening a FIFO for reading blocks until a writer
// appears, which may be never.
func Open(path string) (*File, error) {
	if err := regular(os.Stat(path)); err != nil {
		return nil, err
	}
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
	if err := regular(root.Stat(name)); err != nil {
		return nil, err
	}
	fd, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	return FromOS(fd)
}

// regular turns a Stat result into an error unless it is a regular file.
func regular(st os.FileInfo, err error) error {
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("mmapfile: %s is not a regular file (%v)", st.Name(), st.Mode().Type())
	}
	return nil
}

// CopyOut copies view, bytes of a mapped file, into buf (grown when
// short) and returns the copy. A mapping whose file shrank after it was
// mapped faults on the pages past the new end (SIGBUS on Unix); the copy
// runs with debug.SetPanicOnFault, so that becomes an error instead of
// ending the process. Readers copy weights out this way before handing
// them on (to code that may read them on other goroutines, which the
// setting does not cover).
func CopyOut(buf, view []byte) (out []byte, err error) {
	if cap(buf) < len(view) {
		buf = make([]byte, len(view))
	}
	buf = buf[:len(view)]
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			// copy cannot panic otherwise (the lengths match): any runtime
			// error here is the fault. Not every platform reports its
			// address (qemu gives 0, which reads as a nil dereference).
			re, ok := r.(runtime.Error)
			if !ok {
				panic(r)
			}
			out, err = nil, fmt.Errorf("mmapfile: reading the mapping faulted (%v): the file was truncated or replaced after it was opened", re)
		}
	}()
	copy(buf, view)
	return buf, nil
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
