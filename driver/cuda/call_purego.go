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
