package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/ops/cpu"
)

func runInfo(args []string) error {
	writeInfo(os.Stdout)
	return nil
}

func writeInfo(w io.Writer) {
	in := cpu.Detect()
	fmt.Fprintf(w, "kiln %s (%s, %s/%s)\n", kiln.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "cpu: %s, %d cores, %d threads\n", in.Model, in.Cores, in.Threads)
	fmt.Fprintf(w, "simd: %s\n", simdFeatures(in.Features))
	forced := ""
	if in.Forced != "" {
		forced = " (KILN_CPU=" + in.Forced + ")"
	}
	fmt.Fprintf(w, "kernel variants: supported %v, chosen %s%s\n", in.Supported, in.Chosen, forced)
	fmt.Fprintf(w, "kernels: gemm %s, elementwise %s, rows %s\n", asm.BestGemm().Name, asm.BestEw().Name, asm.BestRows().Name)
	fmt.Fprintf(w, "worker pool: %d threads (KILN_THREADS)\n", exec.DefaultPool().Workers())
	fmt.Fprintf(w, "devices: %s\n", strings.Join(exec.Kinds(), ", "))
}

// simdFeatures keeps the vector-unit features out of cpuid's long list.
func simdFeatures(all []string) string {
	var keep []string
	for _, f := range all {
		for _, p := range []string{"SSE4", "AVX", "FMA", "F16C", "ASIMD", "SVE", "FP16", "BF16", "DOTPROD", "VNNI"} {
			if strings.HasPrefix(f, p) {
				keep = append(keep, f)
				break
			}
		}
	}
	if keep == nil {
		return "none reported"
	}
	return strings.Join(keep, " ")
}
