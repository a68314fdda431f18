// Package cuda runs kiln programs on NVIDIA GPUs without cgo and without
// the CUDA toolkit: the driver library (libcuda.so.1, nvcuda.dll) is opened
// at run time through purego, and kernels are PTX text emitted by package
// ptx (or supplied by the user) and JIT-compiled by the driver.
//
// Importing the package registers the "cuda" backend with exec (and so
// kiln.CUDA(i)); nothing else happens at import time. The library is
// opened and cuInit called on first use, and a missing library or device
// is an error with a hint, never a panic.
//
// Layers, kept apart: lib*.go and call*.go are the thin typed bindings
// (symbol table, one check for every CUresult); device.go, memory.go,
// module.go and stream.go wrap them in Go types; lower.go (no GPU
// needed) turns a planned graph into PTX launches, each node through
// kdesc.Describe and ptx.Emit, and backend.go implements exec.Backend.
//
// Threads: a CUDA context is current per OS thread. Every call sequence
// runs under Device.do, which locks the goroutine to its thread and makes
// the device's primary context current first. That costs one cheap
// cuCtxSetCurrent per sequence and lets any goroutine (clones running
// concurrently included) use any device, instead of funnelling every call
// through one dedicated goroutine.
//
// GEMMs: a plain MatMul or Gemm (no fused epilogue; F32, or F16/BF16 in
// and out) runs on cuBLAS when libcublas loads (cuBLAS 11 or 12, found
// lazily like the driver; KILN_CUBLAS_LIB names it, KILN_CUBLAS=off
// declines it), else on kiln's PTX GEMM. cuBLAS calls share the program's
// stream with its launches; Stats shows "MatMul/cublas" or "MatMul/ptx".
//
// Graph replay: NewGraphModel captures a compiled graph's forward pass
// (launches, copies and cuBLAS calls) into a CUDA graph and replays it
// with one cuGraphLaunch, through pinned staging buffers (RunInPlace
// allocates nothing; RunTimed reports the launch's GPU time).
//
// Handles: a program implements exec.Resident (resident.go). A GPU
// handle lives where plan.Residence puts it (its input's arena bytes, or
// device memory of its own) and is fed by cuMemcpyDtoDAsync calls queued
// on the program's stream around its steps, or by none when the plan
// computed the fed output in the handle's bytes (kiln.Options.Feeds).
// The copies are part of every run, so graph capture records them; a
// GraphModel copies the handles it captures and stages neither their
// inputs nor the outputs feeding them. Programs count the bytes they copy
// between host and device (exec.TransferCounter).
//
// MoE residency (moe*.go): a program implements exec.MoEPlacer. An F32
// OpMoE layer whose expert weights are params of its own keeps them out
// of the weight region: the host holds every expert's weights, and the
// device either a full copy (every expert resident; clones share it) or,
// under a residency mask, compact weights of the resident experts with a
// remap, placed at the next run after the mask or a weight changed. A
// split layer's forward reads its inputs back, queues the resident
// experts' kernel, computes the others on the host (ops.MoEHost) while
// the GPU runs, and uploads their sum for a second kernel to add. Each
// layer's ids are copied aside on the device for kiln's capture and
// stats. NewGraphModel refuses a program with a split layer.
//
// Step timing: with exec.StepTimer's SetStepTimes on, a program records
// an event after every step and adds the GPU time between neighbours
// (`kiln bench --device cuda --steps N`).
//
// GPU checks: tests that need a device skip without one.
// gpu-check.sh, run on a machine with an NVIDIA GPU (with Go, or with
// binaries from `gpu-check.sh build DIR`), runs them all with skips made
// failures, the demo encoder and the ONNX test models against the CPU,
// the benchmark models with kiln and eager PyTorch side by side, the GPU
// benchmarks (GEMM TFLOP/s PTX vs cuBLAS, elementwise vs copy bandwidth,
// demo-encoder latency with and without replay) and compute-sanitizer's
// racecheck and memcheck, writing its logs and summary to $OUT.
package cuda
