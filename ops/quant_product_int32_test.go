package ops

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

// TestMatMulIntegerFast checks the CPU paths (the int8 GEMM where it
// takes the node, the int32 path always) bit for bit against the
// reference: both dtype pairings, per-row and per-column zero points,
// batches that broadcast, 1-D operands, K past the 4-way unroll with a
// tail, several threads, and the int32 wrap-around.
func TestMatMulIntegerFast(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 1))
	for _, c := range []struct {
		name         string
		a, b, az, bz []int
		adt, bdt     tensor.DType
	}{
		{"u8·i8 per row, column", []int{7, 45}, []int{45, 13}, []int{7, 1}, []int{13}, tensor.U8, tensor.I8},
		{"i8·u8 batched broadcast", []int{2, 1, 5, 19}, []int{3, 19, 6}, nil, []int{3, 1, 6}, tensor.I8, tensor.U8},
		{"u8·u8 vector", []int{33}, []int{33, 9}, []int{1}, nil, tensor.U8, tensor.U8},
		{"i8·i8 matrix·vector", []int{4, 6, 3}, []int{3}, []int{4, 6, 1}, []int{}, tensor.I8, tensor.I8},
		{"wide", []int{40, 257}, []int{257, 31}, nil, nil, tensor.U8, tensor.I8},
	} {
		g := graph.New()
		ins := []tensor.Tensor{q8Rand(r, c.adt, 0, c.a...), q8Rand(r, c.bdt, 0, c.b...)}
		an, bn := g.Input("a", c.adt, c.a...), g.Input("b", c.bdt, c.b...)
		var zs [2]*graph.Node
		for i, z := range [][]int{c.az, c.bz} {
			dt := []tensor.DType{c.adt, c.bdt}[i]
			if z == nil {
				zs[i] = g.Constant(tensor.New(dt))
				continue
			}
			zs[i] = g.Input([]string{"az", "bz"}[i], dt, z...)
		}
		if c.az != nil {
			ins = append(ins, q8Rand(r, c.adt, 0, c.az...))
		} else {
			ins = append(ins, tensor.New(c.adt))
		}
		if c.bz != nil {
			ins = append(ins, q8Rand(r, c.bdt, 0, c.bz...))
		} else {
			ins = append(ins, tensor.New(c.bdt))
		}
		n := g.MatMulInteger(an, bn, zs[0], zs[1])
		if err := g.Err(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := hcRun(t, n, ins...)
		for _, threads := range []int{1, 3} {
			got, variant := fastRun(t, n, parEnv(threads), ins...)
			if int8Path := len(c.b) == 2; variant != "int32" && !(int8Path && strings.HasPrefix(variant, "int8-")) {
				t.Errorf("%s: variant %q", c.name, variant)
			}
			approx.Slices(t, c.name, got, want, 0, 0)
			approx.Slices(t, c.name+" (int32 path)", runPrepared(t, prepareMatMulIntegerInt32, n, parEnv(threads), ins...), want, 0, 0)
		}
	}
	// 33026·255·255 wraps past int32, as in the reference.
	const k = 33026
	g := graph.New()
	a, b := tensor.New(tensor.U8, 1, k), tensor.New(tensor.U8, k, 2)
	for i := range a.Data {
		a.Data[i] = 255
	}
	for i := range b.Data {
		b.Data[i] = 255
	}
	n := g.MatMulInteger(g.Input("a", tensor.U8, 1, k), g.Input("b", tensor.U8, k, 2), nil, nil)
	got, _ := fastRun(t, n, parEnv(2), a, b, tensor.New(tensor.U8), tensor.New(tensor.U8))
	approx.Slices(t, "wrap", got, []float64{2147515650 - 1<<32, 2147515650 - 1<<32}, 0, 0)
}

// BenchmarkMatMulInteger compares the CPU path with the reference on a
// BERT-base projection (128×768·768×768).
func BenchmarkMatMulInteger(b *testing.B) {
	r := rand.New(rand.NewPCG(24, 2))
	g := graph.New()
	n := g.MatMulInteger(g.Input("a", tensor.U8, 128, 768), g.Input("b", tensor.I8, 768, 768), nil, nil)
	ins := []tensor.Tensor{q8Rand(r, tensor.U8, 0, 128, 768), q8Rand(r, tensor.I8, 0, 768, 768), tensor.New(tensor.U8), tensor.New(tensor.I8)}
	out := tensor.New(tensor.I32, 128, 768)
	ref, err := PrepareReference(n)
	if err != nil {
		b.Fatal(err)
	}
	fast, _, err := PrepareFast(n, Serial)
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range []struct {
		name string
		k    Kernel
	}{{"reference", ref}, {"fast-1thread", fast}} {
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				if err := k.k(ins, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*128*768*768*2/b.Elapsed().Seconds()/1e9, "GOPS")
		})
	}
}
