package cuda

import (
	"math"
	"unsafe"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// cuBLAS enum values (cublas_api.h, library_types.h).
const (
	blasOpN        = 0  // CUBLAS_OP_N
	blasOpT        = 1  // CUBLAS_OP_T
	blasCompute32F = 68 // CUBLAS_COMPUTE_32F: f32 accumulation, no TF32
	blasAlgoAuto   = -1 // CUBLAS_GEMM_DEFAULT
)

// blasType is the cudaDataType of a dtype cuBLAS GEMMs take.
var blasType = map[tensor.DType]int{tensor.F32: 0, tensor.F16: 2, tensor.BF16: 14}

// gemmArgs are the arguments of cublasGemmStridedBatchedEx for a
// row-major GEMM. cuBLAS is column-major, and a row-major M×N result is
// the column-major N×M matrix Cᵀ = Bᵀ·Aᵀ: cuBLAS's A is kiln's B and its
// B is kiln's A, with m and n swapped. Strides are in elements.
type gemmArgs struct {
	transA, transB      int // ops on cuBLAS's A (kiln's B) and B (kiln's A)
	m, n, k             int
	lda, ldb, ldc       int
	strideA, strideB    int
	strideC, batch      int
	typeA, typeB, typeC int
	alpha               float32
}

// blasGemm maps a GEMM descriptor to cuBLAS arguments, or reports false
// when cuBLAS cannot run it as one strided-batched call: an epilogue
// (bias, activation, residual), operand dtypes cuBLAS does not pair, an
// operand whose rows and columns are both strided, batch strides that are
// not one stride over the flattened batch, or sizes past int32.
func blasGemm(g *kdesc.Gemm) (gemmArgs, bool) {
	if g.HasC || g.Act != graph.OpInvalid || g.HasRes || g.M <= 0 || g.N <= 0 || g.K <= 0 {
		return gemmArgs{}, false
	}
	if !blasTypes(g.A, g.B, g.Out) {
		return gemmArgs{}, false
	}
	a := gemmArgs{m: g.N, n: g.M, k: g.K, ldc: g.N, strideC: g.M * g.N, batch: 1, alpha: g.Alpha,
		typeA: blasType[g.B], typeB: blasType[g.A], typeC: blasType[g.Out]}
	var ok1, ok2, ok3, ok4 bool
	// cuBLAS's A is N×K with (n, k) at n·BSn + k·BSk; its B is K×M with
	// (k, m) at k·ASk + m·ASm.
	a.transA, a.lda, ok1 = blasOperand(g.N, g.K, g.BSn, g.BSk)
	a.transB, a.ldb, ok2 = blasOperand(g.K, g.M, g.ASk, g.ASm)
	for _, d := range g.Batch {
		a.batch *= d
	}
	a.strideA, ok3 = flatStride(g.Batch, g.BBatch)
	a.strideB, ok4 = flatStride(g.Batch, g.ABatch)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return gemmArgs{}, false
	}
	for _, v := range []int{a.m, a.n, a.k, a.lda, a.ldb, a.ldc, a.batch} {
		if v > math.MaxInt32 {
			return gemmArgs{}, false
		}
	}
	return a, true
}

// blasTypes reports whether cublasGemmEx with f32 compute takes these
// dtypes: both operands alike, the result alike or F32.
func blasTypes(a, b, out tensor.DType) bool {
	if _, ok := blasType[a]; !ok || a != b {
		return false
	}
	return out == a || out == tensor.F32
}

// blasOperand lays out a rows×cols column-major operand whose element
// (r, c) sits at r·sr + c·sc: stored as is (op N, leading dimension sc)
// when rows are unit-strided, or as its transpose (op T, leading
// dimension sr) when columns are. A dimension of extent 1 takes any
// stride, and its leading dimension is then the smallest cuBLAS accepts.
func blasOperand(rows, cols, sr, sc int) (op, ld int, ok bool) {
	if sr == 1 || rows == 1 {
		ld = sc
		if cols == 1 {
			ld = rows
		}
		if ld >= rows {
			return blasOpN, ld, true
		}
	}
	if sc == 1 || cols == 1 {
		ld = sr
		if rows == 1 {
			ld = cols
		}
		if ld >= cols {
			return blasOpT, ld, true
		}
	}
	return 0, 0, false
}

// flatStride finds the one stride s with strides[d] = s·Π dims[d+1:] for
// every batch dim of extent > 1 (0 for a broadcast operand).
func flatStride(dims, strides []int) (int, bool) {
	s, known, inner := 0, false, 1
	for d := len(dims) - 1; d >= 0; d-- {
		if dims[d] > 1 {
			switch {
			case !known && strides[d]%inner == 0:
				s, known = strides[d]/inner, true
			case !known || strides[d] != s*inner:
				return 0, false
			}
		}
		inner *= dims[d]
	}
	return s, true
}

// planBlas picks the lowered steps cuBLAS runs: plain GEMMs it can take
// as one call. The result is indexed like lw.steps (nil: PTX or copy).
func planBlas(lw *lowered) []*gemmArgs {
	var plans []*gemmArgs
	for i, sp := range lw.steps {
		if sp.kernel == nil || (sp.node.Op != graph.OpMatMul && sp.node.Op != graph.OpFusedMatMul && sp.node.Op != graph.OpGemm) {
			continue
		}
		g, err := kdesc.GemmOf(sp.kernel.Name, sp.node)
		if err != nil {
			continue
		}
		if a, ok := blasGemm(g); ok {
			if plans == nil {
				plans = make([]*gemmArgs, len(lw.steps))
			}
			plans[i] = &a
		}
	}
	return plans
}

// blasCall is a prepared cuBLAS GEMM of one program step. alpha and beta
// live here, on the heap, because cuBLAS reads them through pointers.
type blasCall struct {
	args        gemmArgs
	out, a, b   Ptr // kiln's operands
	alpha, beta float32
}

// run queues the GEMM on the handle's stream; the caller holds the context.
func (c *blasCall) run(bh *blasHandle) error {
	g := &c.args
	algo := int32(blasAlgoAuto) // a variable: converted, it sign-extends
	return bh.b.check("cublasGemmStridedBatchedEx", call(bh.b.gemm, bh.h,
		uintptr(g.transA), uintptr(g.transB), uintptr(g.m), uintptr(g.n), uintptr(g.k),
		uintptr(unsafe.Pointer(&c.alpha)),
		uintptr(c.b), uintptr(g.typeA), uintptr(g.lda), uintptr(g.strideA),
		uintptr(c.a), uintptr(g.typeB), uintptr(g.ldb), uintptr(g.strideB),
		uintptr(unsafe.Pointer(&c.beta)),
		uintptr(c.out), uintptr(g.typeC), uintptr(g.ldc), uintptr(g.strideC),
		uintptr(g.batch), blasCompute32F, uintptr(algo)))
}

// newBlasCall prepares the GEMM of a step: kiln's out = a·w.
func newBlasCall(a *gemmArgs, out, x, w Ptr) *blasCall {
	return &blasCall{args: *a, out: out, a: x, b: w, alpha: a.alpha}
}
