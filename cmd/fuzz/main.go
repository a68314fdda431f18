// Command fuzz is kiln's differential fuzzer. In graph mode it builds
// random graphs over kiln's op set, compiles each with fusion on and off,
// both planners, guard zones around every buffer (KILN_DEBUG=guard) and
// fast or reference kernels, runs them and compares every output with the
// reference interpreter on the unfused graph; a mismatch is a failure
// unless every compiled step, rerun on the reference's values of its
// inputs, matches its own reference (then the graph amplified legitimate
// rounding, see reanchor). The run repeats under every
// KILN_CPU variant the machine supports, each in a child process (the
// variant is chosen once per process). In kernel mode it runs the
// assembly kernels of ops/asm against their Go twins on random lengths,
// offsets and values.
//
// Every case prints its seed; -seed S -n 1 replays one. Failures are
// bucketed by stage and minimised; the exit status is 1 if any case
// failed.
//
//	go run ./cmd/fuzz -duration 60s
//	go run ./cmd/fuzz -mode kernels -duration 30s
//	go run ./cmd/fuzz -seed 1234 -n 1 -v
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/cpuid"
)

func main() {
	var (
		mode     = flag.String("mode", "graphs", "graphs or kernels")
		seed     = flag.Uint64("seed", 0, "first seed (0: random); case i uses seed+i")
		n        = flag.Int("n", 0, "number of cases per variant (0: until -duration)")
		duration = flag.Duration("duration", 30*time.Second, "time budget for the whole run")
		steps    = flag.Int("steps", 12, "graph steps per case")
		special  = flag.Bool("special", true, "feed NaN, Inf, denormal, huge and tiny values now and then")
		verbose  = flag.Bool("v", false, "print every case")
		child    = flag.Bool("child", false, "run in this process only (the variant is KILN_CPU's)")
		minTries = flag.Int("minimise", 200, "most checks spent minimising one failure")
	)
	noGuard := flag.Bool("noguard", false, "plan without guard zones")
	flag.Parse()
	if *noGuard {
		guardBytes = 0
	}
	if *seed == 0 {
		*seed = rand.Uint64() >> 1
	}
	if !*child && *mode == "graphs" { // kernel mode runs every variant in-process
		os.Exit(parent(*seed, *duration))
	}
	deadline := time.Now().Add(*duration)
	var st stats
	switch *mode {
	case "graphs":
		st = fuzzGraphs(*seed, *n, deadline, *steps, *special, *verbose, *minTries)
	case "kernels":
		st = fuzzKernels(*seed, *n, deadline, *verbose)
	default:
		fmt.Fprintf(os.Stderr, "fuzz: unknown -mode %q\n", *mode)
		os.Exit(2)
	}
	st.print(cpuid.Chosen())
	if st.failed > 0 {
		os.Exit(1)
	}
}

// parent reruns this command once per supported KILN_CPU variant, each
// with its share of the budget, and fails if any child failed.
func parent(seed uint64, d time.Duration) int {
	variants := cpuid.Detect().Supported
	rc := 0
	for _, v := range variants {
		args := []string{"-child", fmt.Sprintf("-seed=%d", seed), fmt.Sprintf("-duration=%s", d/time.Duration(len(variants)))}
		// The flags set, as -name=value: copying os.Args and dropping
		// "-seed" would leave the value of "-seed 1" behind, and the child's
		// flag parsing would stop at it (ignoring a later -n).
		flag.Visit(func(f *flag.Flag) {
			if f.Name != "seed" && f.Name != "duration" && f.Name != "child" {
				args = append(args, fmt.Sprintf("-%s=%s", f.Name, f.Value))
			}
		})
		fmt.Printf("== KILN_CPU=%s seed=%d\n", v, seed)
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "KILN_CPU="+string(v), "KILN_DEBUG=guard")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Printf("== KILN_CPU=%s: %v\n", v, err)
			rc = 1
		}
	}
	return rc
}

// stats counts cases and failures by stage.
type stats struct {
	cases, failed int
	buckets       map[string][]string
}

func (s *stats) fail(stage, line string) {
	if s.buckets == nil {
		s.buckets = map[string][]string{}
	}
	s.failed++
	s.buckets[stage] = append(s.buckets[stage], line)
}

func (s *stats) print(v cpuid.Variant) {
	fmt.Printf("fuzz [%s]: %d cases, %d failed (%d ill-conditioned mismatches passed, see reanchor)\n", v, s.cases, s.failed, illConditioned)
	stages := make([]string, 0, len(s.buckets))
	for k := range s.buckets {
		stages = append(stages, k)
	}
	sort.Strings(stages)
	for _, k := range stages {
		fmt.Printf("  %s: %d\n", k, len(s.buckets[k]))
		for _, l := range s.buckets[k] {
			fmt.Printf("    %s\n", l)
		}
	}
}

func fuzzGraphs(seed uint64, n int, deadline time.Time, steps int, special, verbose bool, minTries int) stats {
	var st stats
	for i := 0; (n == 0 || i < n) && (n > 0 || time.Now().Before(deadline)); i++ {
		c := Case{Seed: seed + uint64(i), Steps: steps}
		st.cases++
		f := Check(c, special)
		if verbose {
			fmt.Printf("case %s: %v\n", c, errOrOK(f))
		}
		if f == nil {
			continue
		}
		fmt.Printf("FAIL %s: %v\n", c, f)
		m, mf := Minimise(c, f, special, minTries)
		line := fmt.Sprintf("%s -> minimised %s: %v", c, m, mf)
		if g, err := Build(m); err == nil {
			line += "\n" + indent(graph.Dump(g))
		}
		fmt.Printf("  minimised: %s\n", line)
		st.fail(f.Stage, fmt.Sprintf("-seed %d -steps %d -n 1   (%s)", c.Seed, c.Steps, firstLine(mf.Error())))
	}
	return st
}

func errOrOK(f *Failure) string {
	if f == nil {
		return "ok"
	}
	return f.Error()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func indent(s string) string {
	return "      " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n      ")
}
