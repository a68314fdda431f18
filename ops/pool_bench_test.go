package ops

import (
	"fmt"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// BenchmarkPool runs the fast MaxPool2D and AvgPool2D on the shapes CNNs
// spend their pooling time in — ResNet's stem max pool (3×3, stride 2,
// pad 1 over 64×112²) first — on 1 and 2 workers. Pooling streams its
// input once and does little arithmetic, so it reports GB/s of bytes read
// and written and the ratio to a plain copy moving as many bytes on as
// many workers, the two run alternately and compared by their median
// times (pairedMedians: thread CPU time at one worker, wall time at two;
// the host is shared).
func BenchmarkPool(b *testing.B) {
	for _, c := range []struct {
		name  string
		in    []int
		max   bool
		k, s  int
		pad   int
		count bool
	}{
		{"resnet-stem-max3s2", []int{1, 64, 112, 112}, true, 3, 2, 1, false},
		{"max3s2-nopad", []int{1, 64, 111, 111}, true, 3, 2, 0, false},
		{"max3s1", []int{1, 192, 28, 28}, true, 3, 1, 1, false},
		{"max2s2", []int{1, 64, 112, 112}, true, 2, 2, 0, false},
		{"avg3s2", []int{1, 64, 112, 112}, false, 3, 2, 1, true},
	} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/%dx%dx%d/threads=%d", c.name, c.in[1], c.in[2], c.in[3], threads), func(b *testing.B) {
				g := graph.New()
				x := g.Input("x", tensor.F32, c.in...)
				o := graph.PoolOpts{Kernel: []int{c.k, c.k}, Strides: []int{c.s, c.s},
					Pads: []int{c.pad, c.pad, c.pad, c.pad}, CountPad: c.count}
				n := g.MaxPool2D(x, o)
				if !c.max {
					n = g.AvgPool2D(x, o)
				}
				op, ref, moved, _ := benchAgainstCopy(b, n, threads)
				b.ReportMetric(op*1e3, "ms")
				b.ReportMetric(float64(moved)/op/1e9, "GB/s")
				b.ReportMetric(float64(moved)/ref/1e9, "copyGB/s")
				b.ReportMetric(ref/op, "×copy")
			})
		}
	}
}
