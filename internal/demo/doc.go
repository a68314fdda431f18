// Package demo builds kiln's built-in demo model: a MiniLM-sized BERT-style
// text encoder with seeded random weights, used by `kiln demo`, the
// benchmarks and the end-to-end tests. No files are downloaded.
package demo
