// Command gonum times gonum's pure-Go SGEMM (blas32.Gemm over
// gonum.org/v1/gonum/blas/gonum) on the shapes bench/gemm/compare.sh
// passes, printing one line per measurement window:
//
//	gonum <shape> <threads> <GFLOP/s> <GFLOP/cpu-s>
//
// It lives in its own module so gonum never enters kiln's go.mod. gonum
// splits large products over GOMAXPROCS goroutines, so the script sets
// GOMAXPROCS to the thread count.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/gonum"
)

func main() {
	shapes := flag.String("shapes", "sq256:256x256x256", "comma-separated name:MxKxN")
	budget := flag.Duration("budget", 300*time.Millisecond, "time per shape")
	windows := flag.Int("windows", 7, "most measurement windows per shape")
	flag.Parse()
	blas32.Use(gonum.Implementation{})
	threads := runtime.GOMAXPROCS(0)
	for _, s := range strings.Split(*shapes, ",") {
		name, m, k, n, err := parseShape(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		r := rand.New(rand.NewPCG(1, 2))
		mat := func(rows, cols int) blas32.General {
			d := make([]float32, rows*cols)
			for i := range d {
				d[i] = float32(2*r.Float64() - 1)
			}
			return blas32.General{Rows: rows, Cols: cols, Stride: cols, Data: d}
		}
		a, b, c := mat(m, k), mat(k, n), mat(m, n)
		run := func() { blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, a, b, 0, c) }
		flops := 2 * float64(m) * float64(n) * float64(k)
		for _, g := range measure(run, flops, *budget, *windows) {
			fmt.Printf("gonum %s %d %.3f %.3f\n", name, threads, g[0], g[1])
		}
	}
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
