// Package conformance holds the backend × op matrix, TestBackendOpMatrix
// (ggml's test-backend-ops, in Go): every op in ops' catalogue, built
// into small graphs, runs on every backend kiln has — the CPU session
// (its fast kernels), the CUDA lowering on the PTX emulator (internal/ptxemu)
// and the Metal lowering on the host (internal/mslhost) — and each
// result is checked against ops' reference interpreter with the op's
// catalogue tolerance. An op a backend does not lower is listed, with
// the reason, in the test's table; an op neither lowered nor listed
// fails the test. Its test files say how to add an op.
//
// The Metal column needs a C++ compiler (g++ or $CXX); without one it is
// skipped and the log says so, unless KILN_TEST_REQUIRE_CXX=1 (CI) makes
// that a failure; on Windows its absentOK table says why it never runs.
//
// The package has no code of its own: it exists so that one test may
// import the root package, both GPU lowerings and their emulators
// without an import cycle.
package conformance
