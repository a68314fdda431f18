package exec

import (
	"fmt"
	"testing"
)

// BenchmarkForHandoff times loops of two chunks on two workers, from
// empty chunks (all handoff) to ones near half a one-row product of a
// small model (about 20 µs).
func BenchmarkForHandoff(b *testing.B) {
	for _, work := range []int{0, 2000, 20000} {
		b.Run(fmt.Sprint("floats=", work), func(b *testing.B) {
			r := NewPool(2).NewRunner()
			x := make([]float32, 2*work)
			body := func(lo, hi int) {
				for i := lo * work; i < hi*work; i++ {
					x[i] = x[i]*0.5 + 1
				}
			}
			for b.Loop() {
				r.For(2, 1, body)
			}
		})
	}
}
