package ops

import "testing"

// TestColdWeightsThreshold: programs whose weights far exceed the caches
// (DenseNet-121's 31 MiB) take their kernels' weights as cold at each
// run; programs of a few MiB (SqueezeNet's 4.7) and unknown sizes do not.
func TestColdWeightsThreshold(t *testing.T) {
	for _, c := range []struct {
		bytes int
		want  bool
	}{{0, false}, {4_700_000, false}, {coldWeightBytes, false}, {coldWeightBytes + 1, true}, {31 << 20, true}} {
		if got := coldWeights(Env{WeightBytes: c.bytes}); got != c.want {
			t.Errorf("WeightBytes %d: cold %v, want %v", c.bytes, got, c.want)
		}
	}
}
