// Package fuse holds kiln's graph-to-graph passes. Run applies the enabled
// passes in order and verifies the graph after each one, so a broken pass
// is caught at the pass that broke it. Every pass must keep the graph's
// results equal to the unfused graph's (the reference interpreter is the
// oracle in tests).
package fuse
