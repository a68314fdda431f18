package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
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
