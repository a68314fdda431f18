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
	"github.com/kilnml/kiln/ops/cpuid"
)

func runInfo(args []string) error {
	writeInfo(os.Stdout)
	return nil
}

func writeInfo(w io.Writer) {
	in := cpuid.Detect()
	fmt.Fprintf(w, "kiln %s (%s, %s/%s)\n", kiln.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "cpu: %s, %d cores, %d threads\n", in.Model, in.Cores, in.Threads)
	fmt.Fprintf(w, "simd: %s\n", simdFeatures(in.Features))
	forced := ""
	if in.Forced != "" {
		forced = " (KILN_CPU=" + in.Forced + ")"
	}
	fmt.Fprintf(w, "kernel variants: supported %v, chosen %s%s\n", in.Supported, in.Chosen, forced)
	writeFamilies(w, asm.Families())
	fmt.Fprintf(w, "worker pool: %d threads (KILN_THREADS)\n", exec.DefaultPool().Workers())
	fmt.Fprintf(w, "devices: %s\n", strings.Join(exec.Kinds(), ", "))
}

// writeFamilies lists each CPU kernel family of the registry with the
// variants this CPU runs, best first, the chosen one starred:
//
//	kernel families (variants this CPU runs, best first; * chosen):
//	  gemm         *avx512 avx2 go
//	  winograd     avx2 (optional, follows gemm; none chosen)
func writeFamilies(w io.Writer, fs []asm.Family) {
	fmt.Fprintf(w, "kernel families (variants this CPU runs, best first; * chosen):\n")
	for _, f := range fs {
		names := make([]string, len(f.Variants))
		for i, v := range f.Variants {
			names[i] = v.Name
			if i == f.Chosen {
				names[i] = "*" + v.Name
			}
		}
		if len(names) == 0 {
			names = []string{"none"}
		}
		var notes []string
		if f.Optional {
			notes = append(notes, "optional")
		}
		if f.Follows != "" {
			notes = append(notes, "follows "+f.Follows)
		}
		note := strings.Join(notes, ", ")
		if f.Chosen < 0 {
			note += "; none chosen"
		}
		if note != "" {
			note = " (" + note + ")"
		}
		fmt.Fprintf(w, "  %-12s %s%s\n", f.Name, strings.Join(names, " "), note)
	}
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
