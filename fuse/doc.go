// Package fuse holds kiln's graph-to-graph passes. Run applies the enabled
// passes in order and verifies the graph after each one, so a broken pass
// is caught at the pass that broke it. Every pass must keep the graph's
// results equal to the unfused graph's (the reference interpreter is the
// oracle in tests).
//
// The passes, in pipeline order (names as KILN_FUSE=-name takes them):
//
//	conv_bn           Conv2D (or single-group ConvTranspose) + BatchNorm → the same op on
//	                  weights rewritten from the params
//	                  (any other BatchNorm → x·s + t per channel, for elementwise)
//	fold              nodes of constants evaluated at compile time
//	cse               duplicate nodes and constants merged
//	simplify          identity ops removed, view chains and transpose pairs collapsed
//	recognise         norms and activations spelled out in primitives (torch's
//	                  pre-opset-17 LayerNorm, RMSNorm, erf/tanh GELU, SiLU,
//	                  sigmoid) → LayerNorm / RMSNorm / Gelu / ...; activations
//	                  are matched by value on probe points, not by spelling
//	attention         Q·Kᵀ → scale → mask → Softmax → ·V spelled out → Attention
//	dynamic_quant     ONNX Runtime's dynamically quantized MatMul
//	                  (DynamicQuantizeLinear, MatMulInteger, Cast, Mul [, Add])
//	                  → DynQuantMatMul on the int8 GEMM
//	qdq               MatMul/Gemm/Conv2D between QuantizeLinear/DequantizeLinear
//	                  pairs (static QDQ) [+ bias] [+ activation] → QDQMatMul /
//	                  QDQConv: int32 sums on the int8 GEMM, float epilogue
//	transpose_matmul  a Transpose of a product operand → the product's transpose flag
//	epilogue          MatMul/Gemm + bias + activation + residual → FusedMatMul,
//	                  Conv2D + activation + residual (or + 2×2 MaxPool2D)
//	                  → FusedConv2D
//	norm              residual Add + LayerNorm/RMSNorm → AddLayerNorm/AddRMSNorm
//	elementwise       regions of elementwise ops → FusedElementwise
//	dce               nodes no output needs removed
//
// Every fusion asks one legality predicate (view.absorbable): an
// intermediate that disappears into a fused node has all its consumers
// inside the pattern, is not a graph output, and has the shape the fused
// node expects. What a pass fused, and each near miss with its reason, is
// in the Report.
package fuse
