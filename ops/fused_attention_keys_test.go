package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// padCase is an attention with a padding mask [B, 1, 1, Sk]: pad(b, j)
// says whether key j of batch b is padding, padValue what the mask holds
// there ("bool" for a bool mask).
type padCase struct {
	b, h, hk, sq, sk, d int
	padValue            string
	pad                 func(b, j int) bool
	qScale              float64
	zeroKept            bool // the mask is 0, not random, where it keeps a key
}

// build returns the node and its inputs (q scaled by qScale).
func (c padCase) build(t *testing.T, r *rand.Rand) (*graph.Node, []tensor.Tensor) {
	g := graph.New()
	qs, ks := tensor.Shape{c.b, c.h, c.sq, c.d}, tensor.Shape{c.b, c.hk, c.sk, c.d}
	q, k, v := g.Input("q", tensor.F32, qs...), g.Input("k", tensor.F32, ks...), g.Input("v", tensor.F32, ks...)
	qv := hcRand(r, qs.NumElements())
	for i := range qv {
		qv[i] *= 3 * c.qScale
	}
	ins := []tensor.Tensor{hcT(t, tensor.F32, qs, qv...), hcT(t, tensor.F32, ks, hcRand(r, ks.NumElements())...),
		hcT(t, tensor.F32, ks, hcRand(r, ks.NumElements())...)}
	ms := tensor.Shape{c.b, 1, 1, c.sk}
	mv := make([]float64, ms.NumElements())
	dt := tensor.F32
	for i := range mv {
		b, j := i/c.sk, i%c.sk
		switch {
		case c.padValue == "bool":
			dt = tensor.Bool
			mv[i] = 1
			if c.pad(b, j) {
				mv[i] = 0
			}
		case c.pad(b, j):
			switch c.padValue {
			case "-inf":
				mv[i] = math.Inf(-1)
			case "min":
				mv[i] = -math.MaxFloat32
			default:
				fmt.Sscan(c.padValue, &mv[i])
			}
		case !c.zeroKept:
			mv[i] = 0.5 * r.Float64()
		}
	}
	mask := g.Input("mask", dt, ms...)
	ins = append(ins, hcT(t, dt, ms, mv...))
	return g.Attention(q, k, v, mask, graph.AttentionOpts{}), ins
}

var padPatterns = map[string]func(b, j int) bool{
	"trailing":  func(b, j int) bool { return j >= 70-10*b },
	"leading":   func(b, j int) bool { return j < 25+20*b },
	"scattered": func(b, j int) bool { return (j+b)%3 == 0 },
	"one-left":  func(b, j int) bool { return j != 40+b },
	"none":      func(b, j int) bool { return false },
}

// TestAttentionPaddingKeys: with a padding mask the flash kernel leaves
// the pad keys out, and its outputs still match the reference, for
// additive masks of -10000, -FLT_MAX and -Inf and bool masks, pads at
// the end, the start, scattered or all but one key, with small blocks
// (the kept keys span several) and the default ones, grouped heads.
func TestAttentionPaddingKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 2))
	for _, blocks := range [][2]int{{16, 32}, {flashBQ, flashBK}} {
		for _, pv := range []string{"-10000", "min", "-inf", "bool", "-10000/zero"} {
			for name, pat := range padPatterns {
				c := padCase{b: 2, h: 4, hk: 2, sq: 40, sk: 100, d: 16, padValue: strings.TrimSuffix(pv, "/zero"), pad: pat, qScale: 1,
					zeroKept: strings.HasSuffix(pv, "/zero") || pv == "bool"}
				t.Run(fmt.Sprintf("bq%d/%s/%s", blocks[0], pv, name), func(t *testing.T) {
					bq0, bk0 := flashBQ, flashBK
					flashBQ, flashBK = blocks[0], blocks[1]
					defer func() { flashBQ, flashBK = bq0, bk0 }()
					n, ins := c.build(t, r)
					checkKeptKeys(t, c, n, ins, func(b, j int) bool { return !c.pad(b, j) })
					got, _ := fastRun(t, n, parEnv(3), ins...)
					hcClose(t, name, got, hcRun(t, n, ins...), 2e-5)
				})
			}
		}
	}
}

// checkKeptKeys runs the key choice of every key/value head and checks
// it keeps exactly the keys want says, in order, with their rows.
func checkKeptKeys(t *testing.T, c padCase, n *graph.Node, ins []tensor.Tensor, want func(b, j int) bool) {
	t.Helper()
	p := newFlashPlan(n, 1)
	if !p.padding {
		t.Fatal("a [B,1,1,Sk] mask is not planned as padding")
	}
	w, err := p.newWorker()
	if err != nil {
		t.Fatal(err)
	}
	for kvh := range c.b * c.hk {
		b := kvh / c.hk
		p.chooseKeys(w, ins, kvh)
		var keys []int
		for j := range c.sk {
			if want(b, j) {
				keys = append(keys, j)
			}
		}
		// Kept keys [0, n) stay in place; any other set is gathered.
		prefix := len(keys) == 0 || keys[len(keys)-1] == len(keys)-1
		if w.nkeys != len(keys) || w.gathered != !prefix {
			t.Fatalf("head %d: %d keys (gathered %v), want %d (prefix %v)", kvh, w.nkeys, w.gathered, len(keys), prefix)
		}
		// No mask pass where every kept key's mask is 0 (and only there).
		if wantRaw := c.zeroKept && len(keys) == keptBy(c.pad, b, c.sk); w.raw != wantRaw {
			t.Fatalf("head %d: raw %v, want %v", kvh, w.raw, wantRaw)
		}
		if !w.gathered {
			continue
		}
		k, v := ins[1].F32()[kvh*c.sk*c.d:], ins[2].F32()[kvh*c.sk*c.d:]
		for i, j := range keys {
			for x := range c.d {
				if w.kg[i*c.d+x] != k[j*c.d+x] || w.vg[i*c.d+x] != v[j*c.d+x] {
					t.Fatalf("head %d: kept key %d is not key %d", kvh, i, j)
				}
			}
		}
	}
}

// keptBy counts the keys of batch b that pad keeps.
func keptBy(pad func(b, j int) bool, b, sk int) int {
	n := 0
	for j := range sk {
		if !pad(b, j) {
			n++
		}
	}
	return n
}

// TestAttentionPaddingBound: a key is left out only when the bound proves
// its weight is zero. A mask of -50 is kept; with queries 10^4 times
// larger a -10000 pad can win a row's softmax and is kept, while -Inf
// pads are still left out; a NaN in the mask turns the skipping off.
func TestAttentionPaddingBound(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 3))
	trailing := padPatterns["trailing"]
	for _, c := range []struct {
		pc   padCase
		kept func(b, j int) bool
	}{
		{padCase{b: 2, h: 2, hk: 2, sq: 8, sk: 100, d: 16, padValue: "-50", pad: trailing, qScale: 1}, func(b, j int) bool { return true }},
		{padCase{b: 2, h: 2, hk: 2, sq: 8, sk: 100, d: 16, padValue: "-10000", pad: trailing, qScale: 1e4}, func(b, j int) bool { return true }},
		{padCase{b: 2, h: 2, hk: 2, sq: 8, sk: 100, d: 16, padValue: "-inf", pad: trailing, qScale: 1e4}, func(b, j int) bool { return !trailing(b, j) }},
		{padCase{b: 2, h: 2, hk: 2, sq: 8, sk: 100, d: 16, padValue: "nan", pad: func(b, j int) bool { return j == 3 || j > 90 }, qScale: 1}, func(b, j int) bool { return true }},
	} {
		t.Run(c.pc.padValue, func(t *testing.T) {
			n, ins := c.pc.build(t, r)
			checkKeptKeys(t, c.pc, n, ins, c.kept)
			// Scores of 10^4 carry float32 rounding of 10^-3 into the
			// weights: a looser tolerance there, flash or not.
			tol := 2e-5 * c.pc.qScale
			got, _ := fastRun(t, n, parEnv(2), ins...)
			hcClose(t, c.pc.padValue, got, hcRun(t, n, ins...), min(tol, 5e-3))
		})
	}
}

// TestAttentionPaddingPoison: a left-out key's value that is Inf or NaN
// still turns its output column to NaN (weight 0 times Inf), as in the
// reference; and a batch whose keys are all -Inf gets NaN rows.
func TestAttentionPaddingPoison(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 4))
	c := padCase{b: 2, h: 2, hk: 1, sq: 5, sk: 60, d: 8, padValue: "-inf",
		pad: func(b, j int) bool { return b == 1 || j >= 50 }, qScale: 1}
	n, ins := c.build(t, r)
	v := ins[2].F32()
	v[55*c.d+2] = float32(math.Inf(1)) // batch 0, a pad key
	v[57*c.d+5] = float32(math.NaN())
	checkKeptKeys(t, c, n, ins, func(b, j int) bool { return b == 0 && j < 50 || b == 1 })
	got, _ := fastRun(t, n, parEnv(2), ins...)
	want := hcRun(t, n, ins...)
	hcClose(t, "poison", got, want, 2e-5)
	for i := 0; i < len(want); i += c.d { // the columns, and batch 1, are NaN in the reference too
		if b := i / (c.h * c.sq * c.d); b == 0 && (!math.IsNaN(want[i+2]) || !math.IsNaN(want[i+5]) || math.IsNaN(want[i])) {
			t.Fatalf("reference row %d: %v", i/c.d, want[i:i+c.d])
		}
	}
}

// TestAttentionNarrowMask: masks whose values span less than the slack
// skip the bound, exactly where it could remove no key: for masks of
// random values within a span, keyCut removes nothing when narrowMask
// says so, and at spans of 110 and more the bound still runs and removes
// keys of extreme queries.
func TestAttentionNarrowMask(t *testing.T) {
	inf := float32(math.Inf(-1))
	for _, c := range []struct {
		mask []float32
		want bool
	}{
		{[]float32{0, 0, 0}, true}, {[]float32{0, -109.9}, true}, {[]float32{-5, 104.9}, true},
		{[]float32{0, -110}, false}, {[]float32{0, -10000}, false}, {[]float32{0, inf}, false},
		{[]float32{inf, inf}, false}, {[]float32{0, float32(math.NaN())}, false},
		{[]float32{float32(math.NaN()), 0}, false}, {nil, false},
	} {
		if got := narrowMask(c.mask); got != c.want {
			t.Errorf("narrowMask(%v) = %v, want %v", c.mask, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(9, 4))
	for _, span := range []float64{0, 50, 109, 110, 200, 10000} {
		pc := padCase{b: 1, h: 2, hk: 2, sq: 8, sk: 64, d: 16, padValue: fmt.Sprint(-span),
			pad: func(b, j int) bool { return j%5 == 0 }, qScale: 1, zeroKept: true}
		n, ins := pc.build(t, r)
		p := newFlashPlan(n, 1)
		w, err := p.newWorker()
		if err != nil {
			t.Fatal(err)
		}
		mask := ins[3].F32()
		copy(w.maskc, mask)
		narrow := narrowMask(mask)
		if narrow != (span < keyBoundSlack) {
			t.Fatalf("span %v: narrowMask %v", span, narrow)
		}
		_, cut := p.keyCut(w, ins, 0)
		if narrow && cut {
			t.Fatalf("span %v: narrowMask skips a bound that removes keys", span)
		}
		if span >= 200 && !cut {
			t.Fatalf("span %v: the bound removes no key", span)
		}
	}
}
