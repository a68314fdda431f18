package cuda

import (
	"fmt"
	"unsafe"
)

// Ptr is a device address (CUdeviceptr).
type Ptr uintptr

// Buffer is device memory owned by kiln.
type Buffer struct {
	d     *Device
	Ptr   Ptr
	Bytes int
}

// Alloc reserves n bytes of device memory (n may be 0: no memory, null
// pointer). cuMemAlloc aligns to at least 256 bytes, more than the arena
// plan's 64.
func (d *Device) Alloc(n int) (*Buffer, error) {
	b := &Buffer{d: d, Bytes: n}
	if n == 0 {
		return b, nil
	}
	if n < 0 {
		return nil, fmt.Errorf("cuda: Alloc of %d bytes", n)
	}
	err := d.do(func() error {
		return d.l.check("cuMemAlloc", call(d.l.cuMemAlloc, uintptr(unsafe.Pointer(&b.Ptr)), uintptr(n)))
	})
	if err != nil {
		return nil, fmt.Errorf("%w (asked for %d bytes)", err, n)
	}
	return b, nil
}

// Free releases the buffer; a second Free is a no-op.
func (b *Buffer) Free() error {
	if b == nil || b.Ptr == 0 {
		return nil
	}
	p := b.Ptr
	b.Ptr = 0
	return b.d.do(func() error { return b.d.l.check("cuMemFree", call(b.d.l.cuMemFree, uintptr(p))) })
}

// span checks that [off, off+n) lies inside the buffer.
func (b *Buffer) span(off, n int) error {
	if b == nil || (b.Ptr == 0 && b.Bytes > 0) {
		return fmt.Errorf("cuda: buffer is freed")
	}
	if off < 0 || n < 0 || off+n > b.Bytes {
		return fmt.Errorf("cuda: range [%d, %d) outside a buffer of %d bytes", off, off+n, b.Bytes)
	}
	return nil
}

// Upload copies src to the buffer at byte offset off and waits.
func (b *Buffer) Upload(off int, src []byte) error {
	if err := b.span(off, len(src)); err != nil || len(src) == 0 {
		return err
	}
	return b.d.do(func() error {
		return b.d.l.check("cuMemcpyHtoD", call(b.d.l.cuMemcpyHtoD, uintptr(b.Ptr)+uintptr(off), uintptr(unsafe.Pointer(unsafe.SliceData(src))), uintptr(len(src))))
	})
}

// Download copies from the buffer at byte offset off into dst and waits
// (for the copy and, on the legacy stream's rules, prior work).
func (b *Buffer) Download(off int, dst []byte) error {
	if err := b.span(off, len(dst)); err != nil || len(dst) == 0 {
		return err
	}
	return b.d.do(func() error {
		return b.d.l.check("cuMemcpyDtoH", call(b.d.l.cuMemcpyDtoH, uintptr(unsafe.Pointer(unsafe.SliceData(dst))), uintptr(b.Ptr)+uintptr(off), uintptr(len(dst))))
	})
}
