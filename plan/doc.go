// Package plan decides where every value of a graph lives in memory.
//
// Make takes a verified graph and produces a Plan: a schedule (the order
// steps run in), the lifetime of every value in schedule positions, and a
// Slot per node giving its region and byte offset. Two regions exist:
//
//   - Weights: params and constants, each in its own 64-byte aligned slot,
//     never reused, so that clones of a compiled graph can share them
//     read-only.
//   - Arena: graph inputs, intermediates and outputs. Buffers whose
//     lifetimes do not overlap share bytes; placement is greedy best fit
//     (largest buffer first, into the smallest gap left by the buffers it
//     is live with), which lands within a few percent of the lower bound
//     (the largest set of simultaneously live bytes) on transformer-like
//     graphs.
//
// Three kinds of aliasing avoid buffers altogether. Views (Reshape,
// Squeeze, Unsqueeze, Flatten) share their parent's bytes, so the
// executor runs no kernel for them. In-place steps write their output
// over input 0 when the op allows it and nothing reads that buffer
// afterwards (see Make for the exact rule). With Options.JoinConcat, the
// steps computing a channel Concat's inputs write them at their places
// in its buffer, and the Concat runs nothing either (join.go); Free
// names every step a backend may skip.
//
// The planner is deterministic: its result depends only on the graph,
// Options and two debugging variables, read once per process (FromEnv),
// that Make applies on top of Options: KILN_PLAN=naive switches placement
// off (every value gets its own buffer, back to back) and KILN_DEBUG=guard
// pads every buffer with a guard zone for the executor's canaries. No
// kernels run and nothing is allocated for the arena itself. Check
// re-derives the lifetimes from the graph and verifies that no two live
// buffers overlap; tests call it on every plan, and callers may too.
// Report prints the arena size against the naive layout and the lower
// bound.
package plan
