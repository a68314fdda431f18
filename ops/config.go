package ops

import "os"

// Configuration knobs of package ops (documented in doc.go), read from
// the environment when kernels are prepared:
//
//	KILN_BF16  "off": weights given as BF16 (SetParamTyped) multiply in
//	           float32 like any other; by default a MatMul or Gemm keeps
//	           them in bf16 where the CPU has AVX512_BF16
func bf16WeightsOn() bool { return os.Getenv("KILN_BF16") != "off" }
