package cuda

import (
	"unsafe"
)

const (
	streamNonBlocking = 0x1 // CU_STREAM_NON_BLOCKING: no implicit sync with the legacy stream
	eventDefault      = 0x0
)

// Stream is an ordered queue of work on a device. Its methods that take
// host memory return once that memory may be reused (pageable copies are
// staged by the driver); Synchronize waits for everything queued.
type Stream struct {
	d *Device
	h uintptr // CUstream
}

// NewStream creates a non-blocking stream.
func (d *Device) NewStream() (*Stream, error) {
	s := &Stream{d: d}
	err := d.do(func() error {
		return d.l.check("cuStreamCreate", call(d.l.cuStreamCreate, uintptr(unsafe.Pointer(&s.h)), streamNonBlocking))
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Destroy releases the stream after its queued work completes.
func (s *Stream) Destroy() error {
	if s == nil || s.h == 0 {
		return nil
	}
	h := s.h
	s.h = 0
	return s.d.do(func() error { return s.d.l.check("cuStreamDestroy", call(s.d.l.cuStreamDestroy, h)) })
}

// Synchronize waits for the stream's work.
func (s *Stream) Synchronize() error {
	return s.d.do(func() error { return s.sync() })
}

func (s *Stream) sync() error {
	return s.d.l.check("cuStreamSynchronize", call(s.d.l.cuStreamSynchronize, s.h))
}

// Upload queues a copy of src to b at off.
func (s *Stream) Upload(b *Buffer, off int, src []byte) error {
	if err := b.span(off, len(src)); err != nil || len(src) == 0 {
		return err
	}
	return s.d.do(func() error {
		return s.d.l.check("cuMemcpyHtoDAsync", call(s.d.l.cuMemcpyHtoDAsync, uintptr(b.Ptr)+uintptr(off),
			uintptr(unsafe.Pointer(unsafe.SliceData(src))), uintptr(len(src)), s.h))
	})
}

// Download copies b at off into dst after the stream's queued work, and
// waits for it.
func (s *Stream) Download(b *Buffer, off int, dst []byte) error {
	if err := b.span(off, len(dst)); err != nil {
		return err
	}
	return s.d.do(func() error {
		if len(dst) > 0 {
			err := s.d.l.check("cuMemcpyDtoHAsync", call(s.d.l.cuMemcpyDtoHAsync, uintptr(unsafe.Pointer(unsafe.SliceData(dst))),
				uintptr(b.Ptr)+uintptr(off), uintptr(len(dst)), s.h))
			if err != nil {
				return err
			}
		}
		return s.sync()
	})
}

// Event marks a point in a stream; pairs of events time GPU work.
type Event struct {
	d *Device
	h uintptr
}

// NewEvent creates a timing event.
func (d *Device) NewEvent() (*Event, error) {
	e := &Event{d: d}
	err := d.do(func() error {
		return d.l.check("cuEventCreate", call(d.l.cuEventCreate, uintptr(unsafe.Pointer(&e.h)), eventDefault))
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Record queues the event on s.
func (e *Event) Record(s *Stream) error {
	return e.d.do(func() error { return e.d.l.check("cuEventRecord", call(e.d.l.cuEventRecord, e.h, s.h)) })
}

// Since waits for e and returns the GPU milliseconds from start to e.
func (e *Event) Since(start *Event) (float32, error) {
	var ms float32
	err := e.d.do(func() error {
		if err := e.d.l.check("cuEventSynchronize", call(e.d.l.cuEventSynchronize, e.h)); err != nil {
			return err
		}
		return e.d.l.check("cuEventElapsedTime", call(e.d.l.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), start.h, e.h))
	})
	return ms, err
}

// Destroy releases the event.
func (e *Event) Destroy() error {
	if e == nil || e.h == 0 {
		return nil
	}
	h := e.h
	e.h = 0
	return e.d.do(func() error { return e.d.l.check("cuEventDestroy", call(e.d.l.cuEventDestroy, h)) })
}
