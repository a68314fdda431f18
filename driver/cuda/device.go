package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Device attributes kiln reads (CUdevice_attribute values).
const (
	attrMaxThreadsPerBlock = 1
	attrMaxSharedPerBlock  = 8
	attrMultiprocessors    = 16
	attrCCMajor            = 75
	attrCCMinor            = 76
	attrMaxSharedOptin     = 97
)

// Device is one GPU with its primary context retained (shared with any
// other CUDA user in the process, such as cuBLAS). Devices stay open for
// the life of the process.
type Device struct {
	l       *lib
	Ordinal int
	Name    string
	Major   int // compute capability
	Minor   int
	SMs     int
	Memory  uint64 // total bytes

	// MaxSharedOptin is the shared memory a block may opt into, in bytes.
	MaxSharedOptin int

	dev int32   // CUdevice
	ctx uintptr // CUcontext
	// ctxArg is cuCtxSetCurrent's argument list, set once ctx is known and
	// only read after: do passes it instead of call's variadic slice,
	// which purego would allocate on every call (RunInPlace must not).
	ctxArg [1]uintptr
}

var (
	devMu   sync.Mutex
	devices = map[int]*Device{}
)

// DriverVersion is the driver's CUDA version, e.g. 12040 for 12.4.
func DriverVersion() (int, error) {
	l, err := driver()
	if err != nil {
		return 0, err
	}
	var v int32
	if err := l.check("cuDriverGetVersion", call(l.cuDriverGetVersion, uintptr(unsafe.Pointer(&v)))); err != nil {
		return 0, err
	}
	return int(v), nil
}

// Count is the number of GPUs the driver sees.
func Count() (int, error) {
	l, err := driver()
	if err != nil {
		return 0, err
	}
	var n int32
	if err := l.check("cuDeviceGetCount", call(l.cuDeviceGetCount, uintptr(unsafe.Pointer(&n)))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Open returns GPU number ordinal with its primary context retained.
func Open(ordinal int) (*Device, error) {
	l, err := driver()
	if err != nil {
		return nil, err
	}
	devMu.Lock()
	defer devMu.Unlock()
	if d := devices[ordinal]; d != nil {
		return d, nil
	}
	n, err := Count()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("%w: ordinal %d, the driver sees %d device(s); hint: %s", ErrNoDevice, ordinal, n, hints[resultInvalidDevice])
	}
	d := &Device{l: l, Ordinal: ordinal}
	if err := l.check("cuDeviceGet", call(l.cuDeviceGet, uintptr(unsafe.Pointer(&d.dev)), uintptr(ordinal))); err != nil {
		return nil, err
	}
	var name [256]byte
	if err := l.check("cuDeviceGetName", call(l.cuDeviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)-1), uintptr(d.dev))); err != nil {
		return nil, err
	}
	d.Name = cBytes(name[:])
	for _, a := range []struct {
		attr int
		dst  *int
	}{{attrCCMajor, &d.Major}, {attrCCMinor, &d.Minor}, {attrMultiprocessors, &d.SMs}, {attrMaxSharedOptin, &d.MaxSharedOptin}} {
		var v int32
		if err := l.check("cuDeviceGetAttribute", call(l.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a.attr), uintptr(d.dev))); err != nil {
			return nil, err
		}
		*a.dst = int(v)
	}
	var mem uintptr
	if err := l.check("cuDeviceTotalMem", call(l.cuDeviceTotalMem, uintptr(unsafe.Pointer(&mem)), uintptr(d.dev))); err != nil {
		return nil, err
	}
	d.Memory = uint64(mem)
	if d.Major < 8 {
		return nil, fmt.Errorf("cuda: %s is compute capability %d.%d; kiln's PTX targets sm_80 (Ampere) or newer", d.Name, d.Major, d.Minor)
	}
	if err := l.check("cuDevicePrimaryCtxRetain", call(l.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&d.ctx)), uintptr(d.dev))); err != nil {
		return nil, err
	}
	d.ctxArg[0] = d.ctx
	devices[ordinal] = d
	return d, nil
}

func (d *Device) String() string {
	return fmt.Sprintf("cuda:%d %s (sm_%d%d, %d SMs, %.1f GiB)", d.Ordinal, d.Name, d.Major, d.Minor, d.SMs, float64(d.Memory)/(1<<30))
}

// do runs a sequence of driver calls with the device's context current on
// the calling OS thread, which stays locked to the goroutine meanwhile so
// the scheduler cannot move the sequence to a thread without it.
func (d *Device) do(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.l.check("cuCtxSetCurrent", callArgs(d.l.cuCtxSetCurrent, d.ctxArg[:])); err != nil {
		return err
	}
	return f()
}

// Synchronize waits for all work on the device's context.
func (d *Device) Synchronize() error {
	return d.do(func() error { return d.l.check("cuCtxSynchronize", call(d.l.cuCtxSynchronize)) })
}

// MemInfo reports free and total device memory in bytes.
func (d *Device) MemInfo() (free, total uint64, err error) {
	err = d.do(func() error {
		var f, t uintptr
		if err := d.l.check("cuMemGetInfo", call(d.l.cuMemGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t)))); err != nil {
			return err
		}
		free, total = uint64(f), uint64(t)
		return nil
	})
	return free, total, err
}

// cBytes is the string before the first NUL.
func cBytes(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
