// Package tensor holds kiln's element types (DType), shapes with numpy
// broadcasting, host tensors (a dtype, a shape and little-endian bytes) and
// the conversions between dtypes, including F16 and BF16 with
// round-to-nearest-even.
//
// A Tensor is a plain value: its Data slice may be a view into a larger
// buffer (kiln's arena), so kernels read and write tensors without copies.
package tensor
