//go:build !darwin

package metal

// Device is a Metal GPU; off darwin none can be opened.
type Device struct{}

// Buffer is a shared-storage Metal buffer.
type Buffer struct{ Bytes []byte }

// Library is compiled MSL.
type Library struct{}

// Pipeline is a compute pipeline state.
type Pipeline struct{}

// Encoder records dispatches into a command buffer.
type Encoder struct{}

// Pending is a committed command buffer.
type Pending struct{}

// Open answers ErrNotSupported off darwin.
func Open() (*Device, error) { return nil, ErrNotSupported }

// Name is the GPU's name.
func (d *Device) Name() string { return "metal" }

// Apple7 reports simdgroup_matrix support.
func (d *Device) Apple7() bool { return false }

// NewBuffer allocates shared storage.
func (d *Device) NewBuffer(n int) (*Buffer, error) { return nil, ErrNotSupported }

// NewPrivateBuffer allocates private (GPU-only) storage.
func (d *Device) NewPrivateBuffer(n int) (*Buffer, error) { return nil, ErrNotSupported }

// Compile builds a library from MSL source.
func (d *Device) Compile(src string) (*Library, error) { return nil, ErrNotSupported }

// Encode records a command buffer with fn and commits it.
func (d *Device) Encode(fn func(e *Encoder) error) (*Pending, error) { return nil, ErrNotSupported }

// Release frees the buffer.
func (b *Buffer) Release() {}

// Pipeline finds a kernel's pipeline state.
func (l *Library) Pipeline(name string, threads int) (*Pipeline, error) { return nil, ErrNotSupported }

// Release frees the library and its pipelines.
func (l *Library) Release() {}

// Dispatch records one kernel launch.
func (e *Encoder) Dispatch(p *Pipeline, bufs []*Buffer, offs []int, groups, threads [3]int) {}

// SetBytes records a small constant argument.
func (e *Encoder) SetBytes(data []byte, index int) {}

// Wait blocks until the GPU finished.
func (p *Pending) Wait() error { return ErrNotSupported }
