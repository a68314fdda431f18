//go:build darwin

package metal

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

const (
	metalPath = "/System/Library/Frameworks/Metal.framework/Metal"
	// CoreGraphics makes MTLCreateSystemDefaultDevice find the GPU in
	// command-line programs (without it the call returns nil).
	coreGraphicsPath = "/System/Library/Frameworks/CoreGraphics.framework/CoreGraphics"

	storageShared  = 0    // MTLResourceStorageModeShared
	storagePrivate = 0x20 // MTLResourceStorageModePrivate (MTLStorageModePrivate << 4)
	familyApple7   = 1007 // MTLGPUFamilyApple7
	statusError    = 5    // MTLCommandBufferStatusError
	minBufferBytes = 16
)

// mtlSize is MTLSize.
type mtlSize struct{ W, H, D uint }

// binding is the framework, loaded once: functions and selectors.
var binding struct {
	once sync.Once
	err  error

	createDevice func() objc.ID
	poolPush     func() uintptr
	poolPop      func(uintptr)
	dispatch     func(id objc.ID, sel objc.SEL, groups, threads mtlSize)

	newCommandQueue, newBuffer, contents, newLibrary, newFunction, newPipeline,
	commandBuffer, computeEncoder, setPipeline, setBuffer, setBytes, dispatchGroups,
	endEncoding, commit, waitUntilCompleted, status, errorSel, localizedDescription,
	utf8String, release, retain, supportsFamily, name, stringWithUTF8, maxThreads objc.SEL
}

func load() error {
	b := &binding
	b.once.Do(func() {
		lib, err := purego.Dlopen(metalPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			b.err = fmt.Errorf("metal: opening %s: %v (Metal needs macOS 10.13 or newer)", metalPath, err)
			return
		}
		_, _ = purego.Dlopen(coreGraphicsPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		objcLib, err := purego.Dlopen("/usr/lib/libobjc.A.dylib", purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			b.err = fmt.Errorf("metal: opening libobjc: %v", err)
			return
		}
		msgSend, err := purego.Dlsym(objcLib, "objc_msgSend")
		if err != nil {
			b.err = fmt.Errorf("metal: %v", err)
			return
		}
		purego.RegisterLibFunc(&b.createDevice, lib, "MTLCreateSystemDefaultDevice")
		purego.RegisterLibFunc(&b.poolPush, objcLib, "objc_autoreleasePoolPush")
		purego.RegisterLibFunc(&b.poolPop, objcLib, "objc_autoreleasePoolPop")
		purego.RegisterFunc(&b.dispatch, msgSend)
		r := objc.RegisterName
		b.newCommandQueue, b.newBuffer, b.contents = r("newCommandQueue"), r("newBufferWithLength:options:"), r("contents")
		b.newLibrary, b.newFunction = r("newLibraryWithSource:options:error:"), r("newFunctionWithName:")
		b.newPipeline = r("newComputePipelineStateWithFunction:error:")
		b.commandBuffer, b.computeEncoder = r("commandBuffer"), r("computeCommandEncoder")
		b.setPipeline, b.setBuffer, b.setBytes = r("setComputePipelineState:"), r("setBuffer:offset:atIndex:"), r("setBytes:length:atIndex:")
		b.dispatchGroups = r("dispatchThreadgroups:threadsPerThreadgroup:")
		b.endEncoding, b.commit, b.waitUntilCompleted = r("endEncoding"), r("commit"), r("waitUntilCompleted")
		b.status, b.errorSel, b.localizedDescription = r("status"), r("error"), r("localizedDescription")
		b.utf8String, b.release, b.retain = r("UTF8String"), r("release"), r("retain")
		b.supportsFamily, b.name, b.stringWithUTF8 = r("supportsFamily:"), r("name"), r("stringWithUTF8String:")
		b.maxThreads = r("maxTotalThreadsPerThreadgroup")
	})
	return b.err
}

// Device is the system's default Metal GPU and its command queue.
type Device struct {
	id, queue objc.ID
	name      string
	apple7    bool
}

// Open loads Metal.framework and creates the default device.
func Open() (*Device, error) {
	if err := load(); err != nil {
		return nil, err
	}
	b := &binding
	id := b.createDevice()
	if id == 0 {
		return nil, errors.New("metal: MTLCreateSystemDefaultDevice found no GPU (a virtual machine or a headless session without GPU access?)")
	}
	q := id.Send(b.newCommandQueue)
	if q == 0 {
		return nil, errors.New("metal: the device made no command queue")
	}
	d := &Device{id: id, queue: q}
	d.name = goString(objc.Send[unsafe.Pointer](id.Send(b.name), b.utf8String))
	d.apple7 = objc.Send[bool](id, b.supportsFamily, int(familyApple7))
	return d, nil
}

// Name is the GPU's name, e.g. "Apple M2".
func (d *Device) Name() string { return d.name }

// Apple7 reports an Apple7+ GPU (M1 and newer): simdgroup_matrix works.
func (d *Device) Apple7() bool { return d.apple7 }

// Buffer is a shared-storage buffer; Bytes is the CPU's view of it.
type Buffer struct {
	id    objc.ID
	Bytes []byte
}

// NewBuffer allocates n bytes of shared storage (zeroed by Metal).
func (d *Device) NewBuffer(n int) (*Buffer, error) {
	b := &binding
	id := d.id.Send(b.newBuffer, uint(max(n, minBufferBytes)), uint(storageShared))
	if id == 0 {
		return nil, fmt.Errorf("metal: allocating %d bytes failed (out of GPU memory?)", n)
	}
	p := objc.Send[unsafe.Pointer](id, b.contents)
	return &Buffer{id: id, Bytes: unsafe.Slice((*byte)(p), n)}, nil
}

// NewPrivateBuffer allocates n bytes of private storage: GPU memory the
// CPU cannot see (Bytes is nil), filled and read by GPU copies. Device-
// resident handles that need memory of their own live in one.
func (d *Device) NewPrivateBuffer(n int) (*Buffer, error) {
	id := d.id.Send(binding.newBuffer, uint(max(n, minBufferBytes)), uint(storagePrivate))
	if id == 0 {
		return nil, fmt.Errorf("metal: allocating %d private bytes failed (out of GPU memory?)", n)
	}
	return &Buffer{id: id}, nil
}

// Release frees the buffer; Bytes must not be used after.
func (bf *Buffer) Release() {
	if bf != nil && bf.id != 0 {
		bf.id.Send(binding.release)
		bf.id, bf.Bytes = 0, nil
	}
}

// Library is compiled MSL with its pipeline states, cached per kernel.
type Library struct {
	d     *Device
	id    objc.ID
	mu    sync.Mutex
	pipes map[string]*Pipeline
}

// Pipeline is one kernel's compute pipeline state.
type Pipeline struct{ id objc.ID }

// Compile builds a library from MSL source; a compile error carries the
// compiler's message (NSError localizedDescription).
func (d *Device) Compile(src string) (*Library, error) {
	b := &binding
	pool := b.poolPush()
	defer b.poolPop(pool)
	s := nsString(src)
	var nserr objc.ID
	id := objc.Send[objc.ID](d.id, b.newLibrary, s, objc.ID(0), unsafe.Pointer(&nserr))
	if id == 0 {
		return nil, fmt.Errorf("metal: compiling MSL: %s", describe(nserr))
	}
	return &Library{d: d, id: id, pipes: map[string]*Pipeline{}}, nil
}

// Pipeline finds or makes kernel name's pipeline state and checks it
// can run threads threads per threadgroup.
func (l *Library) Pipeline(name string, threads int) (*Pipeline, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.pipes[name]; ok {
		return p, nil
	}
	b := &binding
	pool := b.poolPush()
	defer b.poolPop(pool)
	fn := l.id.Send(b.newFunction, nsString(name))
	if fn == 0 {
		return nil, fmt.Errorf("metal: library has no kernel %q", name)
	}
	defer fn.Send(b.release)
	var nserr objc.ID
	id := objc.Send[objc.ID](l.d.id, b.newPipeline, fn, unsafe.Pointer(&nserr))
	if id == 0 {
		return nil, fmt.Errorf("metal: pipeline for %s: %s", name, describe(nserr))
	}
	if mx := objc.Send[uint](id, b.maxThreads); int(mx) < threads {
		id.Send(b.release)
		return nil, fmt.Errorf("metal: %s runs at most %d threads per threadgroup, it needs %d", name, mx, threads)
	}
	p := &Pipeline{id: id}
	l.pipes[name] = p
	return p, nil
}

// Release frees the library and its pipelines.
func (l *Library) Release() {
	if l == nil || l.id == 0 {
		return
	}
	for _, p := range l.pipes {
		p.id.Send(binding.release)
	}
	l.id.Send(binding.release)
	l.id, l.pipes = 0, nil
}

// Encoder records dispatches into one compute encoder.
type Encoder struct{ id objc.ID }

// Dispatch records one kernel: bufs[i] at offs[i] is [[buffer(i)]].
func (e *Encoder) Dispatch(p *Pipeline, bufs []*Buffer, offs []int, groups, threads [3]int) {
	b := &binding
	e.id.Send(b.setPipeline, p.id)
	for i, bf := range bufs {
		e.id.Send(b.setBuffer, bf.id, uint(offs[i]), uint(i))
	}
	b.dispatch(e.id, b.dispatchGroups, mtlSize{uint(groups[0]), uint(groups[1]), uint(groups[2])},
		mtlSize{uint(threads[0]), uint(threads[1]), uint(threads[2])})
}

// SetBytes records a small constant argument (under 4 KiB) at index.
func (e *Encoder) SetBytes(data []byte, index int) {
	if len(data) == 0 {
		return
	}
	e.id.Send(binding.setBytes, unsafe.Pointer(&data[0]), uint(len(data)), uint(index))
	runtime.KeepAlive(data)
}

// Pending is a committed command buffer.
type Pending struct{ cb objc.ID }

// Encode records one command buffer with one compute encoder through fn
// and commits it without waiting. The autorelease pool and the thread
// lock keep Metal's autoreleased objects from leaking in a Go program.
func (d *Device) Encode(fn func(e *Encoder) error) (*Pending, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b := &binding
	pool := b.poolPush()
	defer b.poolPop(pool)
	cb := d.queue.Send(b.commandBuffer)
	if cb == 0 {
		return nil, errors.New("metal: the queue made no command buffer")
	}
	cb.Send(b.retain)
	enc := cb.Send(b.computeEncoder)
	if enc == 0 {
		cb.Send(b.release)
		return nil, errors.New("metal: no compute encoder")
	}
	err := fn(&Encoder{id: enc})
	enc.Send(b.endEncoding)
	if err != nil {
		cb.Send(b.release)
		return nil, err
	}
	cb.Send(b.commit)
	return &Pending{cb: cb}, nil
}

// Wait blocks until the command buffer completed and reports a GPU error.
func (p *Pending) Wait() error {
	if p == nil || p.cb == 0 {
		return nil
	}
	b := &binding
	pool := b.poolPush()
	defer b.poolPop(pool)
	p.cb.Send(b.waitUntilCompleted)
	var err error
	if objc.Send[int](p.cb, b.status) == statusError {
		err = fmt.Errorf("metal: command buffer failed: %s", describe(p.cb.Send(b.errorSel)))
	}
	p.cb.Send(b.release)
	p.cb = 0
	return err
}

// nsString makes an autoreleased NSString.
func nsString(s string) objc.ID {
	c := append([]byte(s), 0)
	id := objc.ID(objc.GetClass("NSString")).Send(binding.stringWithUTF8, unsafe.Pointer(&c[0]))
	runtime.KeepAlive(c)
	return id
}

// describe is an NSError's localizedDescription.
func describe(nserr objc.ID) string {
	if nserr == 0 {
		return "no error description"
	}
	return goString(objc.Send[unsafe.Pointer](nserr.Send(binding.localizedDescription), binding.utf8String))
}

// goString copies a NUL-terminated C string.
func goString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(p), n))
}
