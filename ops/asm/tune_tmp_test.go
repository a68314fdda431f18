package asm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0) // CLOCK_THREAD_CPUTIME_ID
	return time.Duration(ts.Nano())
}

// TestTuneTmp: round-robin over blockings, thread-CPU-time GFLOP/s medians.
func TestTuneTmp(t *testing.T) {
	if os.Getenv("TUNE") == "" {
		t.Skip()
	}
	runtime.LockOSThread()
	var s [3]int
	fmt.Sscanf(os.Getenv("TUNE"), "%d,%d,%d", &s[0], &s[1], &s[2])
	m, k, n := s[0], s[1], s[2]
	v := BestGemm()
	blks := [][3]int{{256, 288, 2048}}
	if os.Getenv("BLK") == "1" {
		blks = blks[:1]
	}
	r := rand.New(rand.NewPCG(1, 2))
	A, B, C := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for i := range A { A[i] = gemmRand(r) }
	for i := range B { B[i] = gemmRand(r) }
	fl := 2 * float64(m) * float64(n) * float64(k)
	inner := max(1, int(3e7/fl))
	res := make([][]float64, len(blks))
	gs := make([]*Gemm, len(blks))
	for i, b := range blks {
		gs[i], _ = NewGemm(GemmConfig{M: m, N: n, K: k, Alpha: 1}, v.withBlocking(b[0], b[1], b[2]), Par{})
	}
	args := &GemmArgs{A: A, B: B, C: C}
	for range 21 {
		for i := range blks {
			c0 := threadCPU()
			for range inner { gs[i].Run(args) }
			res[i] = append(res[i], fl*float64(inner)/(threadCPU()-c0).Seconds()/1e9)
		}
	}
	for i, b := range blks {
		sort.Float64s(res[i])
		t.Logf("M%d K%d N%d kc%3d mc%3d nc%4d: median %.1f  p90 %.1f GFLOP/cpu-s", m, k, n, b[0], b[1], b[2], res[i][len(res[i])/2], res[i][len(res[i])*9/10])
	}
}

func TestMicroTmp(t *testing.T) {
	if os.Getenv("TUNE") == "" {
		t.Skip()
	}
	runtime.LockOSThread()
	v := BestGemm()
	kc := 256
	a := make([]float32, kc*6*24)
	b := make([]float32, kc*16)
	c := make([]float32, 6*16)
	var res, res2 []float64
	for range 25 {
		c0 := threadCPU()
		for range 40000 {
			v.micro(kc, &a[0], &b[0], &c[0], 16, 1)
		}
		res = append(res, 40000*float64(kc)*192/(threadCPU()-c0).Seconds()/1e9)
		c0 = threadCPU()
		for range 40000 / 24 {
			for ir := range 24 {
				v.micro(kc, &a[ir*kc*6], &b[0], &c[0], 16, 1)
			}
		}
		res2 = append(res2, float64(40000/24*24)*float64(kc)*192/(threadCPU()-c0).Seconds()/1e9)
	}
	sort.Float64s(res)
	sort.Float64s(res2)
	t.Logf("micro in L1: median %.1f p90 %.1f; A streamed from L2 (24 panels): median %.1f p90 %.1f", res[len(res)/2], res[len(res)*9/10], res2[len(res2)/2], res2[len(res2)*9/10])
}


func TestMicroCtxTmp(t *testing.T) {
	if os.Getenv("TUNE") == "" {
		t.Skip()
	}
	runtime.LockOSThread()
	v := BestGemm()
	kc, ldc := 256, 1024
	a := make([]float32, kc*6*48)
	b := make([]float32, kc*16*64)
	c := make([]float32, 288*ldc)
	res := map[string][]float64{}
	names := []string{"L1 C", "C walk rows", "C walk rows+B panels"}
	for range 21 {
		for ni, nm := range names {
			c0 := threadCPU()
			calls := 0
			for rep := range 8 {
				for jr := range 64 {
					for ir := range 48 {
						ci := 0
						bi := 0
						if ni >= 1 {
							ci = (ir*6)*ldc + jr*16
						}
						if ni == 2 {
							bi = jr * kc * 16
						}
						_ = rep
						v.micro(kc, &a[ir*kc*6], &b[bi], &c[ci], ldc, 1)
						calls++
					}
				}
			}
			res[nm] = append(res[nm], float64(calls)*float64(kc)*192/(threadCPU()-c0).Seconds()/1e9)
		}
	}
	for _, nm := range names {
		sort.Float64s(res[nm])
		t.Logf("%-22s median %.1f p90 %.1f", nm, res[nm][10], res[nm][18])
	}
}
