package cuda

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestLibCandidates(t *testing.T) {
	if len(defaultLibs) == 0 {
		if libCandidates("/x/libcuda.so") != nil {
			t.Error("an unsupported platform must not try KILN_CUDA_LIB")
		}
		return
	}
	if got := libCandidates("  /opt/x/libcuda.so.1 "); !slices.Equal(got, []string{"/opt/x/libcuda.so.1"}) {
		t.Errorf("override: %v", got)
	}
	if got := libCandidates(""); !slices.Equal(got, defaultLibs) {
		t.Errorf("default: %v", got)
	}
}

func TestOpenLibMissing(t *testing.T) {
	_, err := openLib(libCandidates("/nonexistent/libcuda.so.1"))
	if err == nil {
		t.Fatal("opened a library that does not exist")
	}
	if len(defaultLibs) == 0 {
		if !errors.Is(err, ErrNotSupported) {
			t.Errorf("want ErrNotSupported, got %v", err)
		}
		return
	}
	if !errors.Is(err, ErrNoDriver) {
		t.Errorf("want ErrNoDriver, got %v", err)
	}
	for _, want := range []string{"/nonexistent/libcuda.so.1", "KILN_CUDA_LIB", "install the NVIDIA driver"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestBindGroups(t *testing.T) {
	// A driver without the graph API: core binds, graphs report
	// ErrUnavailable, and a group is never half-bound.
	l := &lib{path: "fake"}
	err := l.bind(func(name string) uintptr {
		if strings.HasPrefix(name, "cuGraph") {
			return 0
		}
		return 1
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.need(groupCore); err != nil {
		t.Errorf("core: %v", err)
	}
	if err := l.need(groupAsync); err != nil {
		t.Errorf("async: %v", err)
	}
	if err := l.need(groupGraphs); !errors.Is(err, ErrUnavailable) {
		t.Errorf("graphs: want ErrUnavailable, got %v", err)
	}
	if l.cuStreamBeginCapture != 0 || l.cuStreamEndCapture != 0 {
		t.Error("graph group half-bound")
	}
	// A missing core symbol fails the load, naming it.
	err = (&lib{path: "old"}).bind(func(name string) uintptr {
		if name == "cuMemAlloc_v2" {
			return 0
		}
		return 1
	})
	if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), "cuMemAlloc_v2") {
		t.Errorf("missing core symbol: %v", err)
	}
}

func TestSymbolsV2(t *testing.T) {
	// The bindings use the _v2 entry points wherever the driver exports
	// one (the unsuffixed ones take 32-bit sizes).
	want := map[string]bool{"cuMemAlloc_v2": true, "cuMemFree_v2": true, "cuMemcpyHtoD_v2": true, "cuMemcpyDtoH_v2": true,
		"cuMemcpyHtoDAsync_v2": true, "cuMemcpyDtoHAsync_v2": true, "cuMemcpyDtoDAsync_v2": true, "cuMemGetInfo_v2": true,
		"cuDeviceTotalMem_v2": true, "cuStreamDestroy_v2": true, "cuEventDestroy_v2": true, "cuMemAllocHost_v2": true,
		"cuDevicePrimaryCtxRelease_v2": true, "cuStreamBeginCapture_v2": true}
	seen := map[string]bool{}
	for _, s := range (&lib{}).symbols() {
		if seen[s.name] {
			t.Errorf("%s bound twice", s.name)
		}
		seen[s.name] = true
	}
	for n := range want {
		if !seen[n] {
			t.Errorf("%s not bound", n)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	var l *lib // no library: the code still names itself
	err := l.check("cuInit", resultNoDevice)
	var e *Error
	if !errors.As(err, &e) || e.Code != 100 || e.Name != "CUresult(100)" {
		t.Fatalf("%#v", err)
	}
	if !errors.Is(err, ErrNoDevice) || !strings.Contains(err.Error(), "nvidia-smi") {
		t.Errorf("no-device error %q lacks its sentinel or hint", err)
	}
	if l.check("cuInit", resultSuccess) != nil {
		t.Error("success is an error")
	}
	e = &Error{Op: "cuModuleLoadDataEx", Code: 218, Name: "CUDA_ERROR_INVALID_PTX", Text: "bad", Log: "line 3: syntax error"}
	if !strings.Contains(e.Error(), "line 3: syntax error") {
		t.Errorf("JIT log missing from %q", e)
	}
}
