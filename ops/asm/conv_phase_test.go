package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln/internal/approx"
)

// phaseKernels are the Go twin ("go") and every vector phase kernel, by
// feature.
func phaseKernels() map[string]convPhaseKernel {
	kernels := map[string]convPhaseKernel{"go": convPhaseGo}
	for _, ks := range convFamily.asm {
		if ks.phase != nil {
			kernels[string(ks.feature)] = ks.phase
		}
	}
	return kernels
}

// TestPhaseRun checks every vector phase kernel, and the Go twin,
// through Run against the definition summed in float64: every panel
// height, every count of stored rows, depths from one step on, offsets
// anywhere in x (the farthest reaching its last cell), one to three
// tiles whose segments are the same, apart or interleaved with each
// other's output (o_1 = o_0 + 1: one phase's even cells, the other's odd
// ones), specials in x, the odd cells and guards around y left alone.
func TestPhaseRun(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	kernels := phaseKernels()
	for name, kern := range kernels {
		for _, rows := range PhaseRows {
			for _, k := range []int{1, 2, 5, 33} {
				for _, n := range []int{1, rows / 2, rows - 1, rows} {
					for layout := range 3 {
						for _, flags := range phaseFlags {
							if !phaseFlagsFit(flags, rows, n) {
								continue
							}
							t.Run(fmt.Sprintf("%s/rows=%d/k=%d/n=%d/layout=%d/flags=%#x", name, rows, k, n, layout, flags), func(t *testing.T) {
								checkPhaseRun(t, kern, rows, n, k, layout, flags, r)
							})
						}
					}
				}
			}
		}
	}
}

func checkPhaseRun(t *testing.T, kern convPhaseKernel, rows, n, k, layout int, flags uint, r *rand.Rand) {
	const ldo, tileOut = 210, 70 // each tile's outputs within a row
	x := randFloats(r, 120)
	if layout == 2 {
		x[r.IntN(len(x))] = float32(math.NaN())
		x[r.IntN(len(x))] = float32(math.Inf(1))
	}
	off := make([]int, k)
	for q := range off {
		off[q] = r.IntN(60)
	}
	off[r.IntN(k)] = 60
	var at []int
	tiles := 1 + r.IntN(3)
	for tl := range tiles {
		x0, x1 := r.IntN(45), r.IntN(45)
		o0, o1 := tl*tileOut, tl*tileOut+35
		switch layout {
		case 1: // the same segment twice
			x1, o1 = x0, o0
		case 2: // the other column phase of the same output row
			o1 = o0 + 1
		}
		at = append(at, x0, x1, o0, o1)
	}
	at[4*r.IntN(tiles)] = 44 // a segment reading x's last cell
	ts, err := NewPhaseTiles(at)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPhaseProduct(kern, off)
	if err != nil {
		t.Fatal(err)
	}
	const base = 3
	a, bias := randFloats(r, k*rows), randFloats(r, rows)
	y := newGuarded(base+ts.oLast+phaseReach(n, ldo, flags), 0)
	copy(y.Data, randFloats(r, len(y.Data)))
	want := phaseRunWant(rows, n, a, bias, x, off, at, nil, nil, y.Data, base, ldo, flags)
	runPhase(p, flags, rows, n, a, bias, x, y.Data, base, ldo, ts)
	y.check(t, "phase run")
	comparePhaseRun(t, y.Data, want, fmt.Sprintf("rows %d, n %d, k %d, tiles %v", rows, n, k, at))
}

// phaseFlags are the ways a phase run stores its sums: spread, paired,
// whole, and whole through the ReLU or the clamp to [+0, 0.5].
var phaseFlags = []uint{uint(phaseSpread), uint(phasePairs), uint(phaseWhole), uint(phaseWhole) | gemmRelu, uint(phaseWhole) | clampFlags(0.5)}

// phaseFlagsFit reports whether a run of n of rows rows may store as
// flags say: paired or whole only below PhaseOneRows, paired only even
// n.
func phaseFlagsFit(flags uint, rows, n int) bool {
	store := phaseStore(flags & 3)
	return store == phaseSpread || rows < PhaseOneRows && (store == phaseWhole || n%2 == 0)
}

// runPhase runs p through Run, RunPairs or RunWhole, as flags say.
func runPhase(p *PhaseProduct, flags uint, rows, n int, a, bias, x, y []float32, base, ldo int, ts *PhaseTiles) {
	switch phaseStore(flags & 3) {
	case phasePairs:
		p.RunPairs(rows, n, a, bias, x, y, base, ldo, ts)
	case phaseWhole:
		p.RunWhole(rows, n, a, bias, x, y, base, ldo, ts, flags&^3)
	default:
		p.Run(rows, n, a, bias, x, y, base, ldo, ts)
	}
}

// phaseReach is how far past its last tile's output offset a run of n
// panel rows writes (one past its last float).
func phaseReach(n, ldo int, flags uint) int {
	switch phaseStore(flags & 3) {
	case phasePairs:
		return (n/2-1)*ldo + 32
	case phaseWhole:
		return (n-1)*ldo + 16
	}
	return (n-1)*ldo + 31
}

// phaseRunWant is PhaseProduct.Run's definition (RunPairs's, RunWhole's
// with its clamp, as flags say),
// summed in float64, over a copy of y: at holds four offsets a tile;
// with masks, cls holds each segment's class (two a tile) and a lane a
// class's mask clears is a 0.
func phaseRunWant(rows, n int, a, bias, x []float32, off, at, cls []int, masks [][]uint16, y []float32, base, ldo int, flags uint) []float32 {
	want := slices.Clone(y)
	for tl := range len(at) / 4 {
		for u := range phaseSegments(rows) {
			xu, ou := at[4*tl+u], base+at[4*tl+2+u]
			for i := range n {
				for j := range 16 {
					s := float64(bias[i])
					for q, o := range off {
						if masks != nil && masks[cls[2*tl+u]][q]>>j&1 == 0 {
							s += float64(a[q*rows+i]) * 0
							continue
						}
						s += float64(a[q*rows+i]) * float64(x[xu+o+j])
					}
					switch phaseStore(flags & 3) {
					case phasePairs:
						want[ou+i/2*ldo+2*j+i%2] = float32(s)
					case phaseWhole:
						if flags&gemmRelu != 0 && s < 0 {
							s = 0
						}
						if flags&gemmClamp != 0 {
							s = min(max(s, 0), float64(math.Float32frombits(uint32(flags>>32))))
						}
						want[ou+i*ldo+j] = float32(s)
					default:
						want[ou+i*ldo+2*j] = float32(s)
					}
				}
			}
		}
	}
	return want
}

// comparePhaseRun compares a run's output with its definition, NaN-aware.
func comparePhaseRun(t *testing.T, got, want []float32, what string) {
	t.Helper()
	for i, w := range want {
		if approx.Far(float64(got[i]), float64(w), 1e-5*(1+math.Abs(float64(w)))) {
			t.Fatalf("y[%d] = %v, want %v (%s)", i, got[i], w, what)
		}
	}
}

// TestPhaseEdgeRun checks edge tiles on every vector phase kernel and
// the Go twin: an image of three 5×32 planes read in place by taps that
// reach one and two cells past every edge, each segment's masks clearing
// the lanes outside the image, against the definition over the
// zero-padded image in float64 (specials inside the image; a zero-padded
// lane meets an infinite weight as 0·Inf, as a padded copy does).
func TestPhaseEdgeRun(t *testing.T) {
	const c, h, w = 3, 5, 32
	r := rand.New(rand.NewPCG(9, 10))
	kernels := phaseKernels()
	taps := [][2]int{{-1, -1}, {0, 1}, {1, 0}, {2, -2}, {-2, 2}, {0, 0}}
	var off []int
	for ci := range c {
		for _, tp := range taps {
			off = append(off, ci*h*w+tp[0]*w+tp[1])
		}
	}
	x := randFloats(r, c*h*w)
	x[r.IntN(len(x))] = float32(math.NaN())
	x[r.IntN(len(x))] = float32(math.Inf(-1))
	// Segments row by row, each with the class of its masks.
	classes := map[string]int{}
	var masks [][]uint16
	var segs, cls []int
	for row := range h {
		for col := 0; col < w; col += 16 {
			m := make([]uint16, len(off))
			for q := range off {
				tp := taps[q%len(taps)]
				for j := range 16 {
					if yy, xx := row+tp[0], col+j+tp[1]; yy >= 0 && yy < h && xx >= 0 && xx < w {
						m[q] |= 1 << j
					}
				}
			}
			key := fmt.Sprint(m)
			if _, ok := classes[key]; !ok {
				classes[key] = len(masks)
				masks = append(masks, m)
			}
			segs, cls = append(segs, row*w+col), append(cls, classes[key])
		}
	}
	const ldo = 400 // output of segment s from 35·s: rows far apart
	var at, at6 []int
	for s := 0; s < len(segs); s += 2 {
		at = append(at, segs[s], segs[s+1], 35*s, 35*(s+1))
		at6 = append(at6, segs[s], segs[s+1], 35*s, 35*(s+1), cls[s], cls[s+1])
	}
	for name, kern := range kernels {
		p, err := newPhaseProduct(kern, off)
		if err != nil {
			t.Fatal(err)
		}
		pm, err := p.NewMasks(masks)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := p.EdgeTiles(at6, pm, len(x))
		if err != nil {
			t.Fatal(err)
		}
		for _, rows := range PhaseRows {
			for _, flags := range phaseFlags {
				n := rows - r.IntN(2)
				if phaseStore(flags&3) == phasePairs {
					n = rows - 2*r.IntN(2)
				}
				if !phaseFlagsFit(flags, rows, n) {
					continue
				}
				a, bias := randFloats(r, len(off)*rows), randFloats(r, rows)
				a[r.IntN(len(a))] = float32(math.Inf(1))
				y := newGuarded(ts.oLast+phaseReach(n, ldo, flags), 0)
				copy(y.Data, randFloats(r, len(y.Data)))
				want := phaseRunWant(rows, n, a, bias, x, off, at, cls, masks, y.Data, 0, ldo, flags)
				runPhase(p, flags, rows, n, a, bias, x, y.Data, 0, ldo, ts)
				y.check(t, "edge run")
				comparePhaseRun(t, y.Data, want, fmt.Sprintf("%s rows %d, n %d, flags %#x", name, rows, n, flags))
			}
		}
	}
	if len(masks) < 6 {
		t.Errorf("%d mask classes: the image should give corners, edges and middles", len(masks))
	}
}

// FuzzPhaseRun runs a fuzz-chosen phase product (panel height, rows
// stored, one to 40 steps at offsets up to 80, one to four tiles whose
// segments and outputs lie anywhere, even on each other; or edge tiles:
// offsets from -20, two classes of fuzz-chosen masks, the draws whose
// kept lanes fall outside x refused by EdgeTiles and skipped) on inputs,
// weights and biases with NaN, ±Inf, ±0 and subnormals, on every vector
// phase kernel and the Go twin, against the float64 definition. Finite
// values stay within ±4: no float32 overflow the reference would miss.
func FuzzPhaseRun(f *testing.F) {
	f.Add([]byte{2, 11, 3, 0, 5, 9, 1, 0, 0, 0, 1, 40})
	f.Add([]byte{0, 1, 39, 80, 2, 2, 3, 0x81, 0, 1, 7, 7, 0x90})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzIn{b: data}
		edges := in.intn(2) == 1 // masked loads: offsets from -20, two classes of masks
		rows := PhaseRows[in.intn(len(PhaseRows))]
		n, k := 1+in.intn(rows), 1+in.intn(40)
		flags := uint(phaseSpread)
		if rows < PhaseOneRows {
			flags = phaseFlags[in.intn(len(phaseFlags))] // pairs: rows pair the column phases of channels
		}
		if phaseStore(flags&3) == phasePairs {
			n += n % 2
		}
		off := make([]int, k)
		for q := range off {
			off[q] = in.intn(81)
			if edges {
				off[q] -= 20
			}
		}
		const ldo = 102 // a channel's 32 outputs (pairs) from at most 69 stay clear of the next's
		tiles := 1 + in.intn(4)
		at := make([]int, 4*tiles)
		for i := range at {
			at[i] = in.intn(70)
		}
		var cls []int
		var masks [][]uint16
		if edges {
			for range 2 * tiles {
				cls = append(cls, in.intn(2))
			}
			for range 2 {
				m := make([]uint16, k)
				for q := range m {
					m[q] = uint16(in.byte())<<8 | uint16(in.byte())
				}
				masks = append(masks, m)
			}
		}
		x := in.floats(170, 4)
		a, bias := in.floats(k*rows, 4), in.floats(rows, 4)
		ts, err := NewPhaseTiles(at)
		if err != nil {
			t.Fatal(err)
		}
		const base = 1
		init := in.floats(base+ts.oLast+phaseReach(n, ldo, flags), 4)
		kernels := phaseKernels()
		for _, kern := range kernels {
			p, err := newPhaseProduct(kern, off)
			if err != nil {
				t.Fatal(err)
			}
			run := ts
			switch {
			case edges:
				pm, err := p.NewMasks(masks)
				if err != nil {
					t.Fatal(err)
				}
				var at6 []int
				for tl := range tiles {
					at6 = append(append(at6, at[4*tl:4*tl+4]...), cls[2*tl:2*tl+2]...)
				}
				if run, err = p.EdgeTiles(at6, pm, len(x)); err != nil {
					return // a mask keeps a lane outside x: refused, as it must be
				}
			case ts.xFirst+p.least < 0 || ts.xLast+p.reach > len(x):
				return
			}
			y := newGuarded(len(init), 0)
			copy(y.Data, init)
			// Tiles that overlap write in tile order: the definition's order.
			want := phaseRunWant(rows, n, a, bias, x, off, at, cls, masks, y.Data, base, ldo, flags)
			runPhase(p, flags, rows, n, a, bias, x, y.Data, base, ldo, run)
			y.check(t, "phase run")
			comparePhaseRun(t, y.Data, want, fmt.Sprintf("rows %d, n %d, k %d, flags %#x, offsets %v, tiles %v", rows, n, k, flags, off, at))
		}
	})
}

// TestPhaseRunChecks: reads and writes past their slices (before x's
// start too), bad panel heights, tiles and edge tiles (reads a mask keeps
// outside the input, classes and masks that do not fit, another
// product's) are refused.
func TestPhaseRunChecks(t *testing.T) {
	if _, err := newPhaseProduct(convPhaseGo, nil); err == nil {
		t.Error("no steps accepted")
	}
	for _, at := range [][]int{nil, {0, 0, 0}, {0, 0, 0, -1}} {
		if _, err := NewPhaseTiles(at); err == nil {
			t.Errorf("tiles %v accepted", at)
		}
	}
	p, err := newPhaseProduct(convPhaseGo, []int{0, 4})
	if err != nil {
		t.Fatal(err)
	}
	before, err := newPhaseProduct(convPhaseGo, []int{-1, 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range [][][]uint16{nil, {{1}}} {
		if _, err := before.NewMasks(m); err == nil {
			t.Errorf("masks %v accepted", m)
		}
	}
	pm, err := before.NewMasks([][]uint16{{1, 1}, {0, 0x8000}, {0xfffe, 0x7fff}})
	if err != nil {
		t.Fatal(err)
	}
	others, err := p.NewMasks([][]uint16{{0xffff, 0xffff}})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		at []int
		m  *PhaseMasks
	}{
		"five values a tile": {[]int{0, 0, 0, 1, 0}, pm},
		"class past masks":   {[]int{0, 0, 0, 1, 0, 3}, pm},
		"negative output":    {[]int{0, 0, -1, 1, 2, 2}, pm},
		"another's masks":    {[]int{0, 0, 0, 1, 0, 0}, others},
		"kept lane before x": {[]int{0, 0, 0, 1, 0, 2}, pm}, // class 0, step 0 reads x[-1]
		"kept lane past x":   {[]int{0, 0, 0, 1, 2, 1}, pm}, // class 1, step 1 reads x[19] of 19
	} {
		if _, err := before.EdgeTiles(c.at, c.m, 19); err == nil {
			t.Errorf("edge tiles with %s accepted", name)
		}
	}
	edges, err := before.EdgeTiles([]int{0, 0, 0, 1, 2, 2}, pm, 19)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := NewPhaseTiles([]int{0, 0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	far, err := NewPhaseTiles([]int{0, 1, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	a, bias, x, y := make([]float32, 24), make([]float32, 12), make([]float32, 20), make([]float32, 64)
	buf := make([]float32, 64)
	for name, f := range map[string]func(){
		"rows 6":         func() { p.Run(6, 1, a, bias, x, y, 0, 32, ts) },
		"n past rows":    func() { p.Run(4, 5, a, bias, x, y, 0, 32, ts) },
		"short A":        func() { p.Run(12, 1, a[:23], bias, x, y, 0, 32, ts) },
		"short bias":     func() { p.Run(8, 1, a, bias[:7], x, y, 0, 32, ts) },
		"x past its end": func() { p.Run(4, 1, a, bias, x, y, 0, 32, far) },
		"y past its end": func() { p.Run(4, 2, a, bias, x, y, 1, 32, ts) },
		"negative base":  func() { p.Run(4, 1, a, bias, x, y, -1, 32, ts) },
		"overlap":        func() { p.Run(4, 1, a, bias, buf[10:30], buf, 0, 32, ts) },
		"x before start": func() { before.Run(4, 1, a, bias, x, y, 0, 32, ts) },
		"edges of other": func() { p.Run(4, 1, a, bias, x, y, 0, 32, edges) },
		"edges short x":  func() { before.Run(4, 1, a, bias, x[:18], y, 0, 32, edges) },
		"pairs odd n":    func() { p.RunPairs(4, 3, a, bias, x, y, 0, 32, ts) },
		"pairs 16 rows":  func() { p.RunPairs(16, 2, make([]float32, 32), make([]float32, 16), x, y, 0, 32, ts) },
		"pairs past y":   func() { p.RunPairs(4, 4, a, bias, x, y, 0, 32, ts) }, // y[32+1+31]
		"whole 16 rows":  func() { p.RunWhole(16, 2, make([]float32, 32), make([]float32, 16), x, y, 0, 32, ts, 0) },
		"whole past y":   func() { p.RunWhole(4, 2, a, bias, x, y, 17, 32, ts, 0) }, // y[17+1+32+15]
		"whole pairs":    func() { p.RunWhole(4, 2, a, bias, x, y, 0, 32, ts, uint(phasePairs)) },
	} {
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "asm: phase") {
					t.Errorf("%s: %v", name, v)
				}
			}()
			f()
		}()
	}
}
