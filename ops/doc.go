// Package ops is kiln's kernel catalogue: for every op kind and dtype a
// reference kernel in plain Go (simple, obviously correct, always
// compiled), the flags the planner needs (may the output overwrite an
// input?) and the tolerance a faster kernel must meet against it.
//
// Kernels are made in two steps. Prepare runs once per node at compile
// time: it reads the node's attributes and shapes and precomputes what the
// loop needs (strides, window offsets, scratch). The Kernel it returns then
// runs on tensor views (into an arena, or freshly allocated) as often as
// needed, without allocating.
//
// Interpret evaluates a whole graph node by node with the reference
// kernels, allocating freely: it is the oracle every later stage (fusion,
// planning, assembly kernels, GPU backends) is tested against.
package ops
