package cuda

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// ErrNoCublas: cuBLAS is not used, because its library could not be
// loaded or KILN_CUBLAS=off; plain GEMMs then run kiln's PTX kernel.
var ErrNoCublas = errors.New("cuda: cuBLAS not available")

// blasLib is cuBLAS's symbol table (cuBLAS 11 or 12: the _v2 API).
type blasLib struct {
	path string

	create, destroy, setStream, gemm uintptr
	setWorkspace                     uintptr // optional (cuBLAS 11.4+)
}

const groupBlasWorkspace = "cublas workspace"

func (b *blasLib) symbols() []symbol {
	c := groupCore
	return []symbol{
		{"cublasCreate_v2", &b.create, c},
		{"cublasDestroy_v2", &b.destroy, c},
		{"cublasSetStream_v2", &b.setStream, c},
		{"cublasGemmStridedBatchedEx", &b.gemm, c},
		{"cublasSetWorkspace_v2", &b.setWorkspace, groupBlasWorkspace},
	}
}

// blasCandidates lists the cuBLAS libraries to try: KILN_CUBLAS_LIB alone
// when set, else the sonames of cuBLAS 12 and 11 (the DLL names on
// Windows, found on PATH, where the CUDA toolkit puts its bin folder).
func blasCandidates(env string) []string {
	if len(defaultLibs) == 0 {
		return nil
	}
	if env = strings.TrimSpace(env); env != "" {
		return []string{env}
	}
	if goos == "windows" {
		return []string{"cublas64_13.dll", "cublas64_12.dll", "cublas64_11.dll"}
	}
	return []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}
}

// openBlas opens the first candidate that loads and has the symbols kiln
// calls.
func openBlas(paths []string) (*blasLib, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: not on %s/%s", ErrNoCublas, goos, goarch)
	}
	var b *blasLib
	tried, err := openFirst(paths, func(path string, lookup func(string) uintptr) error {
		b = &blasLib{path: path}
		if name := bindSymbols(b.symbols(), lookup); name != "" {
			return fmt.Errorf("%w: %s has no %s (kiln needs cuBLAS 11 or newer)", ErrNoCublas, path, name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("%w: tried %s; hint: install cuBLAS (the CUDA toolkit, Debian's libcublas12, or pip's nvidia-cublas-cu12) or set KILN_CUBLAS_LIB to its path",
			ErrNoCublas, strings.Join(tried, "; "))
	}
	return b, nil
}

var (
	blasOnce   sync.Once
	blasLoaded *blasLib
	blasErr    error
)

// cublas returns the process's cuBLAS, opened on first use, or why kiln
// does not use it. KILN_CUBLAS is read on every call, so a program
// lowered after changing it (a benchmark comparing both) follows it.
func cublas() (*blasLib, error) {
	if blasOff() {
		return nil, fmt.Errorf("%w: disabled by KILN_CUBLAS=off", ErrNoCublas)
	}
	blasOnce.Do(func() { blasLoaded, blasErr = openBlas(blasCandidates(blasLibEnv())) })
	return blasLoaded, blasErr
}

// CublasLibrary names the cuBLAS library plain GEMMs lower to, or says why
// they run kiln's PTX GEMM instead (an error matching ErrNoCublas).
func CublasLibrary() (string, error) {
	b, err := cublas()
	if err != nil {
		return "", err
	}
	return b.path, nil
}

// blasStatus names the cublasStatus_t codes (stable across cuBLAS 11 and
// 12). A table rather than cublasGetStatusName: call returns 32-bit
// codes, not the C strings that function returns.
var blasStatus = map[result][2]string{
	1:  {"CUBLAS_STATUS_NOT_INITIALIZED", "cuBLAS could not start; its CUDA version may be newer than the driver's (use the matching libcublas, or KILN_CUBLAS=off)"},
	3:  {"CUBLAS_STATUS_ALLOC_FAILED", "resource allocation failed"},
	7:  {"CUBLAS_STATUS_INVALID_VALUE", "an unsupported value or parameter was passed"},
	8:  {"CUBLAS_STATUS_ARCH_MISMATCH", "the device lacks a feature the call needs"},
	11: {"CUBLAS_STATUS_MAPPING_ERROR", "access to GPU memory space failed"},
	13: {"CUBLAS_STATUS_EXECUTION_FAILED", "the GPU program failed to execute"},
	14: {"CUBLAS_STATUS_INTERNAL_ERROR", "an internal cuBLAS operation failed"},
	15: {"CUBLAS_STATUS_NOT_SUPPORTED", "the functionality requested is not supported"},
	16: {"CUBLAS_STATUS_LICENSE_ERROR", "the functionality requested requires some license"},
}

// check turns a cublasStatus_t into nil or an *Error naming it.
func (b *blasLib) check(op string, status result) error {
	if status == resultSuccess {
		return nil
	}
	e := &Error{Op: op, Code: uint32(status), Name: fmt.Sprintf("cublasStatus(%d)", uint32(status)), Text: "unknown error"}
	if s, ok := blasStatus[status]; ok {
		e.Name, e.Text = s[0], s[1]
	}
	return e
}

// blasHandle is a cuBLAS handle bound to one program's stream, with its
// own workspace so captured calls never allocate.
type blasHandle struct {
	b  *blasLib
	h  uintptr
	ws *Buffer
}

// blasWorkspace is cuBLAS's recommended workspace: 32 MiB on Hopper and
// newer, 4 MiB before.
func blasWorkspace(d *Device) int {
	if d.Major >= 9 {
		return 32 << 20
	}
	return 4 << 20
}

// newBlasHandle creates a handle on s. cuBLAS uses the context current on
// the thread, which Device.do makes the device's primary context.
func newBlasHandle(b *blasLib, s *Stream) (*blasHandle, error) {
	bh := &blasHandle{b: b}
	d := s.d
	err := d.do(func() error {
		if err := b.check("cublasCreate", call(b.create, uintptr(unsafe.Pointer(&bh.h)))); err != nil {
			return err
		}
		return b.check("cublasSetStream", call(b.setStream, bh.h, s.h))
	})
	if err == nil && b.setWorkspace != 0 { // after SetStream, which resets it
		if bh.ws, err = d.Alloc(blasWorkspace(d)); err == nil {
			err = d.do(func() error {
				return b.check("cublasSetWorkspace", call(b.setWorkspace, bh.h, uintptr(bh.ws.Ptr), uintptr(bh.ws.Bytes)))
			})
		}
	}
	if err != nil {
		_ = bh.destroy(d)
		return nil, err
	}
	return bh, nil
}

// destroy releases the handle and its workspace; nil-safe and idempotent.
func (bh *blasHandle) destroy(d *Device) error {
	if bh == nil {
		return nil
	}
	var err error
	if bh.h != 0 {
		h := bh.h
		bh.h = 0
		err = d.do(func() error { return bh.b.check("cublasDestroy", call(bh.b.destroy, h)) })
	}
	return errors.Join(err, bh.ws.Free())
}
