package ptxemu

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// Deliberately broken tensor-core GEMMs, in the manner of broken_test.go:
// the emitted text edited as an emitter bug would leave it.

// brokenMmaGemm is a product of several k steps (so the double buffer
// wraps) on a four-warp tile, with its operands and reference.
func brokenMmaGemm(t *testing.T) (*ptx.Kernel, []tensor.Tensor, tensor.Tensor, *ptx.Gemm) {
	g := &ptx.Gemm{Gemm: kdesc.Gemm{Name: "mma", A: tensor.F16, B: tensor.F16, Out: tensor.F32, M: 40, N: 40, K: 72,
		ASm: 72, ASk: 1, BSk: 1, BSn: 72, Alpha: 1}}
	k, err := ptx.EmitGemmMMA(g, ptx.MmaTile{BM: 32, BN: 32, BK: 16, WM: 16, WN: 16})
	if err != nil {
		t.Fatal(err)
	}
	raw, dense := gemmOperands(rand.New(rand.NewPCG(3, 3)), g)
	return k, raw, refGemm64(t, g, dense), g
}

// TestBrokenMmaFragment: swapping a1 and a2 of every A fragment (rows
// 8-15 and the upper k half mixed up) runs cleanly, and the comparison
// catches it; the unbroken kernel passes the same comparison.
func TestBrokenMmaFragment(t *testing.T) {
	k, raw, want, g := brokenMmaGemm(t)
	mma := regexp.MustCompile(`(mma\.sync[^{]*\{[^}]*\}, \{)([^,]+), ([^,]+), ([^,]+), ([^}]+)\}`)
	src := mutate(t, k, func(s string) string { return mma.ReplaceAllString(s, "$1$2, $4, $3, $5}") })
	got := sentinel(g.Out, g.M, g.N)
	if err := runSrc(t, src, k.Name, k.Launch, Options{}, got, raw...); err != nil {
		t.Fatal(err)
	}
	if compareTensors(&quietT{TB: t}, "swapped", got, want, mmaTol(g)) {
		t.Error("a GEMM with swapped A fragments matched the reference")
	}
	if err := runKernel(t, k, Options{}, got, raw...); err != nil {
		t.Fatal(err)
	}
	compareTensors(t, "mma", got, want, mmaTol(g))
}

// TestBrokenMmaBarrier: without the barrier before the tensor-core reads
// of a stage, or the one before it is refilled, the emulator reports the
// shared-memory race.
func TestBrokenMmaBarrier(t *testing.T) {
	k, raw, _, g := brokenMmaGemm(t)
	bars := regexp.MustCompile(`\tbar\.sync 0;\n`)
	if n := len(bars.FindAllStringIndex(k.Entry(), -1)); n != 2 {
		t.Fatalf("the mma GEMM has %d barriers; this test expects 2", n)
	}
	for drop := range 2 {
		src := mutate(t, k, func(s string) string {
			i := bars.FindAllStringIndex(s, -1)[drop]
			return s[:i[0]] + s[i[1]:]
		})
		for _, rev := range []bool{false, true} {
			err := runSrc(t, src, k.Name, k.Launch, Options{ReverseThreads: rev}, tensor.New(g.Out, g.M, g.N), raw...)
			if !sharedFault(err) {
				t.Errorf("mma GEMM without barrier %d (reverse %v): %v", drop, rev, err)
			}
		}
	}
	// The cp.async staging is what the first barrier orders.
	if !strings.Contains(k.Entry(), "cp.async.cg.shared.global") {
		t.Error("the 16-byte aligned operands were not staged with cp.async")
	}
}
