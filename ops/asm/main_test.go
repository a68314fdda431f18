package asm

import (
	"os"
	"testing"
)

// TestMain runs the package's tests with convolutions of any size split
// over the workers they are given (convParMinFlops), so that the small
// geometries the tests use take the parallel paths; TestConvWorkers
// checks the threshold itself.
func TestMain(m *testing.M) {
	convParMinFlops = 1
	os.Exit(m.Run())
}
