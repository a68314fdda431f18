package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/plan"
)

const benchUsage = `usage: kiln bench model.onnx [--device D] [--threads N] [--runs N] [--warmup N] [--steps N] [--input name=file.npy ...] [--shape name=d0,d1,...]

Compiles an ONNX model for --device (cpu, cuda, cuda:N or metal; cpu
if not given), runs it --warmup times untimed (on the CPU also while the
program still measures whether its steps run inline, its first 14 runs),
collects the garbage (as testing.B does), then runs it --runs times timed,
and prints the median, p90, min and mean latency and the throughput. A progress bar is drawn on stderr when it is a terminal
and the timed runs should take over two seconds (--progress on|off forces
it).

--steps N then runs the model --runs more times timing every kernel
step, and lists the N costliest steps by mean time per run: their share
of the summed step time and the cumulative share, the op, the node, its
output dtype and shape, and the kernel variant; then the steps' total
against the median latency (which also counts copying inputs in and
outputs out, and was measured over other runs). On a GPU (--device cuda)
a step's time is the GPU time between events recorded around it on the
stream. With --json the list is the "steps" array. On two or more CPU
workers it also says where the workers' time in the parallel loops went
over those runs (exec.Pool.MeasureLoops): the loops' wall time, the
calling thread's and each other worker's time in loop bodies, and the
time the caller waited at the loops' ends for the other workers' last
chunks (--json: "loops"); a worker busier than a one-thread run's share
points at memory or cores shared with other work, a long wait at uneven
or late chunks.

Inputs without --input get random values of the right shape and dtype:
floats uniform in [-1, 1); bools true or false with equal odds; integers
uniform in [0, n), where n is the smallest size of the axis the input
indexes in any Gather reading it (through reshapes, casts and the like):
token ids stay inside the embedding table. Integer inputs that index
nothing (attention masks, token types) get 0 or 1.
`

// benchResult is what --json prints.
type benchResult struct {
	Model      string  `json:"model"`
	Device     string  `json:"device"`
	Threads    int     `json:"threads,omitempty"` // CPU only
	Inline     bool    `json:"inline,omitempty"`  // CPU: the program runs its loops inline (measured faster)
	Runs       int     `json:"runs"`
	Warmup     int     `json:"warmup"`
	MedianMs   float64 `json:"median_ms"`
	P90Ms      float64 `json:"p90_ms"`
	MinMs      float64 `json:"min_ms"`
	MeanMs     float64 `json:"mean_ms"`
	RunsPerSec float64 `json:"runs_per_s"`
	Batch      int     `json:"batch"`
	CompileMs  float64 `json:"compile_ms"`
	// CPUMs is the process's CPU time (user + system, every thread) per
	// timed run, where the platform reports it: on a shared machine it
	// moves far less with other jobs' load than the wall-clock latency.
	CPUMs float64 `json:"cpu_ms,omitempty"`
	// With --steps: the costliest steps and the total of all, per run.
	Steps        []stepCost `json:"steps,omitempty"`
	StepsTotalMs float64    `json:"steps_total_ms,omitempty"`
	// With --steps on several CPU workers: their parallel loops.
	Loops *loopProfile `json:"loops,omitempty"`
}

func runBench(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	var inputs listFlag
	fs.Var(&inputs, "input", "an input's value, `name=file.npy` (repeatable; random otherwise)")
	runs := fs.Int("runs", 20, "timed runs")
	warmup := fs.Int("warmup", 3, "untimed runs first")
	steps := fs.Int("steps", 0, "then time every step over --runs more runs and list the `N` costliest (0: off)")
	seed := fs.Uint64("seed", 1, "seed for random inputs")
	progress := fs.String("progress", "auto", "progress bar on stderr: auto, on or off")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	cpuProfile := fs.String("cpuprofile", "", "write a pprof CPU profile of the timed runs to `file`")
	fs.Usage = func() { fmt.Fprint(stderr, benchUsage, "\nflags:\n"); fs.PrintDefaults() }
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	path, err := modelArg("bench", pos)
	if err != nil {
		return err
	}
	switch {
	case *runs < 1:
		return usagef("--runs %d: want at least 1", *runs)
	case *warmup < 0:
		return usagef("--warmup %d: want 0 or more", *warmup)
	case *steps < 0:
		return usagef("--steps %d: want 0 (off) or more", *steps)
	case *progress != "auto" && *progress != "on" && *progress != "off":
		return usagef("--progress %q: want auto, on or off", *progress)
	}
	files, err := inputSpecs(inputs)
	if err != nil {
		return err
	}
	given, err := readInputs(files)
	if err != nil {
		return err
	}
	t0 := time.Now()
	c, err := mf.loadModel(path, given)
	if err != nil {
		return err
	}
	defer c.cg.Close()
	compileTime := time.Since(t0)
	in, err := feeds(c, given, *seed)
	if err != nil {
		return err
	}
	ti := typed(in)
	dev, _ := parseDevice(mf.device) // loadModel has checked it
	threads := mf.threads
	if threads == 0 && dev == kiln.CPU {
		threads = exec.DefaultPool().Workers()
	}
	var warm time.Duration
	for range *warmup {
		t := time.Now()
		if _, err := c.cg.RunTyped(ti...); err != nil {
			return err
		}
		warm += time.Since(t)
	}
	// A CPU program on several workers measures over its first runs
	// whether its loops run faster inline (exec.Program.Tuning): those
	// runs are warm-up too, untimed.
	inline := false
	if x, err := c.cg.Executable(); err == nil {
		if tu, ok := x.(interface {
			Tuning() bool
			Inline() bool
		}); ok {
			for tu.Tuning() {
				if _, err := c.cg.RunTyped(ti...); err != nil {
					return err
				}
			}
			inline = tu.Inline()
		}
	}
	// A collection before the timed runs, as testing.B does: the
	// compile's garbage is otherwise swept and scavenged in the
	// background during them, which took a worker's core (the DCGAN
	// generator at two threads: 0.41 ms a run without, 0.21 with; at one
	// thread 0.39 and 0.34).
	runtime.GC()
	bar := newProgress(stderr, *runs, *progress == "on" ||
		*progress == "auto" && isTerminal(stderr) && *warmup > 0 && warm/time.Duration(*warmup)*time.Duration(*runs) > 2*time.Second)
	times := make([]time.Duration, *runs)
	stopProfile := func() {}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop() // on an error return; stop is idempotent
		stopProfile = stop
	}
	cpu0, cpuOK := processCPUTime()
	for i := range times {
		t := time.Now()
		if _, err := c.cg.RunTyped(ti...); err != nil {
			bar.done()
			return err
		}
		times[i] = time.Since(t)
		bar.update(i+1, times[:i+1])
	}
	bar.done()
	cpu1, _ := processCPUTime()
	stopProfile() // the profile covers the timed runs only, not --steps'
	var sp stepProfile
	if *steps > 0 {
		var pool *exec.Pool
		if dev == kiln.CPU {
			pool = mf.cpuPool()
		}
		if sp, err = timeSteps(c.cg, ti, *runs, *steps, pool); err != nil {
			return err
		}
	}

	r := benchResult{Model: path, Device: dev.String(), Threads: threads, Inline: inline, Runs: *runs, Warmup: *warmup, CompileMs: ms(compileTime)}
	sorted := slices.Clone(times)
	slices.Sort(sorted)
	var total time.Duration
	for _, t := range times {
		total += t
	}
	r.MedianMs = ms(median(sorted))
	r.P90Ms = ms(sorted[int(math.Ceil(0.9*float64(len(sorted))))-1])
	r.MinMs = ms(sorted[0])
	r.MeanMs = ms(total) / float64(len(times))
	r.RunsPerSec = float64(len(times)) / total.Seconds()
	if len(in) > 0 && in[0].info.Shape.Rank() > 0 {
		r.Batch = in[0].info.Shape[0]
	}
	if cpuOK {
		r.CPUMs = ms(cpu1-cpu0) / float64(len(times))
	}
	r.Steps, r.StepsTotalMs, r.Loops = sp.top, sp.totalMs, sp.loops // zero, so left out, without --steps
	if *asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	var ins []string
	for _, f := range in {
		ins = append(ins, fmt.Sprintf("%s %v%v (%s)", f.info.Name, f.info.DType, f.info.Shape, f.source()))
	}
	p := c.cg.Plan()
	fmt.Fprintf(stdout, "model %s: compiled in %v, %d steps, arena %s, weights %s\n", path,
		compileTime.Round(time.Millisecond), c.cg.Stats().Steps, plan.HumanBytes(p.ArenaBytes), plan.HumanBytes(p.WeightBytes))
	fmt.Fprintf(stdout, "inputs: %s\n", strings.Join(ins, ", "))
	where := fmt.Sprintf("threads %d", threads)
	if inline {
		where += " (loops inline: measured faster than the pool)"
	}
	if dev != kiln.CPU {
		where = "device " + dev.String()
	}
	fmt.Fprintf(stdout, "%s, %d warm-up runs, %d timed runs\n", where, *warmup, *runs)
	fmt.Fprintf(stdout, "latency: median %.4g ms, p90 %.4g ms, min %.4g ms, mean %.4g ms\n", r.MedianMs, r.P90Ms, r.MinMs, r.MeanMs)
	fmt.Fprintf(stdout, "throughput: %.4g runs/s", r.RunsPerSec)
	if r.Batch > 1 {
		fmt.Fprintf(stdout, " (%.4g items/s at batch %d, the first dim of %s)", r.RunsPerSec*float64(r.Batch), r.Batch, in[0].info.Name)
	}
	fmt.Fprintln(stdout)
	if cpuOK {
		fmt.Fprintf(stdout, "cpu: %.4g ms per run (process CPU time over the timed runs, all threads)\n", r.CPUMs)
	}
	if *steps > 0 {
		sp.print(*runs, r.MedianMs)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// median of a sorted list: the mean of the middle two for even lengths.
func median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// isTerminal reports whether w is a character device (a terminal), where
// a redrawn progress line belongs; logs and pipes get none.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress draws "[#####.....] 12/20  eta 3s" on one redrawn line.
type progress struct {
	w     io.Writer
	total int
	on    bool
	last  time.Time
}

func newProgress(w io.Writer, total int, on bool) *progress {
	return &progress{w: w, total: total, on: on}
}

func (p *progress) update(done int, times []time.Duration) {
	if !p.on || done < p.total && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	const width = 30
	fill := width * done / p.total
	var sum time.Duration
	for _, t := range times {
		sum += t
	}
	eta := sum / time.Duration(len(times)) * time.Duration(p.total-done)
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d  eta %v   ", strings.Repeat("#", fill), strings.Repeat(".", width-fill),
		done, p.total, eta.Round(100*time.Millisecond))
}

func (p *progress) done() {
	if p.on {
		fmt.Fprintln(p.w)
	}
}

// startCPUProfile profiles the process into path until stop is first called
// (go tool pprof reads it; kernels show under their Go or assembly names).
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	var once sync.Once
	return func() { once.Do(func() { pprof.StopCPUProfile(); f.Close() }) }, nil
}
