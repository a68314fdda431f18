// Package safetensors reads and writes the safetensors weight format and
// sets a compiled graph's params from it.
//
// A file is an 8-byte little-endian header length, a JSON header mapping
// each tensor name to its dtype, shape and [begin, end) byte offsets in the
// data section that follows, and that data. Open memory-maps the file (on
// Unix), so tensors are views into the page cache until Close.
//
// The header is checked before any tensor is used: valid JSON, known
// fields, names unique, offsets inside the data section, every tensor's
// byte length equal to shape × dtype size, and tensors neither
// overlapping nor leaving holes (as the format requires). Tensors whose
// dtype kiln lacks (I16, U16, U32, U64, 8-bit floats) are listed with
// their file dtype but cannot be read.
package safetensors
