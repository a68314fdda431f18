package cuda

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/kilnml/kiln/ptx"
)

// JIT options of cuModuleLoadDataEx (CUjit_option values).
const (
	jitInfoLogBuffer      = 3
	jitInfoLogBufferSize  = 4
	jitErrorLogBuffer     = 5
	jitErrorLogBufferSize = 6
	jitLogVerbose         = 12
)

// Module is PTX loaded (JIT-compiled for the device) by the driver.
type Module struct {
	d    *Device
	h    uintptr
	Info *ptx.ModuleInfo
	// Log is the JIT's info log (register and spill counts when
	// verbose), kept for diagnostics.
	Log string
}

// LoadPTX parses src (for its entry signatures and to reject modules the
// device cannot run) and JIT-compiles it. A rejected module's error
// carries the driver's JIT error log.
func (d *Device) LoadPTX(src string) (*Module, error) {
	info, err := ptx.Parse(src)
	if err != nil {
		return nil, err
	}
	if a := info.Arch(); a > 10*d.Major+d.Minor {
		return nil, fmt.Errorf("cuda: module targets sm_%d, %s is sm_%d%d", a, d.Name, d.Major, d.Minor)
	}
	m := &Module{d: d, Info: info}
	err = d.do(func() error {
		errLog, infoLog := make([]byte, 16<<10), make([]byte, 16<<10)
		opts := []uint32{jitErrorLogBuffer, jitErrorLogBufferSize, jitInfoLogBuffer, jitInfoLogBufferSize, jitLogVerbose}
		vals := []uintptr{uintptr(unsafe.Pointer(&errLog[0])), uintptr(len(errLog)), uintptr(unsafe.Pointer(&infoLog[0])), uintptr(len(infoLog)), 1}
		image := append([]byte(src), 0)
		r := call(d.l.cuModuleLoadDataEx, uintptr(unsafe.Pointer(&m.h)), uintptr(unsafe.Pointer(&image[0])),
			uintptr(len(opts)), uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
		// The log buffers are reached only through vals' integers.
		runtime.KeepAlive(errLog)
		runtime.KeepAlive(infoLog)
		m.Log = strings.TrimSpace(cBytes(infoLog))
		if err := d.l.check("cuModuleLoadDataEx", r); err != nil {
			if e, ok := err.(*Error); ok {
				e.Log = strings.TrimSpace(cBytes(errLog))
			}
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Unload releases the module; its kernels become invalid.
func (m *Module) Unload() error {
	if m == nil || m.h == 0 {
		return nil
	}
	h := m.h
	m.h = 0
	return m.d.do(func() error { return m.d.l.check("cuModuleUnload", call(m.d.l.cuModuleUnload, h)) })
}

// Kernel is one entry of a loaded module with its signature.
type Kernel struct {
	m     *Module
	h     uintptr // CUfunction
	Entry *ptx.Entry
}

// Kernel looks up an entry by name.
func (m *Module) Kernel(name string) (*Kernel, error) {
	e, err := m.Info.Entry(name)
	if err != nil {
		return nil, err
	}
	k := &Kernel{m: m, Entry: e}
	cname := append([]byte(name), 0)
	err = m.d.do(func() error {
		return m.d.l.check("cuModuleGetFunction", call(m.d.l.cuModuleGetFunction, uintptr(unsafe.Pointer(&k.h)), m.h, uintptr(unsafe.Pointer(&cname[0]))))
	})
	if err != nil {
		return nil, fmt.Errorf("%w (entry %s)", err, name)
	}
	return k, nil
}

// Launch packs args against the kernel's signature (see ptx.Entry.Pack;
// device pointers are Ptr or uintptr) and queues the kernel on s.
func (k *Kernel) Launch(s *Stream, l ptx.Launch, args ...any) error {
	if err := l.Validate(); err != nil {
		return err
	}
	buf, err := k.Entry.Pack(args...)
	if err != nil {
		return err
	}
	a := newLaunchArgs(buf)
	return s.d.do(func() error { return a.launch(s.d.l, k.h, l, s.h) })
}

// Launch-parameter markers of cuLaunchKernel's extra array.
const (
	launchParamEnd           = 0x00
	launchParamBufferPointer = 0x01
	launchParamBufferSize    = 0x02
)

// launchArgs is a packed argument buffer with the extra array that points
// the driver at it; prepared once per step so launching allocates
// nothing. The extra array holds raw addresses of buf and size, which
// stay valid because launchArgs keeps both alive (Go does not move heap
// objects).
type launchArgs struct {
	buf   []byte
	size  uintptr
	extra [5]uintptr
	argv  argBuf // cuLaunchKernel's arguments: a launch allocates nothing
}

// argBuf holds one driver call's arguments for callArgs, so that calls on
// hot paths do not allocate (call does, once per call). Each owner (a
// program, a step's launchArgs) has its own and calls from one goroutine
// at a time, so concurrent programs never share one.
type argBuf [12]uintptr

// call copies args into b and calls fn with them. Go pointers among args
// must be kept alive by the caller (device addresses need nothing).
func (b *argBuf) call(fn uintptr, args ...uintptr) result {
	n := copy(b[:], args)
	return callArgs(fn, b[:n])
}

func newLaunchArgs(buf []byte) *launchArgs {
	a := &launchArgs{buf: buf, size: uintptr(len(buf))}
	var p uintptr
	if len(buf) > 0 {
		p = uintptr(unsafe.Pointer(&a.buf[0]))
	}
	a.extra = [5]uintptr{launchParamBufferPointer, p, launchParamBufferSize, uintptr(unsafe.Pointer(&a.size)), launchParamEnd}
	return a
}

// launch queues the kernel; the caller holds the context (Device.do).
func (a *launchArgs) launch(l *lib, fn uintptr, g ptx.Launch, stream uintptr) error {
	extra := uintptr(0)
	if len(a.buf) > 0 {
		extra = uintptr(unsafe.Pointer(&a.extra[0]))
	}
	r := a.argv.call(l.cuLaunchKernel, fn,
		uintptr(g.Grid[0]), uintptr(g.Grid[1]), uintptr(g.Grid[2]),
		uintptr(g.Block[0]), uintptr(g.Block[1]), uintptr(g.Block[2]),
		uintptr(g.Shared), stream, 0, extra)
	runtime.KeepAlive(a)
	return l.check("cuLaunchKernel", r)
}
