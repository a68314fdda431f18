package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/approx"
	"github.com/kilnml/kiln/tensor"
)

func TestExp32(t *testing.T) {
	worst := 0.0
	for i := 0; i <= 200000; i++ {
		x := float32(-100 + float64(i)*190/200000)
		got, want := float64(exp32(x)), math.Exp(float64(x))
		if want < 1.2e-38 { // below float32's normal range exp32 flushes to 0
			if got != 0 && approx.Far(got, want, 1.5e-45) {
				t.Fatalf("exp32(%v) = %v, want about %v", x, got, want)
			}
			continue
		}
		if math.IsInf(want, 1) || want > math.MaxFloat32 {
			continue
		}
		worst = max(worst, math.Abs(got-want)/want)
	}
	if math.IsNaN(worst) || worst > 2.5e-7 { // max propagates a NaN from got
		t.Errorf("exp32 relative error %g, want <= 2.5e-7", worst)
	}
	if exp32(float32(math.Inf(-1))) != 0 || !math.IsNaN(float64(exp32(float32(math.NaN())))) || exp32(0) != 1 {
		t.Errorf("exp32 specials: %v %v %v", exp32(float32(math.Inf(-1))), exp32(float32(math.NaN())), exp32(0))
	}
	x := float32(88.7) // past 2^127: the two-step scaling
	if got, want := float64(exp32(x)), math.Exp(float64(x)); math.Abs(got-want)/want > 1e-6 {
		t.Errorf("exp32(%v) = %v, want %v", x, got, want)
	}
}

// attnCase is one flash-vs-reference comparison.
type attnCase struct {
	b, h, hk, sq, sk, d int
	mask                string // "", "add", "bool", "causal", "causal+add"
}

func (c attnCase) String() string {
	return fmt.Sprintf("b%d_h%d_hk%d_sq%d_sk%d_d%d_%s", c.b, c.h, c.hk, c.sq, c.sk, c.d, c.mask)
}

func runAttnCase(t *testing.T, c attnCase, r *rand.Rand) {
	g := graph.New()
	qs := tensor.Shape{c.b, c.h, c.sq, c.d}
	ks := tensor.Shape{c.b, c.hk, c.sk, c.d}
	q := g.Input("q", tensor.F32, qs...)
	k := g.Input("k", tensor.F32, ks...)
	v := g.Input("v", tensor.F32, ks...)
	ins := []tensor.Tensor{
		hcT(t, tensor.F32, qs, hcRand(r, qs.NumElements())...),
		hcT(t, tensor.F32, ks, hcRand(r, ks.NumElements())...),
		hcT(t, tensor.F32, ks, hcRand(r, ks.NumElements())...),
	}
	// Larger scores make the online max move between key blocks.
	for i, x := range ins[0].F32() {
		ins[0].F32()[i] = 3 * x
	}
	var mask *graph.Node
	switch c.mask {
	case "add", "causal+add":
		ms := tensor.Shape{c.b, 1, 1, c.sk} // padding: the last quarter hidden
		mv := make([]float64, ms.NumElements())
		for i := range mv {
			if i%c.sk >= c.sk-c.sk/4 && c.sk > 1 {
				mv[i] = -10000
			} else {
				mv[i] = 0.5 * r.Float64()
			}
		}
		mask = g.Input("mask", tensor.F32, ms...)
		ins = append(ins, hcT(t, tensor.F32, ms, mv...))
	case "bool":
		ms := tensor.Shape{c.sq, c.sk}
		mv := make([]float64, ms.NumElements())
		for i := range mv {
			mv[i] = float64(r.IntN(4) / 3) // a quarter kept
		}
		if c.sq > 2 { // one row with every key masked: NaN expected
			for j := range c.sk {
				mv[2*c.sk+j] = 0
			}
		}
		mask = g.Input("mask", tensor.Bool, ms...)
		ins = append(ins, hcT(t, tensor.Bool, ms, mv...))
	}
	causal := c.mask == "causal" || c.mask == "causal+add"
	n := g.Attention(q, k, v, mask, graph.AttentionOpts{Causal: causal})
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	want := hcRun(t, n, ins...)
	got, variant := fastRun(t, n, parEnv(3), ins...)
	hcClose(t, c.String()+" "+variant, got, want, 2e-5)
}

// TestAttentionFlash compares the flash kernel with the reference at the
// sequence lengths and head dims of issue 5, self-attention (Sq = Sk) and
// the KV-cache case (Sq = 1), with no mask, additive, bool and causal
// masks, grouped-query heads included.
func TestAttentionFlash(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 1))
	for _, seq := range []int{1, 7, 128, 1000} {
		for _, d := range []int{32, 64, 80, 128} {
			masks := []string{"", "add", "bool", "causal", "causal+add"}
			b, h, hk := 2, 4, 2
			if seq == 1000 { // the float64 reference is slow: one head, fewer masks
				b, h, hk = 1, 1, 1
				masks = []string{"", "add", "causal"}
			}
			for _, m := range masks {
				c := attnCase{b: b, h: h, hk: hk, sq: seq, sk: seq, d: d, mask: m}
				t.Run(c.String(), func(t *testing.T) { runAttnCase(t, c, r) })
				dec := attnCase{b: b, h: h, hk: hk, sq: 1, sk: seq, d: d, mask: m}
				if seq > 1 {
					t.Run(dec.String(), func(t *testing.T) { runAttnCase(t, dec, r) })
				}
			}
		}
	}
}

// TestAttentionFlashShapes covers uneven blocks, Sq > Sk with causality
// (queries that see no key), empty keys and multi-query heads.
func TestAttentionFlashShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 1))
	for _, c := range []attnCase{
		{b: 1, h: 3, hk: 1, sq: 65, sk: 129, d: 8, mask: "causal"},
		{b: 1, h: 2, hk: 2, sq: 9, sk: 4, d: 5, mask: "causal"},
		{b: 2, h: 2, hk: 1, sq: 130, sk: 257, d: 16, mask: "bool"},
		{b: 1, h: 1, hk: 1, sq: 3, sk: 0, d: 4, mask: ""},
		{b: 1, h: 1, hk: 1, sq: 64, sk: 128, d: 1, mask: "add"},
	} {
		t.Run(c.String(), func(t *testing.T) { runAttnCase(t, c, r) })
	}
}

// TestAttentionFlashSmallBlocks runs every mask kind over many small
// blocks, so that the online softmax's rescaling, edge blocks on both
// axes, per-head packing shared by several query blocks (and by grouped
// heads) and the causal skip all meet at sizes the reference computes
// quickly.
func TestAttentionFlashSmallBlocks(t *testing.T) {
	bq0, bk0 := flashBQ, flashBK
	flashBQ, flashBK = 16, 32
	defer func() { flashBQ, flashBK = bq0, bk0 }()
	r := rand.New(rand.NewPCG(7, 1))
	for _, m := range []string{"", "add", "bool", "causal", "causal+add"} {
		for _, c := range []attnCase{
			{b: 2, h: 4, hk: 2, sq: 70, sk: 100, d: 16, mask: m},
			{b: 2, h: 6, hk: 3, sq: 33, sk: 65, d: 8, mask: m}, // whole heads per task
			{b: 1, h: 2, hk: 1, sq: 1, sk: 70, d: 16, mask: m},
		} {
			t.Run(c.String(), func(t *testing.T) { runAttnCase(t, c, r) })
		}
	}
}

// TestAttentionFlashRerun runs one prepared kernel on two sets of inputs:
// the keys and values a worker packed for the first run must not stand
// in for the second's.
func TestAttentionFlashRerun(t *testing.T) {
	bq0, bk0 := flashBQ, flashBK
	flashBQ, flashBK = 16, 32
	defer func() { flashBQ, flashBK = bq0, bk0 }()
	r := rand.New(rand.NewPCG(8, 1))
	g := graph.New()
	s := tensor.Shape{1, 1, 40, 8} // one head: a worker's first head of a run is its last of the run before
	q, k, v := g.Input("q", tensor.F32, s...), g.Input("k", tensor.F32, s...), g.Input("v", tensor.F32, s...)
	n := g.Attention(q, k, v, nil, graph.AttentionOpts{})
	kern, _, err := PrepareFast(n, parEnv(2))
	if err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		ins := make([]tensor.Tensor, 3)
		for i := range ins {
			ins[i] = hcT(t, tensor.F32, s, hcRand(r, s.NumElements())...)
		}
		out := tensor.New(tensor.F32, n.Shape...)
		if err := kern(ins, out); err != nil {
			t.Fatal(err)
		}
		got := make([]float64, len(out.F32()))
		for i, x := range out.F32() {
			got[i] = float64(x)
		}
		hcClose(t, fmt.Sprintf("run %d", run), got, hcRun(t, n, ins...), 2e-5)
	}
}

// TestFlashTaskBlocks: the flash kernel's tasks cover every block once,
// whole heads first (their blocks descending), then single blocks, one
// head per worker split when there are heads enough to go round.
func TestFlashTaskBlocks(t *testing.T) {
	for _, c := range []struct{ b, h, nqb, threads, wantWhole int }{
		{1, 12, 4, 2, 10}, {2, 12, 1, 2, 22}, {1, 12, 4, 4, 0}, {1, 3, 5, 1, 0}, {1, 8, 5, 2, 6}, {1, 1, 7, 1, 0}, {1, 16, 2, 4, 12},
	} {
		p := &flashPlan{b: c.b, h: c.h, nqb: c.nqb}
		p.setTasks(c.threads)
		seen := make([]int, c.b*c.h*c.nqb)
		last := len(seen)
		for task := range p.tasks {
			hi, n := p.taskBlocks(task)
			if task >= p.whole && n != 1 || task < p.whole && n != c.nqb {
				t.Fatalf("%+v: task %d has %d blocks", c, task, n)
			}
			if hi != last { // tasks hand out the blocks from the end back, without gaps
				t.Fatalf("%+v: task %d ends at %d, want %d", c, task, hi, last)
			}
			for i := 1; i <= n; i++ {
				seen[hi-i]++
			}
			last = hi - n
		}
		for blk, k := range seen {
			if k != 1 {
				t.Fatalf("%+v: block %d run %d times", c, blk, k)
			}
		}
		if p.whole != c.wantWhole {
			t.Fatalf("%+v: %d whole-head tasks, want %d", c, p.whole, c.wantWhole)
		}
	}
}
