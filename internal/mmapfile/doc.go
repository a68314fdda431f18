// Package mmapfile gives read-only access to a whole file as one byte
// slice: memory-mapped on Unix, so that multi-gigabyte weight files cost
// page cache instead of heap, and read into memory elsewhere. The model
// readers (onnx, safetensors) hand out views into that slice, so it must
// stay open for as long as those views are used.
package mmapfile
