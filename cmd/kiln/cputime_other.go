//go:build !unix

package main

import "time"

// processCPUTime is not measured here: bench leaves out its CPU line.
func processCPUTime() (time.Duration, bool) { return 0, false }
