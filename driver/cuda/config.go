package cuda

import (
	"os"
	"strings"
)

// Knobs, read when the driver is first used:
//
//	KILN_CUDA_LIB   path of the driver library to open instead of the
//	                platform's default (libcuda.so.1, libcuda.so, the WSL
//	                path; nvcuda.dll)
//	KILN_CUBLAS     "off": plain GEMMs run kiln's PTX kernel even where
//	                cuBLAS loads (read at every Compile, so benchmarks
//	                can compare both)
//	KILN_CUBLAS_LIB path of the cuBLAS library instead of the defaults
//	                (libcublas.so.13, .so.12, .so.11, .so;
//	                cublas64_13.dll, _12, _11)
//
// Test knobs (CI sets them so a missing tool fails instead of skipping):
//
//	KILN_TEST_REQUIRE_LIBCUDA=1  TestNoDevice needs the driver library
//	KILN_TEST_REQUIRE_PTXAS=1    the assembly tests need ptxas (KILN_PTXAS
//	                             names it; else PATH, /opt/cuda-deb/usr/bin)
//	KILN_TEST_REQUIRE_GPU=1      the GPU tests need a device
//	KILN_TEST_REQUIRE_CUBLAS=1   TestGPUCublas needs cuBLAS (gpu-check.sh
//	                             sets it where the library is installed)
func libEnv() string { return os.Getenv("KILN_CUDA_LIB") }

func blasLibEnv() string { return os.Getenv("KILN_CUBLAS_LIB") }

func blasOff() bool { return strings.EqualFold(strings.TrimSpace(os.Getenv("KILN_CUBLAS")), "off") }
