package cuda

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrNotSupported: this platform has no CUDA driver kiln can load.
	ErrNotSupported = errors.New("cuda: not supported on this platform")
	// ErrNoDriver: the driver library could not be opened.
	ErrNoDriver = errors.New("cuda: driver library not found")
	// ErrUnavailable: an optional group of driver functions (graphs,
	// stream-ordered allocation) is missing from this driver.
	ErrUnavailable = errors.New("cuda: function not available in this driver")
	// ErrNoDevice: the driver loaded but sees no usable GPU.
	ErrNoDevice = errors.New("cuda: no CUDA device")
)

// lib is the driver's symbol table. Fields hold function addresses; zero
// means absent (only allowed for optional groups).
type lib struct {
	path string

	// core: required
	cuInit, cuDriverGetVersion, cuGetErrorName, cuGetErrorString                uintptr
	cuDeviceGetCount, cuDeviceGet, cuDeviceGetName, cuDeviceGetAttribute        uintptr
	cuDeviceTotalMem, cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRelease       uintptr
	cuCtxSetCurrent, cuCtxSynchronize                                           uintptr
	cuMemAlloc, cuMemFree, cuMemGetInfo, cuMemAllocHost, cuMemFreeHost          uintptr
	cuMemcpyHtoD, cuMemcpyDtoH, cuMemcpyHtoDAsync, cuMemcpyDtoHAsync            uintptr
	cuMemcpyDtoDAsync, cuMemsetD8Async                                          uintptr
	cuModuleLoadDataEx, cuModuleUnload, cuModuleGetFunction, cuFuncSetAttribute uintptr
	cuLaunchKernel                                                              uintptr
	cuStreamCreate, cuStreamDestroy, cuStreamSynchronize                        uintptr
	cuEventCreate, cuEventDestroy, cuEventRecord, cuEventSynchronize            uintptr
	cuEventElapsedTime                                                          uintptr

	// graphs: optional (CUDA 11.4+ for the instantiate-with-flags form)
	cuStreamBeginCapture, cuStreamEndCapture, cuGraphInstantiate uintptr
	cuGraphLaunch, cuGraphExecDestroy, cuGraphDestroy            uintptr

	// stream-ordered allocation: optional (CUDA 11.2+)
	cuMemAllocAsync, cuMemFreeAsync uintptr
}

// Optional symbol groups.
const (
	groupCore   = ""
	groupGraphs = "graphs"
	groupAsync  = "async alloc"
)

type symbol struct {
	name  string
	dst   *uintptr
	group string
}

// symbols lists every binding with its exported name: the _v2 entry
// points where the driver has them (the unsuffixed names are the old
// 32-bit-size ABI kept for binary compatibility).
func (l *lib) symbols() []symbol {
	c, g, a := groupCore, groupGraphs, groupAsync
	return []symbol{
		{"cuInit", &l.cuInit, c},
		{"cuDriverGetVersion", &l.cuDriverGetVersion, c},
		{"cuGetErrorName", &l.cuGetErrorName, c},
		{"cuGetErrorString", &l.cuGetErrorString, c},
		{"cuDeviceGetCount", &l.cuDeviceGetCount, c},
		{"cuDeviceGet", &l.cuDeviceGet, c},
		{"cuDeviceGetName", &l.cuDeviceGetName, c},
		{"cuDeviceGetAttribute", &l.cuDeviceGetAttribute, c},
		{"cuDeviceTotalMem_v2", &l.cuDeviceTotalMem, c},
		{"cuDevicePrimaryCtxRetain", &l.cuDevicePrimaryCtxRetain, c},
		{"cuDevicePrimaryCtxRelease_v2", &l.cuDevicePrimaryCtxRelease, c},
		{"cuCtxSetCurrent", &l.cuCtxSetCurrent, c},
		{"cuCtxSynchronize", &l.cuCtxSynchronize, c},
		{"cuMemAlloc_v2", &l.cuMemAlloc, c},
		{"cuMemFree_v2", &l.cuMemFree, c},
		{"cuMemGetInfo_v2", &l.cuMemGetInfo, c},
		{"cuMemAllocHost_v2", &l.cuMemAllocHost, c},
		{"cuMemFreeHost", &l.cuMemFreeHost, c},
		{"cuMemcpyHtoD_v2", &l.cuMemcpyHtoD, c},
		{"cuMemcpyDtoH_v2", &l.cuMemcpyDtoH, c},
		{"cuMemcpyHtoDAsync_v2", &l.cuMemcpyHtoDAsync, c},
		{"cuMemcpyDtoHAsync_v2", &l.cuMemcpyDtoHAsync, c},
		{"cuMemcpyDtoDAsync_v2", &l.cuMemcpyDtoDAsync, c},
		{"cuMemsetD8Async", &l.cuMemsetD8Async, c},
		{"cuModuleLoadDataEx", &l.cuModuleLoadDataEx, c},
		{"cuModuleUnload", &l.cuModuleUnload, c},
		{"cuModuleGetFunction", &l.cuModuleGetFunction, c},
		{"cuFuncSetAttribute", &l.cuFuncSetAttribute, c},
		{"cuLaunchKernel", &l.cuLaunchKernel, c},
		{"cuStreamCreate", &l.cuStreamCreate, c},
		{"cuStreamDestroy_v2", &l.cuStreamDestroy, c},
		{"cuStreamSynchronize", &l.cuStreamSynchronize, c},
		{"cuEventCreate", &l.cuEventCreate, c},
		{"cuEventDestroy_v2", &l.cuEventDestroy, c},
		{"cuEventRecord", &l.cuEventRecord, c},
		{"cuEventSynchronize", &l.cuEventSynchronize, c},
		{"cuEventElapsedTime", &l.cuEventElapsedTime, c},

		{"cuStreamBeginCapture_v2", &l.cuStreamBeginCapture, g},
		{"cuStreamEndCapture", &l.cuStreamEndCapture, g},
		{"cuGraphInstantiateWithFlags", &l.cuGraphInstantiate, g},
		{"cuGraphLaunch", &l.cuGraphLaunch, g},
		{"cuGraphExecDestroy", &l.cuGraphExecDestroy, g},
		{"cuGraphDestroy", &l.cuGraphDestroy, g},

		{"cuMemAllocAsync", &l.cuMemAllocAsync, a},
		{"cuMemFreeAsync", &l.cuMemFreeAsync, a},
	}
}

// bind resolves every symbol through lookup. A missing core symbol fails
// the load, naming it.
func (l *lib) bind(lookup func(name string) uintptr) error {
	if name := bindSymbols(l.symbols(), lookup); name != "" {
		return fmt.Errorf("%w: %s has no %s (driver too old? kiln needs CUDA 11.4 or newer)", ErrNoDriver, l.path, name)
	}
	return nil
}

// bindSymbols resolves syms through lookup (0 when absent) and returns the
// first missing core symbol's name, or "". A missing optional symbol
// disables its whole group, so a group is either fully usable or absent.
func bindSymbols(syms []symbol, lookup func(name string) uintptr) (missingCore string) {
	missing := map[string]bool{}
	for _, s := range syms {
		*s.dst = lookup(s.name)
		if *s.dst == 0 {
			if s.group == groupCore {
				return s.name
			}
			missing[s.group] = true
		}
	}
	for _, s := range syms {
		if missing[s.group] {
			*s.dst = 0
		}
	}
	return ""
}

// need reports ErrUnavailable unless every function of a group is bound.
func (l *lib) need(group string) error {
	for _, s := range l.symbols() {
		if s.group == group && *s.dst == 0 {
			return fmt.Errorf("%w: %s (%s, from %s)", ErrUnavailable, s.name, group, l.path)
		}
	}
	return nil
}

// libCandidates lists the paths to try, in order: KILN_CUDA_LIB alone when
// set, else the platform's defaults.
func libCandidates(env string) []string {
	if len(defaultLibs) == 0 {
		return nil // not supported here, whatever the variable says
	}
	if env = strings.TrimSpace(env); env != "" {
		return []string{env}
	}
	return defaultLibs
}

// openLib opens the first candidate that loads and binds its symbols.
func openLib(paths []string) (*lib, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w (%s/%s)", ErrNotSupported, goos, goarch)
	}
	var l *lib
	tried, err := openFirst(paths, func(path string, lookup func(string) uintptr) error {
		l = &lib{path: path}
		return l.bind(lookup)
	})
	if err != nil {
		return nil, err
	}
	if l != nil {
		return l, nil
	}
	return nil, fmt.Errorf("%w: tried %s; hint: install the NVIDIA driver (it provides %s), or set KILN_CUDA_LIB to the library's path",
		ErrNoDriver, strings.Join(tried, "; "), driverFile)
}

// openFirst hands the first of paths that loads to bind (whose error ends
// the search) and returns what each failed attempt said.
func openFirst(paths []string, bind func(path string, lookup func(name string) uintptr) error) (tried []string, err error) {
	for _, p := range paths {
		h, err := dlopen(p)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		return tried, bind(p, func(name string) uintptr { return dlsym(h, name) })
	}
	return tried, nil
}

var (
	loadOnce sync.Once
	loaded   *lib
	loadErr  error
)

// driver opens the library and initialises it, once per process.
func driver() (*lib, error) {
	loadOnce.Do(func() {
		l, err := openLib(libCandidates(libEnv()))
		if err != nil {
			loadErr = err
			return
		}
		if err := l.check("cuInit", call(l.cuInit, 0)); err != nil {
			loadErr = err
			return
		}
		loaded = l
	})
	return loaded, loadErr
}
