package ptxemu

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// Deliberately broken versions of emitted kernels (the PTX text edited
// the way a bug in the emitter would leave it) must fail: with a fault,
// a race report or a mismatch against the reference. A wrong mma
// fragment layout is TestMmaWrongFragment.

// mutate returns k's module with the edit applied, failing if the edit
// matches nothing.
func mutate(t *testing.T, k *ptx.Kernel, edit func(string) string) string {
	t.Helper()
	src := ptx.Module(k)
	out := edit(src)
	if out == src {
		t.Fatalf("%s: the edit changed nothing", k.Name)
	}
	return out
}

// runSrc runs kernel name of src like runKernel.
func runSrc(t *testing.T, src, name string, l ptx.Launch, o Options, out tensor.Tensor, ins ...tensor.Tensor) error {
	t.Helper()
	m, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	mem := NewMemory()
	a, _ := mem.Map(out.Data)
	args := []any{a}
	for _, in := range ins {
		p, _ := mem.Map(in.Data)
		args = append(args, p)
	}
	return m.LaunchWith(o, mem, name, l, args...)
}

// TestBrokenIndex: an elementwise kernel whose output address uses the
// wrong element size writes past its buffer; a transpose with a wrong
// stride stays in bounds but the comparison catches it.
func TestBrokenIndex(t *testing.T) {
	e := &ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: "add", Shape: []int{4, 6}, Out: tensor.F32,
		Inputs: []ptx.Operand{{DType: tensor.F32, Strides: []int{6, 1}}, {DType: tensor.F32, Strides: []int{6, 1}}},
		Body:   []ptx.Instr{{Op: graph.OpAdd, Args: []int{0, 1}, DType: tensor.F32}}}}
	k, err := ptx.EmitElementwise(e)
	if err != nil {
		t.Fatal(err)
	}
	// The last mad.wide computes the output address: element size 8, not 4.
	src := mutate(t, k, func(s string) string {
		i := strings.LastIndex(s, "mad.wide.s32")
		return s[:i] + strings.Replace(s[i:], ", 4, ", ", 8, ", 1)
	})
	r := rand.New(rand.NewPCG(1, 1))
	x, y := randTensor(r, tensor.F32, false, 4, 6), randTensor(r, tensor.F32, false, 4, 6)
	err = runSrc(t, src, k.Name, k.Launch, Options{}, tensor.New(tensor.F32, 4, 6), x, y)
	if err == nil || !strings.Contains(err.Error(), "out-of-bounds global write") || !strings.Contains(err.Error(), "thread (12,0,0)") {
		t.Errorf("output written at twice the stride: %v", err)
	}

	g := graph.New()
	in := g.Input("x", tensor.F32, 3, 5)
	n := g.Transpose(in, 1, 0)
	k, _, err = ptx.EmitNode("tr", n)
	if err != nil {
		t.Fatal(err)
	}
	// Walk the input rows with stride 4 instead of 5.
	src = mutate(t, k, func(s string) string { return strings.Replace(s, ", 5, ", ", 4, ", 1) })
	xs := randTensor(r, tensor.F32, false, 3, 5)
	got := sentinel(tensor.F32, 5, 3)
	if err := runSrc(t, src, k.Name, k.Launch, Options{}, got, xs); err != nil {
		t.Fatal(err)
	}
	g.Output(n)
	want := interpret(t, g, map[string]tensor.Tensor{"x": xs})[0]
	if compareTensors(&quietT{TB: t}, "tr", got, want, tol{}) {
		t.Error("a transpose with the wrong stride matched the reference")
	}
	// The unbroken kernel matches (the comparison is not vacuous).
	if err := runKernel(t, k, Options{}, got, xs); err != nil {
		t.Fatal(err)
	}
	compareTensors(t, "tr", got, want, tol{})
}

// TestBrokenBarrier: the tiled GEMM without either of its barriers, and
// a block reduction without the one before reading the per-warp
// partials, are reported (as a race, or as a read of shared memory the
// other threads have not written yet).
func TestBrokenBarrier(t *testing.T) {
	gm := &ptx.Gemm{Gemm: kdesc.Gemm{Name: "gemm", A: tensor.F32, B: tensor.F32, Out: tensor.F32, M: 40, N: 40, K: 40,
		ASm: 40, ASk: 1, BSk: 40, BSn: 1, Alpha: 1}, Tile: ptx.GemmTile{BM: 32, BN: 32, BK: 8, TM: 2, TN: 2}}
	k, err := ptx.EmitGemm(gm)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2, 2))
	a, b := randTensor(r, tensor.F32, false, 40, 40), randTensor(r, tensor.F32, false, 40, 40)
	bars := regexp.MustCompile(`\tbar\.sync 0;\n`)
	if n := len(bars.FindAllStringIndex(k.Entry(), -1)); n != 2 {
		t.Fatalf("the GEMM has %d barriers; this test expects 2", n)
	}
	for drop := range 2 {
		src := mutate(t, k, func(s string) string {
			i := bars.FindAllStringIndex(s, -1)[drop]
			return s[:i[0]] + s[i[1]:]
		})
		for _, rev := range []bool{false, true} {
			err := runSrc(t, src, k.Name, k.Launch, Options{ReverseThreads: rev}, tensor.New(tensor.F32, 40, 40), a, b)
			if !sharedFault(err) {
				t.Errorf("GEMM without barrier %d (reverse %v): %v", drop, rev, err)
			}
		}
	}

	sm, err := ptx.EmitSoftmax(&ptx.Softmax{Softmax: kdesc.Softmax{Name: "softmax", DType: tensor.F32, Shape: []int{2, 200}, Axis: 1}, Block: 64})
	if err != nil {
		t.Fatal(err)
	}
	// blockReduce: bar.sync; @p st.shared; bar.sync; ... ld.shared. Drop
	// the second barrier (between the partials' stores and loads).
	src := mutate(t, sm, func(s string) string {
		i := strings.Index(s, "st.shared.f32")
		j := i + strings.Index(s[i:], "\tbar.sync 0;\n")
		return s[:j] + s[j+len("\tbar.sync 0;\n"):]
	})
	x := randTensor(r, tensor.F32, false, 2, 200)
	err = runSrc(t, src, sm.Name, sm.Launch, Options{}, tensor.New(tensor.F32, 2, 200), x)
	if !sharedFault(err) || !strings.Contains(err.Error(), "red+") {
		t.Errorf("softmax without the partials' barrier: %v", err)
	}
}

// sharedFault reports a missing barrier's symptom: a race, or a read of
// shared memory no thread has written yet.
func sharedFault(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "data race on") || strings.Contains(err.Error(), "which no thread of the block has written"))
}
