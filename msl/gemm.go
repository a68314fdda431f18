package msl

import (
	"fmt"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/tensor"
)

// Gemm describes out[b] = Alpha·A[b]·B[b] (+ Beta·C[b]), then Act, then
// + Res (kdesc.Gemm); SimdGroup selects the simdgroup_matrix kernel.
// Buffers: out, a, b, [c], [res].
type Gemm = kdesc.Gemm

// Tile sizes: 32×32 outputs per threadgroup, K in steps of 16.
const (
	gemmTile = 32
	gemmBK   = 16
)

// EmitGemm writes the GEMM. The tiled variant gives each of 16×16
// threads a 2×2 block of outputs; the simdgroup variant has four
// simdgroups each own 16×16 outputs as 2×2 simdgroup_float8x8
// accumulators. Both stage zero-padded tiles in threadgroup memory, so
// any M, N, K is in bounds, and apply the epilogue per element.
func EmitGemm(g *Gemm) (*Kernel, error) {
	for _, dt := range []tensor.DType{g.A, g.B, g.Out} {
		if !isFloat(dt) {
			return nil, fmt.Errorf("msl: %s: GEMM of %v is not supported on Metal", g.Name, dt)
		}
	}
	if g.M <= 0 || g.N <= 0 || g.K < 0 {
		return nil, fmt.Errorf("msl: %s: %d×%d×%d", g.Name, g.M, g.N, g.K)
	}
	nb := product(g.Batch)
	if err := checkCount(g.Name, nb*g.M*g.N); err != nil {
		return nil, err
	}
	if len(g.ABatch) != len(g.Batch) || len(g.BBatch) != len(g.Batch) || (g.HasC && g.CBatch != nil && len(g.CBatch) != len(g.Batch)) {
		return nil, fmt.Errorf("msl: %s: batch strides do not match batch %v", g.Name, g.Batch)
	}
	ot, _ := Storage(g.Out)
	at, _ := Storage(g.A)
	bt, _ := Storage(g.B)
	bufs := []Buffer{{Name: "out", Type: ot}, {Name: "a", Type: at, Const: true}, {Name: "b", Type: bt, Const: true}}
	if g.HasC {
		ct, err := Storage(g.CType)
		if err != nil {
			return nil, err
		}
		bufs = append(bufs, Buffer{Name: "c", Type: ct, Const: true})
	}
	if g.HasRes {
		rt, err := Storage(g.ResType)
		if err != nil {
			return nil, err
		}
		bufs = append(bufs, Buffer{Name: "res", Type: rt, Const: true})
	}
	var b strings.Builder
	attrs := []string{attrGroup, attrTid}
	threads := [3]int{256, 1, 1}
	variant := "tiled"
	if g.SimdGroup {
		attrs = append(attrs, attrSg)
		threads, variant = [3]int{128, 1, 1}, "simdgroup"
	}
	b.WriteString(sig(g.Name, bufs, attrs...))
	b.WriteString("{\n")
	fmt.Fprintf(&b, "    threadgroup float As[%d][%d];\n    threadgroup float Bs[%d][%d];\n", gemmTile, gemmBK+1, gemmBK, gemmTile+1)
	fmt.Fprintf(&b, "    int m0 = int(grp.y) * %d, n0 = int(grp.x) * %d;\n    uint bz = grp.z;\n", gemmTile, gemmTile)
	fmt.Fprintf(&b, "    if (bz >= %du || m0 >= %d || n0 >= %d) { return; }\n", nb, g.M, g.N)
	cb := g.CBatch
	if cb == nil {
		cb = make([]int, len(g.Batch))
	}
	bd, bs := Collapse(g.Batch, g.ABatch, g.BBatch, cb)
	b.WriteString(offsetCode("    ", "bz", bd, bs, []string{"ab", "bb", "cb"}, nil))
	nt := threads[0]
	// loads: every thread fills tile elements e = tid, tid+nt, ...
	fmt.Fprintf(&b, "    for (int k0 = 0; k0 < %d; k0 += %d) {\n", g.K, gemmBK)
	fmt.Fprintf(&b, "        for (int e = int(tid); e < %d; e += %d) {\n", gemmTile*gemmBK, nt)
	fmt.Fprintf(&b, "            int i = e / %d, k = e %% %d, m = m0 + i, kk = k0 + k;\n", gemmBK, gemmBK)
	fmt.Fprintf(&b, "            As[i][k] = (m < %d && kk < %d) ? %s : 0.0f;\n", g.M, g.K, load(g.A, fmt.Sprintf("a[ab + m * %d + kk * %d]", g.ASm, g.ASk)))
	fmt.Fprintf(&b, "            int k2 = e / %d, j = e %% %d, n = n0 + j, kb = k0 + k2;\n", gemmTile, gemmTile)
	fmt.Fprintf(&b, "            Bs[k2][j] = (n < %d && kb < %d) ? %s : 0.0f;\n        }\n", g.N, g.K, load(g.B, fmt.Sprintf("b[bb + kb * %d + n * %d]", g.BSk, g.BSn)))
	b.WriteString("        threadgroup_barrier(mem_flags::mem_threadgroup);\n")
	if g.SimdGroup {
		emitSimdBody(&b)
	} else {
		emitTiledBody(&b)
	}
	b.WriteString("        threadgroup_barrier(mem_flags::mem_threadgroup);\n    }\n")
	if g.SimdGroup {
		// park accumulators in As-sized scratch, then the epilogue as tiled
		fmt.Fprintf(&b, "    threadgroup float Cs[%d][%d];\n", gemmTile, gemmTile)
		b.WriteString("    for (int i = 0; i < 2; i++) { for (int j = 0; j < 2; j++) {\n")
		b.WriteString("        simdgroup_store(acc[i][j], &Cs[wm + i * 8][wn + j * 8], " + fmt.Sprint(gemmTile) + ");\n    } }\n")
		b.WriteString("    threadgroup_barrier(mem_flags::mem_threadgroup);\n")
		fmt.Fprintf(&b, "    for (int e = int(tid); e < %d; e += %d) {\n        int i = e / %d, j = e %% %d;\n        float v = Cs[i][j];\n", gemmTile*gemmTile, nt, gemmTile, gemmTile)
		emitEpilogue(&b, g, "        ", "m0 + i", "n0 + j")
		b.WriteString("    }\n}\n")
	} else {
		b.WriteString("    for (int i = 0; i < 2; i++) { for (int j = 0; j < 2; j++) {\n        float v = acc[i][j];\n")
		emitEpilogue(&b, g, "        ", "m0 + ty + i * 16", "n0 + tx + j * 16")
		b.WriteString("    } }\n}\n")
	}
	src := b.String()
	// the accumulators are declared before the K loop
	decl := "    float acc[2][2] = {{0.0f, 0.0f}, {0.0f, 0.0f}};\n    int tx = int(tid) % 16, ty = int(tid) / 16;\n"
	if g.SimdGroup {
		decl = "    simdgroup_float8x8 acc[2][2];\n    for (int i = 0; i < 2; i++) { for (int j = 0; j < 2; j++) { acc[i][j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f); } }\n" +
			"    int wm = int(sg / 2u) * 16, wn = int(sg % 2u) * 16;\n"
	}
	src = strings.Replace(src, "    for (int k0 = 0;", decl+"    for (int k0 = 0;", 1)
	return &Kernel{Name: g.Name, Source: src, Buffers: bufs,
		Groups: [3]int{CeilDiv(g.N, gemmTile), CeilDiv(g.M, gemmTile), nb}, Threads: threads, Variant: variant}, nil
}

func emitTiledBody(b *strings.Builder) {
	fmt.Fprintf(b, "        for (int k = 0; k < %d; k++) {\n", gemmBK)
	b.WriteString("            float a0 = As[ty][k], a1 = As[ty + 16][k];\n            float b0 = Bs[k][tx], b1 = Bs[k][tx + 16];\n")
	b.WriteString("            acc[0][0] += a0 * b0; acc[0][1] += a0 * b1; acc[1][0] += a1 * b0; acc[1][1] += a1 * b1;\n        }\n")
}

func emitSimdBody(b *strings.Builder) {
	fmt.Fprintf(b, "        for (int k = 0; k < %d; k += 8) {\n", gemmBK)
	b.WriteString("            simdgroup_float8x8 fa[2], fb[2];\n")
	fmt.Fprintf(b, "            for (int i = 0; i < 2; i++) { simdgroup_load(fa[i], &As[wm + i * 8][k], %d); }\n", gemmBK+1)
	fmt.Fprintf(b, "            for (int j = 0; j < 2; j++) { simdgroup_load(fb[j], &Bs[k][wn + j * 8], %d); }\n", gemmTile+1)
	b.WriteString("            for (int i = 0; i < 2; i++) { for (int j = 0; j < 2; j++) { simdgroup_multiply_accumulate(acc[i][j], fa[i], fb[j], acc[i][j]); } }\n        }\n")
}

// emitEpilogue writes the bounds check, alpha, C, activation, residual
// and store of one output value v at row mExpr, column nExpr.
func emitEpilogue(b *strings.Builder, g *Gemm, ind, mExpr, nExpr string) {
	fmt.Fprintf(b, "%s{ int m = %s, n = %s;\n", ind, mExpr, nExpr)
	fmt.Fprintf(b, "%sif (m < %d && n < %d) {\n", ind, g.M, g.N)
	fmt.Fprintf(b, "%s    v *= %s;\n", ind, flit(g.Alpha))
	if g.HasC {
		fmt.Fprintf(b, "%s    v += %s * %s;\n", ind, flit(g.Beta), load(g.CType, fmt.Sprintf("c[cb + m * %d + n * %d]", g.CSm, g.CSn)))
	}
	if g.Act != graph.OpInvalid {
		x, _ := floatUnary(g.Act, "v", graph.Attrs{})
		fmt.Fprintf(b, "%s    v = %s;\n", ind, x)
	}
	fmt.Fprintf(b, "%s    int o = int(bz) * %d + m * %d + n;\n", ind, g.M*g.N, g.N)
	if g.HasRes {
		fmt.Fprintf(b, "%s    v += %s;\n", ind, load(g.ResType, "res[o]"))
	}
	fmt.Fprintf(b, "%s    out[o] = %s;\n%s} }\n", ind, store(g.Out, "v"), ind)
}
