package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// q8Rand is an I8 or U8 tensor of random bytes (the whole range), or of
// one extreme when ext is 1 (the lowest value) or 2 (the highest).
func q8Rand(r *rand.Rand, dt tensor.DType, ext int, dims ...int) tensor.Tensor {
	t := tensor.New(dt, dims...)
	for i := range t.Data {
		switch {
		case ext == 1 && dt == tensor.I8:
			t.Data[i] = 0x80
		case ext == 1:
			t.Data[i] = 0
		case ext == 2 && dt == tensor.I8:
			t.Data[i] = 0x7f
		case ext == 2:
			t.Data[i] = 0xff
		default:
			t.Data[i] = byte(r.Uint32())
		}
	}
	return t
}

// TestFastMatMulInteger runs the int8-GEMM MatMulInteger against the
// reference, bit for bit, over every signedness of A and B, scalar,
// per-row and per-column zero points, a batched A, B as a param (packed
// once) and as an input, shapes with tails, and the extremes of both
// operands and zero points (sums of ±32640 per step).
func TestFastMatMulInteger(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 1))
	shapes := [][3]int{{1, 1, 1}, {3, 5, 7}, {17, 64, 33}, {70, 300, 100}, {4, 1000, 40}}
	q8 := []tensor.DType{tensor.U8, tensor.I8}
	for si, s := range shapes {
		m, k, n := s[0], s[1], s[2]
		for _, adt := range q8 {
			for _, bdt := range q8 {
				for zmode := range 3 { // 0 scalar zeros, 1 random scalars, 2 per row / per column
					for _, param := range []bool{true, false} {
						ext := 0
						if si == 2 && zmode == 1 {
							ext = 1 + r.IntN(2)
						}
						name := fmt.Sprintf("%dx%dx%d/%v-%v/z%d/param=%v/ext%d", m, k, n, adt, bdt, zmode, param, ext)
						t.Run(name, func(t *testing.T) {
							checkMatMulInteger(t, r, m, k, n, adt, bdt, zmode, param, ext, si == 4)
						})
					}
				}
			}
		}
	}
}

func checkMatMulInteger(t *testing.T, r *rand.Rand, m, k, n int, adt, bdt tensor.DType, zmode int, param bool, ext int, batched bool) {
	g := graph.New()
	adims := []int{m, k}
	zadims := []int{}
	if batched {
		adims = []int{2, m, k}
	}
	if zmode == 2 {
		zadims = append(slices.Clone(adims[:len(adims)-1]), 1)
	}
	zbdims := []int{}
	if zmode == 2 {
		zbdims = []int{n}
	}
	a := g.Input("a", adt, adims...)
	var b *graph.Node
	if param {
		b = g.Param("b", bdt, k, n)
	} else {
		b = g.Input("b", bdt, k, n)
	}
	az, bz := g.Input("az", adt, zadims...), g.Input("bz", bdt, zbdims...)
	y := g.MatMulInteger(a, b, az, bz)
	g.Output(y)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	feeds := []tensor.Tensor{q8Rand(r, adt, ext, adims...), q8Rand(r, bdt, 3-ext, k, n), q8Rand(r, adt, ext, zadims...), q8Rand(r, bdt, 3-ext, zbdims...)}
	if ext == 0 {
		feeds[1] = q8Rand(r, bdt, 0, k, n)
		feeds[3] = q8Rand(r, bdt, 0, zbdims...)
	}
	if zmode == 0 {
		clear(feeds[2].Data)
		clear(feeds[3].Data)
	}
	want := hcRun(t, y, feeds...)
	got, variant := fastRun(t, y, parEnv(3), feeds...)
	if !slices.Equal(got, want) {
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: element %d = %v, want %v", variant, i, got[i], want[i])
			}
		}
	}
}

// TestFastMatMulIntegerRepack: a param B is packed once and packed again
// when the weights version moves.
func TestFastMatMulIntegerRepack(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 2))
	g := graph.New()
	a, b := g.Input("a", tensor.U8, 9, 50), g.Param("b", tensor.I8, 50, 20)
	y := g.MatMulInteger(a, b, g.Input("az", tensor.U8), g.Input("bz", tensor.I8))
	g.Output(y)
	env := parEnv(2)
	env.WeightsVersion = new(atomic.Uint64)
	kern, variant, err := PrepareFast(y, env)
	if err != nil || variant == "reference" {
		t.Fatalf("prepare: %v (%s)", err, variant)
	}
	feeds := []tensor.Tensor{q8Rand(r, tensor.U8, 0, 9, 50), q8Rand(r, tensor.I8, 0, 50, 20), q8Rand(r, tensor.U8, 0), q8Rand(r, tensor.I8, 0)}
	out := tensor.New(tensor.I32, 9, 20)
	for step := range 3 {
		if step > 0 {
			copy(feeds[1].Data, q8Rand(r, tensor.I8, 0, 50, 20).Data) // the same buffer, new weights
			env.WeightsVersion.Add(1)
		}
		if err := kern(feeds, out); err != nil {
			t.Fatal(err)
		}
		want := hcRun(t, y, feeds...)
		for i, v := range tensor.Elems[int32](out.Data) {
			if float64(v) != want[i] {
				t.Fatalf("step %d: element %d = %d, want %v", step, i, v, want[i])
			}
		}
	}
}
