// Package exec lowers a planned graph into a Program — a flat slice of
// steps, each a prepared kernel with its input and output views already
// resolved into one arena — and runs it. It also owns the Backend
// interface that devices implement (the CPU here; GPU drivers register
// their own) and the persistent worker pool that CPU kernels use to split
// work across cores. A program on several workers measures, over its
// first runs and now and then after, whether its runs are faster with
// every loop inline on the calling goroutine, and runs so where they are
// (tune.go); a program with few weights also prepares each step for one
// worker (Step.Serial), which its inline runs use. Pool.MeasureLoops
// counts where the pool's parallel loops spend their time (the workers'
// time in loop bodies and the caller's wait at the loops' ends), which
// `kiln bench --steps` reports on two or more workers.
package exec
