package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPadRows checks every padded-rows kernel, and the Go twin, against
// the definition: row widths from 1 to 70 (rows of less than one chunk,
// whole chunks, a chunk past the input on either side), left pads 0-17
// (a whole chunk of zeros first), right pads 0-20, the input's
// NaN payloads carried, guards around dst left alone.
func TestPadRows(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	kernels := map[string]padRowsKernel{"go": padRowsGo}
	for _, k := range convFamily.asm {
		if k.padRows != nil {
			kernels[string(k.feature)] = k.padRows
		}
	}
	for name, k := range kernels {
		for _, w := range []int{1, 5, 16, 17, 40, 70} {
			for _, pl := range []int{0, 1, 3, 16, 17} {
				for _, pr := range []int{0, 1, 2, 20} {
					t.Run(fmt.Sprintf("%s/w=%d/pl=%d/pr=%d", name, w, pl, pr), func(t *testing.T) {
						rows, wp := 1+r.IntN(3), pl+w+pr
						src := randFloats(r, rows*w)
						src[r.IntN(len(src))] = math.Float32frombits(0x7fc01234)
						dst := newGuarded(rows*wp, 0)
						copy(dst.Data, randFloats(r, len(dst.Data))) // every float must be written
						masks := padMasks(w, wp, pl)
						k(&dst.Data[0], &src[0], rows, w, wp, pl, &masks[0], len(masks))
						dst.check(t, "padded rows")
						want := make([]float32, rows*wp)
						for i := range rows {
							copy(want[i*wp+pl:], src[i*w:(i+1)*w])
						}
						if !slicesBitsEq(dst.Data, want) {
							t.Fatalf("rows %d: %v, want %v", rows, dst.Data, want)
						}
					})
				}
			}
		}
	}
}

// TestPadBands checks the padded copy written in bands of rows (the
// chunks of an ungrouped convolution's padding) against the one written
// plane by plane: random geometries of one to three images, every float
// written (the buffer starts as NaNs), and the rows cut into random
// bands, some crossing from one image into the next, written in random
// order.
func TestPadBands(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	nan := float32(math.NaN())
	for i := range 200 {
		k := 1 + 2*r.IntN(3)
		tg := tgeom{N: 1 + r.IntN(3), C: 1 + r.IntN(5), H: 1 + r.IntN(20), W: 1 + r.IntN(40), M: 4, KH: k, KW: k,
			SH: 1 + r.IntN(2), SW: 1 + r.IntN(2), PT: r.IntN(3), PL: r.IntN(3), PB: r.IntN(3), PR: r.IntN(3)}
		g := tg.normalised()
		if g.OH < 1 || g.OW < 1 {
			continue
		}
		c, err := NewConv2D(g, false, nil, nil, goPar(3))
		if err != nil {
			t.Fatal(err)
		}
		if !c.pad.copy {
			continue
		}
		x := randFloats(r, g.N*g.C*g.H*g.W)
		buf := c.padInput(x, false)
		fill(buf, nan)
		c.padPlanes(0, 0, g.N*g.C)
		want := slices.Clone(buf)
		fill(buf, nan)
		rows := g.N * c.pad.hp
		cuts := []int{0, rows}
		for range r.IntN(6) {
			cuts = append(cuts, r.IntN(rows+1))
		}
		slices.Sort(cuts)
		for _, j := range r.Perm(len(cuts) - 1) {
			c.padBands(0, cuts[j], cuts[j+1])
		}
		if !slicesBitsEq(buf, want) {
			t.Fatalf("case %d %+v, bands %v: the bands' copy differs from the planes'", i, tg, cuts)
		}
		c.releasePad()
	}
}
