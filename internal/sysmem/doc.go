// Package sysmem reads how much memory this process may use: the
// machine's physical memory, or the cgroup's limit where one is set
// (containers), whichever is smaller. kiln's sessions refuse to compile
// a model whose arena and weights would not fit (kiln.WithMemoryLimit),
// so that a hostile or mistaken model gets an error instead of the
// runtime's unrecoverable out-of-memory exit.
package sysmem
