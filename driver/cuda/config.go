package cuda

import "os"

// Knobs, read when the driver is first used:
//
//	KILN_CUDA_LIB   path of the driver library to open instead of the
//	                platform's default (libcuda.so.1, libcuda.so, the WSL
//	                path; nvcuda.dll)
//
// Test knobs (CI sets them so a missing tool fails instead of skipping):
//
//	KILN_TEST_REQUIRE_LIBCUDA=1  TestNoDevice needs the driver library
//	KILN_TEST_REQUIRE_PTXAS=1    the assembly tests need ptxas (KILN_PTXAS
//	                             names it; else PATH, /opt/cuda-deb/usr/bin)
//	KILN_TEST_REQUIRE_GPU=1      the GPU tests need a device
func libEnv() string { return os.Getenv("KILN_CUDA_LIB") }
