// Command kiln times kiln's SGEMM (ops/asm.Gemm, the best variant this CPU
// allows) on the shapes bench/gemm/compare.sh passes, over a pool of
// -threads persistent workers of the executor's own pool (exec.Pool), so
// what is timed is what a compiled model runs, printing one line per
// measurement window:
//
//	kiln <shape> <threads> <GFLOP/s> <GFLOP/cpu-s>          B packed on every run, as BLAS does
//	kiln-packed <shape> <threads> <GFLOP/s> <GFLOP/cpu-s>   B pre-packed once, as for weights
//	peak fma 1 <GFLOP/s> <GFLOP/cpu-s>                      register-only FMAs on one core (asm.FMAPeak)
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/ops/asm"
)

func main() {
	shapes := flag.String("shapes", "sq256:256x256x256", "comma-separated name:MxKxN")
	threads := flag.Int("threads", 1, "worker threads")
	budget := flag.Duration("budget", 300*time.Millisecond, "time per shape and mode")
	windows := flag.Int("windows", 7, "most measurement windows per shape and mode")
	flag.Parse()
	if *threads < 1 {
		fail(fmt.Errorf("-threads %d, want at least 1", *threads))
	}
	par := asm.Par{For: exec.NewPool(*threads).NewRunner().For, Threads: *threads}
	v := asm.BestGemm()
	fmt.Fprintf(os.Stderr, "kiln: variant %s, %d threads\n", v.Name, *threads)
	// One core's FMA peak, measured between the same windows as the
	// products, so table.py can print the fraction of it they reach.
	const peakIters = 1 << 16
	peakFlops, _ := asm.FMAPeak(0)
	if f, _ := asm.FMAPeak(1); f > 0 {
		peakFlops = f * peakIters
		for _, gf := range measure(func() { asm.FMAPeak(peakIters) }, peakFlops, *budget, *windows) {
			fmt.Printf("peak fma 1 %.3f %.3f\n", gf[0], gf[1])
		}
	}
	for _, s := range strings.Split(*shapes, ",") {
		name, m, k, n, err := parseShape(s)
		if err != nil {
			fail(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		mat := func(size int) []float32 {
			d := make([]float32, size)
			for i := range d {
				d[i] = float32(2*r.Float64() - 1)
			}
			return d
		}
		a, b, c := mat(m*k), mat(k*n), mat(m*n)
		g, err := asm.NewGemm(asm.GemmConfig{M: m, N: n, K: k, Alpha: 1}, v, par)
		if err != nil {
			fail(err)
		}
		var pb asm.PackedB
		if err := g.PackB(&pb, b); err != nil {
			fail(err)
		}
		flops := 2 * float64(m) * float64(n) * float64(k)
		for _, mode := range []struct {
			label string
			args  *asm.GemmArgs
		}{{"kiln", &asm.GemmArgs{A: a, B: b, C: c}}, {"kiln-packed", &asm.GemmArgs{A: a, PackedB: &pb, C: c}}} {
			run := func() {
				if err := g.Run(mode.args); err != nil {
					fail(err)
				}
			}
			for _, gf := range measure(run, flops, *budget, *windows) {
				fmt.Printf("%s %s %d %.3f %.3f\n", mode.label, name, *threads, gf[0], gf[1])
			}
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kiln:", err)
	os.Exit(2)
}

// measure warms up, then times windows of at least 20 ms (or one call)
// until the budget or the window count runs out. Each window gives
// GFLOP/s by the wall clock and per second of process CPU time (0 where
// the OS gives no CPU time); the second is unmoved by time slices lost to
// other processes.
func measure(run func(), flops float64, budget time.Duration, windows int) [][2]float64 {
	t0 := time.Now()
	run()
	one := time.Since(t0)
	inner := max(1, int(20*time.Millisecond/max(one, time.Microsecond)))
	var out [][2]float64
	start := time.Now()
	for len(out) < windows && (len(out) == 0 || time.Since(start) < budget) {
		t, c := time.Now(), processCPU()
		for range inner {
			run()
		}
		g, cg := flops*float64(inner)/time.Since(t).Seconds()/1e9, 0.0
		if dc := processCPU() - c; dc > 0 {
			cg = flops * float64(inner) / dc.Seconds() / 1e9
		}
		out = append(out, [2]float64{g, cg})
	}
	return out
}

func parseShape(s string) (name string, m, k, n int, err error) {
	name, dims, ok := strings.Cut(s, ":")
	parts := strings.Split(dims, "x")
	if !ok || len(parts) != 3 {
		return "", 0, 0, 0, fmt.Errorf("bad shape %q (want name:MxKxN)", s)
	}
	var d [3]int
	for i, p := range parts {
		if d[i], err = strconv.Atoi(p); err != nil || d[i] < 1 {
			return "", 0, 0, 0, fmt.Errorf("bad shape %q", s)
		}
	}
	return name, d[0], d[1], d[2], nil
}
