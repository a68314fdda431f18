package asm

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/kilnml/kiln/ops/cpuid"
)

// EwUnary names a float32 elementwise function.
type EwUnary int

// The unary functions. The transcendental ones are within 4 ulp of the
// float64 function over all of float32 (math_accuracy_test.go), overflow
// to ±Inf and underflow to ±0 where the exact result does, and return NaN
// for NaN.
const (
	EwExp      EwUnary = iota // e^x
	EwLog                     // ln x: -Inf at ±0, NaN below 0
	EwTanh                    // tanh x
	EwSigmoid                 // 1/(1+e^-x)
	EwErf                     // erf x
	EwGelu                    // x·Φ(x) = x/2·(1+erf(x/√2))
	EwGeluTanh                // x/2·(1+tanh(√(2/π)·(x+0.044715x³)))
	EwSilu                    // x·sigmoid(x)
	EwRelu                    // x < 0 ? 0 : x (NaN stays NaN, -0 stays -0)
	EwNeg                     // -x
	EwAbs                     // |x|
	ewNumUnary
)

var ewUnaryNames = [ewNumUnary]string{"exp", "log", "tanh", "sigmoid", "erf", "gelu", "gelu_tanh", "silu", "relu", "neg", "abs"}

// String is the function's name (as in benchmark and test names).
func (op EwUnary) String() string {
	if op >= 0 && op < ewNumUnary {
		return ewUnaryNames[op]
	}
	return fmt.Sprintf("EwUnary(%d)", int(op))
}

// EwBinary names a float32 elementwise operation of two operands.
type EwBinary int

// The binary operations: + - × ÷ correctly rounded (as the float64
// reference rounded once), Max and Min NaN if either operand is NaN, with
// max(-0, +0) = +0 and min(-0, +0) = -0 like Go's max and min.
const (
	EwAdd EwBinary = iota
	EwSub
	EwMul
	EwDiv
	EwMax
	EwMin
	ewNumBinary
)

var ewBinaryNames = [ewNumBinary]string{"add", "sub", "mul", "div", "max", "min"}

// String is the operation's name.
func (op EwBinary) String() string {
	if op >= 0 && op < ewNumBinary {
		return ewBinaryNames[op]
	}
	return fmt.Sprintf("EwBinary(%d)", int(op))
}

// Kernel primitives: n elements, n a multiple of the variant's block;
// pointers valid for n elements; stream: dst is aligned to a block
// (4·block bytes: 32 for AVX2, 64 for AVX-512, what a non-temporal vector
// store needs) and the kernel may bypass the cache when storing (the Go
// twins ignore it). The methods below check all of it.
type (
	ewUnaryFunc func(dst, x *float32, n int, stream bool)
	ewVVFunc    func(dst, x, y *float32, n int, stream bool)                  // dst[i] = x[i] op y[i]
	ewVSFunc    func(dst, x *float32, s float32, n int, stream bool)          // dst[i] = x[i] op s
	ewClampFunc func(dst, x *float32, lo, hi float32, n int, stream bool)     // dst[i] = min(max(x[i], lo), hi)
	ewSVFunc    func(dst *float32, s float32, y *float32, n int, stream bool) // dst[i] = s op y[i]
)

// ewStreamBytes is the output size from which the assembly stores
// around the cache, as the runtime's memmove does from 1 MiB: an output
// that large would only evict the inputs and be written back anyway.
const ewStreamBytes = 1 << 20

// EwKernels is one implementation of the elementwise kernels. An assembly
// variant runs whole blocks of elements; the few left over run through the
// Go twins, which compute the same bits.
type EwKernels struct {
	// Name is what reports show: "avx512", "avx2", "neon" (assembly) or
	// "go" (pure Go).
	Name string
	// Feature is the ops/cpuid variant the kernels need.
	Feature cpuid.Variant

	block int // elements per assembly step (1 for Go)
	unary [ewNumUnary]ewUnaryFunc
	vv    [ewNumBinary]ewVVFunc
	vs    [ewNumBinary]ewVSFunc
	sv    [ewNumBinary]ewSVFunc
	clamp ewClampFunc // nil: Clamp runs Max, then Min
	// affine, if set, runs AffinePlanes in one call (ew_affine.go); nil:
	// its Mul, Add and Relu a plane at a time.
	affine ewAffineFunc
}

// ewGo is the pure-Go variant: the twins.
var ewGo = &EwKernels{Name: "go", Feature: cpuid.Generic, block: 1,
	unary: ewUnaryGo, vv: ewVVGo, vs: ewVSGo, sv: ewSVGo, clamp: ewClampGo}

// EwVariants lists the variants this CPU and build can run, best first,
// ending with "go". KILN_CPU does not shorten it (tests run them all).
func EwVariants() []*EwKernels { return ewFamily.variants() }

// BestEw is the variant kernels should use: the best one cpuid.Allows
// (which honours KILN_CPU), chosen once.
func BestEw() *EwKernels { return ewFamily.best() }

// ErrEwAlias is returned when an output partly overlaps an input: the
// kernels allow an output to be exactly an input (in place) or disjoint
// from it.
var ErrEwAlias = errors.New("asm: elementwise output partly overlaps an input")

// ewCheck validates an output against an input of the same length.
func ewCheck(dst, x []float32) error {
	if len(dst) != len(x) {
		return fmt.Errorf("asm: elementwise lengths %d and %d differ", len(dst), len(x))
	}
	if len(x) > 0 && &dst[0] != &x[0] && overlap32(dst, x) {
		return ErrEwAlias
	}
	return nil
}

// split divides an output into a head and a tail for the Go twins and a
// middle of whole blocks for the assembly: the head is empty unless the
// output is large enough to stream, when it runs up to the first
// boundary of a block's bytes (the alignment of a vector store).
func (k *EwKernels) split(dst []float32) (head, body int, stream bool) {
	n := len(dst)
	if k.block == 1 {
		return 0, n, false
	}
	if 4*n >= ewStreamBytes {
		if a, align := uintptr(unsafe.Pointer(&dst[0])), uintptr(4*k.block); a%4 == 0 {
			head, stream = int(-a%align/4), true
		}
	}
	body = n - head
	return head, body - body%k.block, stream
}

// Unary sets dst[i] = op(x[i]). dst may be x.
func (k *EwKernels) Unary(op EwUnary, dst, x []float32) error {
	if op < 0 || op >= ewNumUnary {
		return fmt.Errorf("asm: unknown %v", op)
	}
	if err := ewCheck(dst, x); err != nil {
		return err
	}
	h, m, stream := k.split(dst)
	if h > 0 {
		ewUnaryGo[op](&dst[0], &x[0], h, false)
	}
	e, w := h+m, len(x)-k.block // the body's end; the last block's start
	if e == len(x) || k.block == 1 || k.block > ewMaxBlock || w < h {
		if m > 0 {
			k.unary[op](&dst[h], &x[h], m, stream)
		}
		if e < len(x) {
			ewUnaryGo[op](&dst[e], &x[e], len(x)-e, false)
		}
		return nil
	}
	// The tail runs on the kernel too, as the input's last block, which
	// overlaps the body's end: the same lanes' operations, so the same
	// bits as the twin, where the twins of the transcendental functions
	// computing the tails took 5% of EfficientNet-B0's time (its
	// epilogues run on rows of 7, 14 and 28 floats). In place, the body
	// overwrites the overlap's inputs first, so they are kept and put
	// back before the last block runs.
	inPlace := &dst[0] == &x[0]
	var keep [ewMaxBlock]float32
	if inPlace {
		copy(keep[:], x[w:e])
	}
	if m > 0 {
		k.unary[op](&dst[h], &x[h], m, stream)
	}
	if inPlace {
		copy(dst[w:e], keep[:])
	}
	k.unary[op](&dst[w], &x[w], k.block, false)
	return nil
}

// ewMaxBlock is the largest block of any variant (AVX-512's 16 floats).
const ewMaxBlock = 16

// Binary sets dst[i] = x[i] op y[i]. dst may be x or y.
func (k *EwKernels) Binary(op EwBinary, dst, x, y []float32) error {
	if op < 0 || op >= ewNumBinary {
		return fmt.Errorf("asm: unknown %v", op)
	}
	if err := ewCheck(dst, x); err != nil {
		return err
	}
	if err := ewCheck(dst, y); err != nil {
		return err
	}
	h, m, stream := k.split(dst)
	if h > 0 {
		ewVVGo[op](&dst[0], &x[0], &y[0], h, false)
	}
	if m > 0 {
		k.vv[op](&dst[h], &x[h], &y[h], m, stream)
	}
	if e := h + m; e < len(x) {
		ewVVGo[op](&dst[e], &x[e], &y[e], len(x)-e, false)
	}
	return nil
}

// BinaryScalar sets dst[i] = x[i] op s. dst may be x.
func (k *EwKernels) BinaryScalar(op EwBinary, dst, x []float32, s float32) error {
	if op < 0 || op >= ewNumBinary {
		return fmt.Errorf("asm: unknown %v", op)
	}
	if err := ewCheck(dst, x); err != nil {
		return err
	}
	h, m, stream := k.split(dst)
	if h > 0 {
		ewVSGo[op](&dst[0], &x[0], s, h, false)
	}
	if m > 0 {
		k.vs[op](&dst[h], &x[h], s, m, stream)
	}
	if e := h + m; e < len(x) {
		ewVSGo[op](&dst[e], &x[e], s, len(x)-e, false)
	}
	return nil
}

// Clamp sets dst[i] = min(max(x[i], lo), hi) with Go's max and min (a
// NaN in x or in a bound gives NaN; -0 orders below +0), in one pass
// where the variant has the kernel: a conv's ReLU6 epilogue (Clip 0, 6)
// ran Max and Min as two calls a tile row, a fifth of MobileNetV2's
// time. dst may be x.
func (k *EwKernels) Clamp(dst, x []float32, lo, hi float32) error {
	if k.clamp == nil {
		if err := k.BinaryScalar(EwMax, dst, x, lo); err != nil {
			return err
		}
		return k.BinaryScalar(EwMin, dst, dst, hi)
	}
	if err := ewCheck(dst, x); err != nil {
		return err
	}
	h, m, stream := k.split(dst)
	if h > 0 {
		ewClampGo(&dst[0], &x[0], lo, hi, h, false)
	}
	if m > 0 {
		k.clamp(&dst[h], &x[h], lo, hi, m, stream)
	}
	if e := h + m; e < len(x) {
		ewClampGo(&dst[e], &x[e], lo, hi, len(x)-e, false)
	}
	return nil
}

// ScalarBinary sets dst[i] = s op y[i]. dst may be y.
func (k *EwKernels) ScalarBinary(op EwBinary, dst []float32, s float32, y []float32) error {
	if op < 0 || op >= ewNumBinary {
		return fmt.Errorf("asm: unknown %v", op)
	}
	if err := ewCheck(dst, y); err != nil {
		return err
	}
	h, m, stream := k.split(dst)
	if h > 0 {
		ewSVGo[op](&dst[0], s, &y[0], h, false)
	}
	if m > 0 {
		k.sv[op](&dst[h], s, &y[h], m, stream)
	}
	if e := h + m; e < len(y) {
		ewSVGo[op](&dst[e], s, &y[e], len(y)-e, false)
	}
	return nil
}
