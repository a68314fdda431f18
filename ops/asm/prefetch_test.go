package asm

import (
	"math"
	"testing"
)

// TestPrefetchForWrite runs the depthwise variants' write prefetch over
// slices of every length up to a few lines, at every alignment of a
// line, and checks that it changed nothing (it is a hint: an encoding
// that stored would show here; TestBF16Encodings checks the bytes).
func TestPrefetchForWrite(t *testing.T) {
	ran := false
	for _, k := range depthwiseVariants() {
		if k.prefetchW == nil {
			continue
		}
		ran = true
		buf := make([]float32, 128)
		for i := range buf {
			buf[i] = float32(i) + 0.5
		}
		for off := range 16 {
			for n := range 50 {
				prefetchForWrite(k.prefetchW, buf[off:][:n])
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
		t.Skip("no depthwise variant here prefetches for writing")
	}
}
