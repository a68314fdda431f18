package cuda

import (
	"fmt"
	"unsafe"
)

// result is a CUresult.
type result uint32

// The status codes kiln treats specially (values from the driver API).
const (
	resultSuccess              result = 0
	resultNotInitialized       result = 3
	resultDeinitialized        result = 4
	resultNoDevice             result = 100
	resultInvalidDevice        result = 101
	resultInsufficientDriver   result = 35
	resultSystemDriverMismatch result = 803
	resultCompatNotSupported   result = 804
	resultInvalidPTX           result = 218
	resultUnsupportedPTX       result = 222
	resultNotSupported         result = 801
	resultOutOfMemory          result = 2
)

// Error is a failed driver call with the driver's own name and text for
// the code, plus a hint where kiln knows what usually fixes it.
type Error struct {
	Op   string // the driver function, e.g. "cuInit"
	Code uint32 // the CUresult
	Name string // e.g. "CUDA_ERROR_NO_DEVICE"
	Text string // the driver's description
	Hint string // what to try, or ""
	Log  string // JIT error log (module loads), or ""
}

func (e *Error) Error() string {
	s := fmt.Sprintf("cuda: %s: %s (%d): %s", e.Op, e.Name, e.Code, e.Text)
	if e.Log != "" {
		s += "\nJIT log:\n" + e.Log
	}
	if e.Hint != "" {
		s += "; hint: " + e.Hint
	}
	return s
}

// Is lets errors.Is(err, ErrNoDevice) match the driver's no-device codes.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNoDevice:
		return e.Code == uint32(resultNoDevice) || e.Code == uint32(resultInvalidDevice)
	case ErrNotSupported:
		return e.Code == uint32(resultNotSupported)
	}
	return false
}

var hints = map[result]string{
	resultNoDevice:             "the driver sees no NVIDIA GPU: check nvidia-smi, that the nvidia kernel module is loaded, and CUDA_VISIBLE_DEVICES",
	resultInvalidDevice:        "no GPU with that ordinal: list them with `kiln info` or nvidia-smi (CUDA_VISIBLE_DEVICES renumbers them)",
	resultInsufficientDriver:   "the installed driver is too old for this request: update the NVIDIA driver",
	resultSystemDriverMismatch: "the user-space libcuda and the kernel module are different versions: reboot or reinstall the driver",
	resultCompatNotSupported:   "the forward-compatibility libcuda does not support this GPU: use the system driver (unset KILN_CUDA_LIB or LD_LIBRARY_PATH)",
	resultInvalidPTX:           "the driver rejected the PTX: see the JIT log",
	resultUnsupportedPTX:       "the driver is older than the PTX ISA version: update the NVIDIA driver (kiln emits PTX ISA 7.8, CUDA 11.8)",
	resultOutOfMemory:          "the GPU is out of memory: use a smaller batch, or free other processes' memory (nvidia-smi)",
	resultNotInitialized:       "cuInit failed earlier; see the first error",
}

// check turns a CUresult into nil or an *Error naming op.
func (l *lib) check(op string, r result) error {
	if r == resultSuccess {
		return nil
	}
	e := &Error{Op: op, Code: uint32(r), Hint: hints[r]}
	e.Name, e.Text = l.describe(r)
	return e
}

// describe asks the driver for a code's name and text. Both calls only
// read static tables, so they work before (and after a failed) cuInit.
func (l *lib) describe(r result) (name, text string) {
	name, text = fmt.Sprintf("CUresult(%d)", uint32(r)), "unknown error"
	if l == nil || l.cuGetErrorName == 0 {
		return name, text
	}
	var p uintptr
	if call(l.cuGetErrorName, uintptr(r), uintptr(unsafe.Pointer(&p))) == resultSuccess && p != 0 {
		name = cString(p)
	}
	p = 0
	if call(l.cuGetErrorString, uintptr(r), uintptr(unsafe.Pointer(&p))) == resultSuccess && p != 0 {
		text = cString(p)
	}
	return name, text
}

// cString copies a NUL-terminated string the driver owns (static storage).
func cString(p uintptr) string {
	var b []byte
	for i := uintptr(0); i < 4096; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(nil), p+i)) //nolint:govet // driver-owned static memory
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}
