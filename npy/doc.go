// Package npy reads and writes NumPy's .npy format (versions 1.0, 2.0 and
// 3.0 of the header) for kiln's host tensors: model inputs and outputs on
// the command line and in tests.
//
// Supported descriptors, mapped to kiln dtypes: '<f4' F32, '<f2' F16,
// '<f8' F64, '|i1' I8, '|u1' U8, '<i4' I32, '<i8' I64, '|b1' Bool. Big-endian
// files ('>f4', ...) are byte-swapped on reading; files are always written
// little-endian. Only C (row-major) order is accepted: a Fortran-ordered
// array is an error, not silently transposed.
//
// NumPy has no bfloat16, so BF16 uses a documented convention: it is
// written as '<u2' holding the raw bfloat16 bits, and '<u2' is read back as
// BF16. In NumPy the bits widen to float32 with
// (a.astype(np.uint32) << 16).view(np.float32). kiln has no uint16 dtype, so
// a genuine uint16 array is also read as BF16 bits.
package npy
