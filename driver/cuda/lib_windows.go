//go:build windows && (amd64 || arm64)

package cuda

import (
	"runtime"

	"golang.org/x/sys/windows"
)

const (
	goos, goarch = runtime.GOOS, runtime.GOARCH
	driverFile   = "nvcuda.dll"
)

var defaultLibs = []string{"nvcuda.dll"}

// dlopen loads a DLL: the bare driver name only from System32 (no
// search-path hijacking), an explicit KILN_CUDA_LIB path as given.
// purego has no Dlopen on Windows, hence LoadLibrary.
func dlopen(path string) (uintptr, error) {
	var h windows.Handle
	var err error
	if path == driverFile {
		h, err = windows.LoadLibraryEx(path, 0, windows.LOAD_LIBRARY_SEARCH_SYSTEM32)
	} else {
		h, err = windows.LoadLibrary(path)
	}
	return uintptr(h), err
}

func dlsym(h uintptr, name string) uintptr {
	p, err := windows.GetProcAddress(windows.Handle(h), name)
	if err != nil {
		return 0
	}
	return p
}
