package ops_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// parallel is an Env that runs For's chunks on goroutines, so the fast
// kernels' splitting is exercised.
var parallel = ops.Env{Threads: 3, For: func(n, grain int, body func(lo, hi int)) {
	chunks := min(3, (n+grain-1)/max(grain, 1))
	var wg sync.WaitGroup
	for c := range chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(c*n/chunks, (c+1)*n/chunks)
		}()
	}
	wg.Wait()
}}

// TestIndexFastKernels runs the reference cases of the ops with fast
// kernels through PrepareFast (serial and split) and checks that the fast
// kernel took the node where it should.
func TestIndexFastKernels(t *testing.T) {
	cases, err := loadRefCases()
	if err != nil {
		t.Fatal(err)
	}
	took := map[string]bool{}
	for _, c := range cases {
		if c.Op != "GatherElements" && c.Op != "ScatterND" {
			continue
		}
		g, feeds, err := buildCase(c)
		if err != nil {
			t.Fatal(err)
		}
		n := g.Outputs()[0]
		for _, env := range []ops.Env{ops.Serial, parallel} {
			k, variant, err := ops.PrepareFast(n, env)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			took[c.Name] = variant != "reference"
			ins := []tensor.Tensor{feeds["in0"], feeds["in1"], feeds["in2"]}[:len(n.Inputs)]
			out := tensor.New(n.DType, n.Shape...)
			if err := k(ins, out); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			want, _ := c.Outputs[0].Decode()
			if err := compare(out, want, c.RTol, c.ATol); err != nil {
				t.Errorf("%s (%s): %v", c.Name, variant, err)
			}
		}
	}
	for name, fast := range map[string]bool{"GatherElements_ax0": true, "GatherElements_ax1_longer": false, "GatherElements_3d_i64_data": true, "GatherElements_f16": true,
		"GatherElements_ax0_smaller_cols": false, "ScatterND_rows_dup_add": true, "ScatterND_i64_cache": true} {
		if took[name] != fast {
			t.Errorf("%s: fast kernel took it: %v, want %v", name, took[name], fast)
		}
	}
}

// TestIndexOutOfRange: an index outside [-d, d) is a run-time error naming
// it, from the reference and the fast kernel alike, and the output keeps
// its bytes.
func TestIndexOutOfRange(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 3, 4)
	i24 := g.Input("i", tensor.I64, 2, 4)
	u24 := g.Input("u", tensor.F32, 2, 4)
	i21 := g.Input("j", tensor.I32, 2, 1)
	for _, c := range []struct {
		n       *graph.Node
		idx     tensor.Tensor
		bad     string
		variant string
	}{
		{g.GatherElements(x, i24, 0), i64s(2, 4, 0, 1, 2, -3, 0, 1, 2, 3), "index 3 (position 7 of indices) is out of range [-3, 3) for axis 0", "go"},
		{g.ScatterElements(x, i24, u24, 1, graph.ScatterAdd), i64s(2, 4, 0, 1, -5, 3, 0, 1, 2, 3), "index -5 (position 2 of indices)", "reference"},
		{g.GatherND(x, i21, 0), i32s(2, 1, 1, 3), "index 3 (position 1 of indices) is out of range [-3, 3) for coordinate 0", "reference"},
		{g.ScatterND(x, i21, u24, graph.ScatterNone), i32s(2, 1, -4, 0), "index -4 (position 0 of indices)", "go"},
	} {
		ins := []tensor.Tensor{iota(3, 4), c.idx, iota(2, 4)}[:len(c.n.Inputs)]
		for _, fast := range []bool{false, true} {
			var k ops.Kernel
			var variant string
			var err error
			if fast {
				k, variant, err = ops.PrepareFast(c.n, ops.Serial)
			} else {
				k, err = ops.PrepareReference(c.n)
			}
			if err != nil {
				t.Fatal(err)
			}
			if fast && variant != c.variant {
				t.Errorf("%v: variant %q, want %q", c.n.Op, variant, c.variant)
			}
			out := tensor.New(c.n.DType, c.n.Shape...)
			for i := range out.Data {
				out.Data[i] = 0xa5
			}
			before := bytes.Clone(out.Data)
			err = k(ins, out)
			if err == nil || !strings.Contains(err.Error(), c.bad) || !strings.Contains(err.Error(), c.n.Op.String()) {
				t.Errorf("%v (fast %v): error %v, want one containing %q", c.n.Op, fast, err, c.bad)
			}
			if !bytes.Equal(out.Data, before) {
				t.Errorf("%v (fast %v): the output changed on error", c.n.Op, fast)
			}
		}
	}
}

// TestScatterNDInPlace: with the output over data (the plan's in-place
// reuse), both kernels leave data's other positions and write the update.
func TestScatterNDInPlace(t *testing.T) {
	g := graph.New()
	n := g.ScatterND(g.Input("x", tensor.F32, 3, 4), g.Input("i", tensor.I64, 1, 1), g.Input("u", tensor.F32, 1, 4), graph.ScatterMul)
	want := []float32{0, 1, 2, 3, 4, 5, 6, 7, 8 * 0, 9 * 1, 10 * 2, 11 * 3}
	for _, fast := range []bool{false, true} {
		k, _, err := ops.PrepareFast(n, ops.Serial)
		if !fast {
			k, err = ops.PrepareReference(n)
		}
		if err != nil {
			t.Fatal(err)
		}
		data := iota(3, 4)
		if err := k([]tensor.Tensor{data, i64s(1, 1, -1), iota(1, 4)}, data); err != nil {
			t.Fatal(err)
		}
		w, _ := tensor.FromF32(tensor.Shape{3, 4}, want)
		if err := compare(data, w, 0, 0); err != nil {
			t.Errorf("fast %v: %v", fast, err)
		}
	}
}

func iota(dims ...int) tensor.Tensor {
	t := tensor.New(tensor.F32, dims...)
	for i := range t.F32() {
		t.F32()[i] = float32(i)
	}
	return t
}

func i64s(r, c int, v ...int64) tensor.Tensor {
	t, _ := tensor.FromI64(tensor.Shape{r, c}, v)
	return t
}

func i32s(r, c int, v ...int32) tensor.Tensor {
	t, _ := tensor.FromI32(tensor.Shape{r, c}, v)
	return t
}
