package metal

import (
	"errors"
	"os"
)

// Knobs, read when a program is lowered:
//
//	KILN_METAL_GEMM=tiled   use the tiled GEMM even on Apple7+ GPUs
//	                        (default: simdgroup_matrix where supported)
//
// Test knobs:
//
//	KILN_TEST_REQUIRE_METAL=1  the device tests fail instead of skipping
//	                           when no Metal device is present
func forceTiled() bool { return os.Getenv("KILN_METAL_GEMM") == "tiled" }

// ErrNotSupported is returned off darwin, where there is no Metal.
var ErrNotSupported = errors.New("metal: not supported on this system (Metal needs macOS on an Apple or AMD GPU); use kiln.CPU or driver/cuda")
