// Package cuda runs kiln programs on NVIDIA GPUs without cgo and without
// the CUDA toolkit: the driver library (libcuda.so.1, nvcuda.dll) is opened
// at run time through purego, and kernels are PTX text emitted by package
// ptx (or supplied by the user) and JIT-compiled by the driver.
//
// Importing the package registers the "cuda" backend with exec (and so
// kiln.CUDA(i)); nothing else happens at import time. The library is
// opened and cuInit called on first use, and a missing library or device
// is an error with a hint, never a panic.
//
// Layers, kept apart: lib*.go and call*.go are the thin typed bindings
// (symbol table, one check for every CUresult), device.go to launch.go
// wrap them in Go types, backend.go and lower.go implement exec.Backend.
//
// Threads: a CUDA context is current per OS thread. Every call sequence
// runs under Device.do, which locks the goroutine to its thread and makes
// the device's primary context current first. That costs one cheap
// cuCtxSetCurrent per sequence and lets any goroutine (clones running
// concurrently included) use any device, instead of funnelling every call
// through one dedicated goroutine.
package cuda
