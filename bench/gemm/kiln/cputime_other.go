//go:build !linux

package main

import "time"

// processCPU is not measured here; the CPU-time column stays empty.
func processCPU() time.Duration { return 0 }
