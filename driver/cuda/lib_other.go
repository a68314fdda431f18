//go:build !((linux || windows) && (amd64 || arm64))

package cuda

import "runtime"

const (
	goos, goarch = runtime.GOOS, runtime.GOARCH
	driverFile   = "the NVIDIA driver"
)

// defaultLibs is empty: openLib then answers ErrNotSupported (macOS has no
// CUDA driver; other systems are not wired up).
var defaultLibs []string

func dlopen(path string) (uintptr, error) { return 0, ErrNotSupported }

func dlsym(h uintptr, name string) uintptr { return 0 }

// call never reaches a driver here: no library ever loads.
func call(fn uintptr, args ...uintptr) result { return resultNotSupported }

// callArgs never reaches a driver here either.
func callArgs(fn uintptr, args []uintptr) result { return resultNotSupported }
