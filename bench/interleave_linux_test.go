//go:build linux

package bench

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkRegionInterleave measures what it costs two cores to own one
// activation-sized buffer (192 channels of 28², 588 KiB) in interleaved
// regions, as a parallel step's partition gives them out: each worker,
// pinned to its own CPU, adds 1 to every float of its regions and then
// sums them, regions alternating between the workers every region
// floats. Regions are whole cache lines, so no line is shared; what the
// smaller ones cost comes from the hardware fetching lines near those a
// core touches (adjacent lines, streams, 4 KiB regions), which here the
// other core owns. An op splitting planes of H×W floats by columns gives
// each core regions of a fraction of a plane row block; one splitting
// them by channels, regions of whole planes. ns/op is one pass of both
// workers (they run concurrently).
//
// On this project's 2-vCPU Zen 5 VM (-count 2, one run): halves 94-98 µs
// a pass, 6272-float regions 104-106, 784-float regions 190-198,
// 384-float regions 288-291, 16-float regions 424. A 1×1 convolution's
// column blocks at two threads give each core such 384-float regions of
// every 784-float plane (28², four blocks, two a core); a depthwise step
// reading them by channels then reads half of every plane from the other
// core (alone at two threads, 192 channels of 28²: 30 µs a run with
// its input written by neither core, 46 µs written so).
func BenchmarkRegionInterleave(b *testing.B) {
	cpus, ok := twoCPUs()
	if !ok {
		b.Skip("needs two CPUs this process may run on")
	}
	const n = 192 * 28 * 28
	buf := lineAligned(n)
	for _, region := range []int{n / 2, 6272, 784, 384, 16} {
		b.Run(fmt.Sprintf("region=%d", region), func(b *testing.B) {
			b.SetBytes(int64(8 * n)) // every float written once, read once
			var wg sync.WaitGroup
			for w, cpu := range cpus {
				wg.Add(1)
				go func() {
					defer wg.Done()
					restore := pinTo(cpu)
					defer restore()
					var sum float32
					for range b.N {
						sum += touchRegions(buf, region, w)
					}
					sink[w*16] = sum // one cache line each
				}()
			}
			wg.Wait()
		})
	}
}

// sink keeps the workers' sums alive.
var sink [32]float32

// touchRegions adds 1 to the floats of worker w's regions of buf (every
// other region from region w), then returns their sum.
func touchRegions(buf []float32, region, w int) float32 {
	for base := w * region; base < len(buf); base += 2 * region {
		seg := buf[base:min(base+region, len(buf))]
		for i := range seg {
			seg[i]++
		}
	}
	var sum float32
	for base := w * region; base < len(buf); base += 2 * region {
		for _, v := range buf[base:min(base+region, len(buf))] {
			sum += v
		}
	}
	return sum
}

// lineAligned returns n zero floats starting on a 64-byte line.
func lineAligned(n int) []float32 {
	buf := make([]float32, n+15)
	off := int((64 - uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%64) % 64 / 4)
	return buf[off : off+n : off+n]
}

// twoCPUs returns the first two CPUs of this process's affinity mask.
func twoCPUs() ([2]int, bool) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return [2]int{}, false
	}
	var cpus [2]int
	found := 0
	for c := 0; c < len(set)*64 && found < 2; c++ {
		if set.IsSet(c) {
			cpus[found] = c
			found++
		}
	}
	return cpus, found == 2
}

// pinTo locks the calling goroutine to its thread and the thread to cpu;
// the returned func restores the thread's mask and unlocks it.
func pinTo(cpu int) (restore func()) {
	runtime.LockOSThread()
	var old, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return runtime.UnlockOSThread
	}
	one.Set(cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		return runtime.UnlockOSThread
	}
	return func() {
		_ = unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}
}
