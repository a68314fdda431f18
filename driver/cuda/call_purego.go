//go:build (linux || windows) && (amd64 || arm64)

package cuda

import "github.com/ebitengine/purego"

// call invokes a driver function. Callers convert pointers to uintptr in
// the argument list itself; go:uintptrescapes then keeps what they point
// to on the heap and alive until the call returns.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) result {
	r, _, _ := purego.SyscallN(fn, args...)
	return result(uint32(r))
}

// callArgs is call with the arguments in a slice the caller owns, for
// loops that must not allocate: purego keeps a variadic argument slice on
// the heap, so call allocates one per call, and passing an existing slice
// does not. Pointers in args must stay alive and unmoved by themselves
// (driver memory, or fields of heap objects the caller holds).
func callArgs(fn uintptr, args []uintptr) result {
	r, _, _ := purego.SyscallN(fn, args...)
	return result(uint32(r))
}
