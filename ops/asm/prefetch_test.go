package asm

import (
	"math"
	"testing"
)

// TestPrefetchForWrite runs the depthwise and GEMM variants' write
// prefetch over slices of every length up to a few lines, at every
// alignment of a line, and checks that it changed nothing (it is a hint:
// an encoding that stored would show here; TestBF16Encodings checks the
// bytes).
func TestPrefetchForWrite(t *testing.T) {
	type kernel struct {
		name string
		pw   func(p *float32, lines int)
	}
	var ks []kernel
	for _, k := range depthwiseVariants() {
		ks = append(ks, kernel{"depthwise " + k.name, k.prefetchW})
	}
	for _, v := range GemmVariants() {
		ks = append(ks, kernel{"gemm " + v.Name, v.prefetchW})
	}
	ran := false
	for _, k := range ks {
		if k.pw == nil {
			continue
		}
		ran = true
		buf := make([]float32, 128)
		for i := range buf {
			buf[i] = float32(i) + 0.5
		}
		for off := range 16 {
			for n := range 50 {
				prefetchForWrite(k.pw, buf[off:][:n])
			}
		}
		for i, v := range buf {
			if math.Float32bits(v) != math.Float32bits(float32(i)+0.5) {
				t.Fatalf("%s: element %d changed to %v", k.name, i, v)
			}
		}
	}
	prefetchForWrite(nil, make([]float32, 3)) // no kernel: nothing to do
	if !ran {
		t.Skip("no variant here prefetches for writing")
	}
}

// TestPrefetchLines checks the line count of a run of floats against
// counting the lines it touches one float at a time.
func TestPrefetchLines(t *testing.T) {
	for p := uintptr(4096); p < 4096+64; p += 4 {
		for n := 1; n < 70; n++ {
			seen, lines := map[uintptr]bool{}, 0
			for i := range n {
				if l := (p + uintptr(4*i)) / 64; !seen[l] {
					seen[l] = true
					lines++
				}
			}
			if got := prefetchLines(p, n); got != lines {
				t.Fatalf("prefetchLines(%d, %d) = %d, want %d", p, n, got, lines)
			}
		}
	}
}
