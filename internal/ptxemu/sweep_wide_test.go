package ptxemu

import (
	"math"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// Kernels whose index space passes 2³¹ switch to 64-bit index arithmetic.
// Their buffers are gigabytes, so these tests map them as sparse memory
// and run a sample of blocks (Options.Blocks), checking every element
// the sample computes against values written at exactly those places.

func TestWideElementwise(t *testing.T) {
	t.Parallel()
	const rows, cols = 3, 1 << 30
	k, err := ptx.EmitElementwise(&ptx.Elementwise{Elementwise: kdesc.Elementwise{Name: "wide", Shape: []int{rows, cols}, Out: tensor.F16,
		Inputs: []ptx.Operand{{DType: tensor.F16, Strides: []int{cols, 1}}, {DType: tensor.F16, Strides: []int{1, 0}}},
		Body:   []ptx.Instr{{Op: graph.OpAdd, Args: []int{0, 1}, DType: tensor.F16}}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(ptx.Module(k))
	if err != nil {
		t.Fatal(err)
	}
	mem := NewMemory()
	out, _ := mem.AllocSparse(2 * rows * cols)
	in0, _ := mem.AllocSparse(2 * rows * cols)
	bias := []uint16{tensor.F32ToF16(0.5), tensor.F32ToF16(-2), tensor.F32ToF16(100)}
	in1, _ := mem.Map(tensor.Bytes(bias))
	// The first and last blocks of the grid-stride loop.
	l := k.Launch
	blocks := []int{0, l.Grid[0] - 1}
	stride := int64(l.Grid[0] * l.Block[0])
	var idx []int64
	for _, b := range blocks {
		for tid := range l.Block[0] {
			for i := int64(b*l.Block[0] + tid); i < rows*cols; i += stride {
				idx = append(idx, i)
			}
		}
	}
	val := func(i int64) float32 { return float32(i%2000)/8 - 100 }
	for _, i := range idx {
		h := tensor.F32ToF16(val(i))
		if err := mem.Write(in0+uint64(2*i), []byte{byte(h), byte(h >> 8)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.LaunchWith(Options{Blocks: blocks}, mem, k.Name, l, out, in0, in1); err != nil {
		t.Fatal(err)
	}
	var sawHigh bool
	for _, i := range idx {
		var b [2]byte
		if err := mem.Read(out+uint64(2*i), b[:]); err != nil {
			t.Fatal(err)
		}
		want := tensor.F32ToF16(val(i) + tensor.F16ToF32(bias[i/cols]))
		if got := uint16(b[0]) | uint16(b[1])<<8; got != want {
			t.Fatalf("element %d (row %d) = %#04x, want %#04x", i, i/cols, got, want)
		}
		sawHigh = sawHigh || i > math.MaxInt32
	}
	if !sawHigh {
		t.Fatal("the sample never reached an index past 2^31")
	}
}

func TestWideGemm(t *testing.T) {
	t.Parallel()
	const M, N, K = 65536, 40000, 4096
	g := &ptx.Gemm{Gemm: kdesc.Gemm{Name: "gemm_wide", A: tensor.BF16, B: tensor.BF16, Out: tensor.F32, M: M, N: N, K: K,
		ASm: K, ASk: 1, BSk: N, BSn: 1, Alpha: 1}, Tile: ptx.GemmTile{BM: 32, BN: 32, BK: 16, TM: 2, TN: 4}}
	k, err := ptx.EmitGemm(g)
	if err != nil {
		t.Fatal(err)
	}
	// The tensor-core kernel with a tile of the same 32×32 blocks.
	km, err := ptx.EmitGemmMMA(g, ptx.MmaTile{BM: 32, BN: 32, BK: 16, WM: 16, WN: 16})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []*ptx.Kernel{k, km} {
		checkWideGemm(t, k, M, N, K)
	}
}

// checkWideGemm runs the last block of k, an M×N×K BF16 product with F32
// output, and checks its 32×32 tile.
func checkWideGemm(t *testing.T, k *ptx.Kernel, M, N, K int) {
	m, err := Load(ptx.Module(k))
	if err != nil {
		t.Fatal(err)
	}
	mem := NewMemory()
	out, _ := mem.AllocSparse(int64(4 * M * N))
	a, _ := mem.AllocSparse(int64(2 * M * K))
	b, _ := mem.AllocSparse(int64(2 * K * N))
	// The last tile: rows M-32.., columns N-32.. (small integers, so f32
	// sums are exact).
	m0, n0 := M-32, N-32
	av := func(i, kk int) float32 { return float32((i*7+kk*3)%5 - 2) }
	bv := func(kk, j int) float32 { return float32((kk*5+j)%3 - 1) }
	put := func(base uint64, off int, v float32) {
		h := tensor.F32ToBF16(v)
		if err := mem.Write(base+uint64(2*off), []byte{byte(h), byte(h >> 8)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := m0; i < M; i++ {
		for kk := range K {
			put(a, i*K+kk, av(i, kk))
		}
	}
	for kk := range K {
		for j := n0; j < N; j++ {
			put(b, kk*N+j, bv(kk, j))
		}
	}
	last := k.Launch.Blocks() - 1
	if err := m.LaunchWith(Options{Blocks: []int{last}}, mem, k.Name, k.Launch, out, a, b); err != nil {
		t.Fatal(err)
	}
	for i := m0; i < M; i++ {
		for j := n0; j < N; j++ {
			var want float32
			for kk := range K {
				want += av(i, kk) * bv(kk, j)
			}
			var buf [4]byte
			if err := mem.Read(out+uint64(4*(i*N+j)), buf[:]); err != nil {
				t.Fatal(err)
			}
			if got := tensor.Elems[float32](buf[:])[0]; got != want {
				t.Fatalf("%s: C[%d][%d] = %v, want %v", k.Name, i, j, got, want)
			}
		}
	}
}
