//go:build linux && (amd64 || arm64)

package cuda

import (
	"runtime"

	"github.com/ebitengine/purego"
)

const (
	goos, goarch = runtime.GOOS, runtime.GOARCH
	driverFile   = "libcuda.so.1"
)

// defaultLibs: the versioned soname the driver package installs, the
// development symlink, and where WSL2 mounts the Windows driver's library.
var defaultLibs = []string{"libcuda.so.1", "libcuda.so", "/usr/lib/wsl/lib/libcuda.so.1"}

func dlopen(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

func dlsym(h uintptr, name string) uintptr {
	p, err := purego.Dlsym(h, name)
	if err != nil {
		return 0
	}
	return p
}
