package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kilnml/kiln/ops/asm"
)

// probe is what cores prints.
type probe struct {
	FMA1       float64 `json:"fma_1t_gflops"`
	FMA2       float64 `json:"fma_2t_gflops_per_thread"`
	FMARatio   float64 `json:"fma_ratio"`
	RTTNs      float64 `json:"rtt_ns"`
	Interleave float64 `json:"interleave_ratio"`
	Read1      float64 `json:"read_1t_gbs"`
	Read2      float64 `json:"read_2t_gbs"`
	Cores      string  `json:"cores"`
	FMAVariant string  `json:"fma_variant"`
}

// fmaIters is each FMA window's iterations: 3 GFLOP, about 14 ms on a Zen 5
// core with AVX-512 (0.8 GFLOP with AVX2).
const fmaIters = 4_000_000

func main() {
	if runtime.NumCPU() < 2 {
		fmt.Fprintln(os.Stderr, "cores: one logical CPU: nothing to compare")
		os.Exit(1)
	}
	runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 2))
	var p probe
	if f, v := asm.FMAPeak(1); f == 0 {
		fmt.Fprintln(os.Stderr, "cores: no FMA loop for this CPU")
		os.Exit(1)
	} else {
		p.FMAVariant = string(v)
	}
	// Best of three windows each: the question is what the cores can do,
	// not what other tenants left of them in one window.
	for range 3 {
		p.FMA1 = max(p.FMA1, fmaRate(1))
		p.FMA2 = max(p.FMA2, fmaRate(2))
	}
	p.FMARatio = p.FMA2 / p.FMA1
	p.RTTNs = roundTrip()
	p.Interleave = interleaveRatio()
	p.Read1, p.Read2 = readRate(1), readRate(2)
	p.Cores = placement(p.FMARatio)
	if err := json.NewEncoder(os.Stdout).Encode(p); err != nil {
		fmt.Fprintln(os.Stderr, "cores:", err)
		os.Exit(1)
	}
}

// placement names the cores two threads ran on from the per-thread FMA
// rate of two at once over one alone: "two" from 0.75 up, else "one"
// (hardware threads of one core share its FMA units: about 0.5).
func placement(fmaRatio float64) string {
	if fmaRatio >= 0.75 {
		return "two"
	}
	return "one"
}

// fmaRate runs the FMA loop on threads OS threads at once and returns the
// GFLOP/s of each (their mean).
func fmaRate(threads int) float64 {
	var wg sync.WaitGroup
	start := make(chan struct{})
	secs := make([]float64, threads)
	flops := 0.0
	for i := range threads {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			<-start
			t := time.Now()
			f, _ := asm.FMAPeak(fmaIters)
			secs[i] = time.Since(t).Seconds()
			if i == 0 {
				flops = f
			}
		})
	}
	close(start)
	wg.Wait()
	sum := 0.0
	for _, s := range secs {
		sum += flops / s / 1e9
	}
	return sum / float64(threads)
}

// roundTrip is the median over trials of a cache line's round trip
// between two OS threads (on a 2-CPU machine the scheduler puts two
// busy threads on its two CPUs).
func roundTrip() float64 {
	const trips, trials = 20000, 5
	var rtts []float64
	for range trials {
		var line atomic.Int64
		var wg sync.WaitGroup
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for i := int64(1); i <= trips; i++ {
				for line.Load() != 2*i-1 {
				}
				line.Store(2 * i)
			}
		})
		runtime.LockOSThread()
		t := time.Now() // the partner's start, amortised over the trips
		for i := int64(1); i <= trips; i++ {
			line.Store(2*i - 1)
			for line.Load() != 2*i {
			}
		}
		rtts = append(rtts, float64(time.Since(t).Nanoseconds())/trips)
		runtime.UnlockOSThread()
		wg.Wait()
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2]
}

// The interleave probe's tensors: 64 planes of 56×56 floats (ResNet's
// first stage), passes over six of them in turn as a model's steps pass
// over its arena.
const (
	ilPlanes, ilRows, ilCols = 64, 56, 56
	ilTensors, ilPasses      = 6, 500
	ilRounds                 = 3
)

// interleaveRatio is the median time of a pass in which two threads each
// read one tensor's rows and write the next's, thread w rows [w·28,
// w·28+28) of every plane (as a row-split step over NCHW data hands each
// worker), over that of the same work on tensors of their own (each
// thread its own six), the two alternated in rounds (the host's state
// changes within minutes). The first puts the threads' rows side by side
// in every plane, the second never: where lines between cores are slow,
// the boundaries cost each pass, whatever the steps' shares.
func interleaveRatio() float64 {
	var shared, own []float64
	for range ilRounds {
		shared = append(shared, ilPass(func(w, t int, bufs [2][][]float32) ([]float32, []float32, int, int) {
			return bufs[0][t%ilTensors], bufs[0][(t+1)%ilTensors], w * ilRows / 2, (w + 1) * ilRows / 2
		})...)
		own = append(own, ilPass(func(w, t int, bufs [2][][]float32) ([]float32, []float32, int, int) {
			return bufs[w][t%ilTensors], bufs[w][(t+1)%ilTensors], w * ilRows / 2, (w + 1) * ilRows / 2
		})...)
	}
	return median(shared) / median(own)
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// ilPass runs ilPasses passes on two threads, in step (a barrier before
// each), pick naming each thread's source and destination and its rows,
// and returns both threads' pass times.
func ilPass(pick func(w, t int, bufs [2][][]float32) (src, dst []float32, r0, r1 int)) []float64 {
	var bufs [2][][]float32
	for i := range bufs {
		for range ilTensors {
			bufs[i] = append(bufs[i], make([]float32, ilPlanes*ilRows*ilCols))
		}
	}
	var arrived atomic.Int64
	var wg sync.WaitGroup
	var times [2][]float64
	for w := range 2 {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for t := range ilPasses {
				arrived.Add(1)
				for arrived.Load() < int64(2*(t+1)) {
				}
				src, dst, r0, r1 := pick(w, t, bufs)
				start := time.Now()
				for c := range ilPlanes {
					o := c * ilRows * ilCols
					s, d := src[o+r0*ilCols:o+r1*ilCols], dst[o+r0*ilCols:o+r1*ilCols]
					for i, v := range s {
						if v < 0 { // (not max: its NaN and ±0 rules make the loop compute-bound)
							v = 0
						}
						d[i] = v + 1
					}
				}
				times[w] = append(times[w], time.Since(start).Seconds())
			}
		})
	}
	wg.Wait()
	return append(times[0], times[1]...)
}

// readMiB is each thread's buffer in the read-bandwidth probe: four times
// a Zen 5 CCD's 32 MiB L3, so that its passes read memory.
const readMiB = 128

// readRate is the memory read bandwidth, GB/s in all, of threads OS
// threads each reading a buffer of its own at once (vector max reduction,
// asm.RowKernels.Max), each thread's best of three passes. Each thread
// touches its buffer first, so its pages sit on that thread's memory
// node.
func readRate(threads int) float64 {
	k := asm.BestRows()
	var wg sync.WaitGroup
	ready, start := make(chan struct{}, threads), make(chan struct{})
	best := make([]float64, threads)
	for i := range threads {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			x := make([]float32, readMiB<<18)
			for j := range x {
				x[j] = float32(j & 7)
			}
			ready <- struct{}{}
			<-start
			for range 3 {
				t := time.Now()
				k.Max(x)
				if s := time.Since(t).Seconds(); best[i] == 0 || s < best[i] {
					best[i] = s
				}
			}
		})
	}
	for range threads {
		<-ready
	}
	close(start)
	wg.Wait()
	sum := 0.0
	for _, s := range best {
		sum += float64(readMiB<<20) / s / 1e9
	}
	return sum
}
