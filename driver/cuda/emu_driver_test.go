//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/kilnml/kiln/internal/ptxemu"
	"github.com/kilnml/kiln/ptx"
)

// emuDriver is a CUDA driver made of Go functions (purego callbacks) over
// the PTX emulator: device memory is emulator memory, modules are parsed
// by it and cuLaunchKernel runs the kernel there from the packed
// parameter buffer. Every call is synchronous, which keeps stream order.
// It lets a test run a whole program as the backend builds it (Lower,
// Write, Run, Read, the MoE split's host step) without a GPU, and see
// every allocation the program makes.
type emuDriver struct {
	mu      sync.Mutex
	mem     *ptxemu.Memory
	mods    map[uintptr]*ptxemu.Module
	fns     map[uintptr]emuFn
	next    uintptr
	live    map[uint64]int // device allocations: address → bytes
	limit   int            // device memory size (0: no limit)
	allocs  []int          // every cuMemAlloc's size, in order
	launchN int
	trace   []string // copies, stream waits and launches, in order
	err     error    // the first failure inside a call (a kernel's fault)
}

type emuFn struct {
	mod  *ptxemu.Module
	name string
}

var (
	emuOnce sync.Once
	emu     *emuDriver
	emuLib  *lib
)

// hostPtr turns an address a Go caller passed as an integer back into a
// pointer (the caller keeps the memory alive for the call).
func hostPtr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func hostBytes(p, n uintptr) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(hostPtr(p)), n)
}

// emuDevice returns a Device on the emulated driver, its state reset
// (no modules or allocations left from an earlier test). Tests using it
// must not run in parallel with each other.
func emuDevice(t *testing.T) (*Device, *emuDriver) {
	t.Helper()
	emuOnce.Do(func() {
		emu = &emuDriver{}
		ok := purego.NewCallback(func() uintptr { return 0 })
		ok1 := purego.NewCallback(func(uintptr) uintptr { return 0 })
		ok2 := purego.NewCallback(func(uintptr, uintptr) uintptr { return 0 })
		handle := purego.NewCallback(func(p, _ uintptr) uintptr { return emu.handle(p) })
		emuLib = &lib{path: "ptxemu-stand-in",
			cuCtxSetCurrent: ok1, cuCtxSynchronize: ok, cuStreamDestroy: ok1,
			cuStreamSynchronize: purego.NewCallback(func(uintptr) uintptr { emu.log("sync"); return 0 }),
			cuStreamCreate:      handle, cuEventCreate: handle, cuEventDestroy: ok1, cuEventRecord: ok2,
			cuEventSynchronize: ok1, cuModuleUnload: ok1,
			// Every call is done when it returns: no time passes between events.
			cuEventElapsedTime: purego.NewCallback(func(ms, _, _ uintptr) uintptr { *(*float32)(hostPtr(ms)) = 0; return 0 }),
			cuMemAlloc:         purego.NewCallback(emu.alloc),
			cuMemFree:          purego.NewCallback(emu.free),
			cuMemcpyHtoD: purego.NewCallback(func(dst, src, n uintptr) uintptr {
				return emu.htod(dst, src, n)
			}),
			cuMemcpyHtoDAsync: purego.NewCallback(func(dst, src, n, _ uintptr) uintptr { return emu.htod(dst, src, n) }),
			cuMemcpyDtoH:      purego.NewCallback(func(dst, src, n uintptr) uintptr { return emu.dtoh(dst, src, n) }),
			cuMemcpyDtoHAsync: purego.NewCallback(func(dst, src, n, _ uintptr) uintptr { return emu.dtoh(dst, src, n) }),
			cuMemcpyDtoDAsync: purego.NewCallback(emu.dtod),
			cuModuleLoadDataEx: purego.NewCallback(func(pm, image, _, _, _ uintptr) uintptr {
				return emu.load(pm, image)
			}),
			cuModuleGetFunction: purego.NewCallback(emu.function),
			cuLaunchKernel:      purego.NewCallback(emu.launch),
		}
	})
	emu.mu.Lock()
	emu.mem, emu.mods, emu.fns, emu.live, emu.allocs, emu.launchN, emu.err, emu.limit = ptxemu.NewMemory(), map[uintptr]*ptxemu.Module{}, map[uintptr]emuFn{}, map[uint64]int{}, nil, 0, nil, 0
	emu.trace = nil
	emu.mu.Unlock()
	return &Device{l: emuLib, Name: "ptxemu", Major: 9, SMs: 4, MaxSharedOptin: 227 << 10}, emu
}

const emuFail = 999 // CUDA_ERROR_UNKNOWN

// fail records the first failure and returns the driver's error code.
func (e *emuDriver) fail(err error) uintptr {
	if e.err == nil {
		e.err = err
	}
	return emuFail
}

// log appends to the trace.
func (e *emuDriver) log(what string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.trace = append(e.trace, what)
}

func (e *emuDriver) handle(p uintptr) uintptr {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.next++
	*(*uintptr)(hostPtr(p)) = e.next
	return 0
}

func (e *emuDriver) alloc(p, n uintptr) uintptr {
	e.mu.Lock()
	defer e.mu.Unlock()
	if used := e.used(); e.limit > 0 && used+int(n) > e.limit {
		return 2 // CUDA_ERROR_OUT_OF_MEMORY
	}
	a, err := e.mem.Alloc(int(n))
	if err != nil {
		return e.fail(err)
	}
	e.live[a] = int(n)
	e.allocs = append(e.allocs, int(n))
	*(*uintptr)(hostPtr(p)) = uintptr(a)
	return 0
}

func (e *emuDriver) free(p uintptr) uintptr {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.live, uint64(p))
	if err := e.mem.Free(uint64(p)); err != nil {
		return e.fail(err)
	}
	return 0
}

func (e *emuDriver) htod(dst, src, n uintptr) uintptr {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.mem.Write(uint64(dst), hostBytes(src, n)); err != nil {
		return e.fail(err)
	}
	e.trace = append(e.trace, "HtoD")
	return 0
}

func (e *emuDriver) dtoh(dst, src, n uintptr) uintptr {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.mem.Read(uint64(src), hostBytes(dst, n)); err != nil {
		return e.fail(err)
	}
	e.trace = append(e.trace, "DtoH")
	return 0
}

func (e *emuDriver) dtod(dst, src, n, _ uintptr) uintptr {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := make([]byte, n)
	if err := e.mem.Read(uint64(src), b); err != nil {
		return e.fail(err)
	}
	if err := e.mem.Write(uint64(dst), b); err != nil {
		return e.fail(err)
	}
	e.trace = append(e.trace, "DtoD")
	return 0
}

// load parses the NUL-terminated PTX image.
func (e *emuDriver) load(pm, image uintptr) uintptr {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := uintptr(0)
	for *(*byte)(hostPtr(image + n)) != 0 {
		n++
	}
	m, err := ptxemu.Load(string(hostBytes(image, n)))
	if err != nil {
		return e.fail(err)
	}
	e.next++
	e.mods[e.next] = m
	*(*uintptr)(hostPtr(pm)) = e.next
	return 0
}

func (e *emuDriver) function(pf, mod, name uintptr) uintptr {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := uintptr(0)
	for *(*byte)(hostPtr(name + n)) != 0 {
		n++
	}
	m := e.mods[mod]
	if m == nil {
		return e.fail(fmt.Errorf("cuModuleGetFunction: no module %d", mod))
	}
	e.next++
	e.fns[e.next] = emuFn{mod: m, name: string(hostBytes(name, n))}
	*(*uintptr)(hostPtr(pf)) = e.next
	return 0
}

// launch runs the kernel from cuLaunchKernel's extra array (the parameter
// buffer and its size, as launchArgs builds it).
func (e *emuDriver) launch(f, gx, gy, gz, bx, by, bz, shared, _, _, extra uintptr) uintptr {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn, ok := e.fns[f]
	if !ok {
		return e.fail(fmt.Errorf("cuLaunchKernel: no function %d", f))
	}
	var params []byte
	if extra != 0 {
		ex := (*[5]uintptr)(hostPtr(extra))
		params = hostBytes(ex[1], *(*uintptr)(hostPtr(ex[3])))
	}
	l := ptx.Launch{Grid: [3]int{int(gx), int(gy), int(gz)}, Block: [3]int{int(bx), int(by), int(bz)}, Shared: int(shared)}
	if err := fn.mod.LaunchPacked(ptxemu.Options{}, e.mem, fn.name, l, params); err != nil {
		return e.fail(fmt.Errorf("%s: %w", fn.name, err))
	}
	e.launchN++
	e.trace = append(e.trace, fn.name)
	return 0
}

// liveBytes is the device memory allocated and not freed.
func (e *emuDriver) liveBytes() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.used()
}

// used is liveBytes with e.mu held.
func (e *emuDriver) used() int {
	n := 0
	for _, b := range e.live {
		n += b
	}
	return n
}
