package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// tapPackers are the Go twin ("go") and every vector tap packer, by
// feature.
func tapPackers() map[string]*TapPacker {
	ps := map[string]*TapPacker{"go": {pack: convTPackTapsGo}}
	for _, k := range convFamily.asm {
		if k.packTaps != nil {
			ps[string(k.feature)] = &TapPacker{pack: k.packTaps}
		}
	}
	return ps
}

// TestTapPacker checks every packer against the definition: blocks of
// one to sixteen output channels by one to sixteen taps, input channels
// ldw apart with floats between them, each tap's rows anywhere in dst
// (its own stride), channels contiguous or (spread, up to eight) every
// other float, every other float of dst left as it was, and the
// non-finite report: a NaN or Inf among the weights read sets it, one
// in the floats between them does not.
func TestTapPacker(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for name, p := range tapPackers() {
		for _, n := range []int{1, 5, 8, 12, 16} {
			for _, taps := range []int{1, 4, 9, 16} {
				for _, c := range []int{1, 3} {
					for bad := range 6 { // none, one read, one between the rows read; then spread
						spread, e := bad >= 3, 1
						if spread {
							if n > TapPackerMax/2 {
								continue
							}
							e = 2
						}
						t.Run(fmt.Sprintf("%s/n=%d/taps=%d/c=%d/bad=%d/spread=%v", name, n, taps, c, bad%3, spread), func(t *testing.T) {
							ldw := n*taps + 3
							w := randFloats(r, (c-1)*ldw+n*taps)
							switch bad % 3 {
							case 1:
								w[(c-1)*ldw+r.IntN(n*taps)] = float32(math.Inf(-1))
							case 2:
								w = append(w, 0, 0, 0) // floats between input channels even at c = 1
								w[n*taps+r.IntN(3)] = float32(math.NaN())
							}
							// Tap t's rows start at a random row of its own region, a
							// random stride of at least n apart.
							var off, step []int
							size := 0
							for range taps {
								st := e*n + r.IntN(4)
								off, step = append(off, size+r.IntN(3)), append(step, st)
								size += 3 + c*st
							}
							dst := newGuarded(size, 0)
							copy(dst.Data, randFloats(r, size))
							want := slices.Clone(dst.Data)
							for q := range c {
								for k := range n {
									for tp := range taps {
										want[off[tp]+q*step[tp]+e*k] = w[q*ldw+k*taps+tp]
									}
								}
							}
							pack := p.Pack
							if spread {
								pack = p.PackSpread
							}
							got, err := pack(dst.Data, w, c, ldw, n, off, step)
							if err != nil {
								t.Fatal(err)
							}
							dst.check(t, "packed")
							if !slicesBitsEq(dst.Data, want) {
								t.Fatalf("packed %v, want %v", dst.Data, want)
							}
							if got != (bad%3 == 1) {
								t.Fatalf("non-finite %v, want %v", got, bad%3 == 1)
							}
						})
					}
				}
			}
		}
	}
}

// TestTapPackerErrors checks that bad operands get errors, not writes.
func TestTapPackerErrors(t *testing.T) {
	p := tapPackers()["go"]
	dst, w := make([]float32, 64), make([]float32, 64)
	off, step := []int{0, 8}, []int{16, 16}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"no input channels", func() error { _, err := p.Pack(dst, w, 0, 8, 4, off, step); return err }()},
		{"17 output channels", func() error { _, err := p.Pack(dst, w, 1, 40, 17, off, step); return err }()},
		{"steps for other taps", func() error { _, err := p.Pack(dst, w, 1, 8, 4, off, step[:1]); return err }()},
		{"weights overlapping", func() error { _, err := p.Pack(dst, w, 2, 7, 4, off, step); return err }()},
		{"short weights", func() error { _, err := p.Pack(dst, w[:15], 2, 8, 4, off, step); return err }()},
		{"past dst", func() error { _, err := p.Pack(dst[:40], w, 3, 8, 4, off, step); return err }()},
		{"negative offset", func() error { _, err := p.Pack(dst, w, 1, 8, 4, []int{-1, 8}, step); return err }()},
		{"spread past dst", func() error { _, err := p.PackSpread(dst[:30], w, 2, 8, 4, off, step); return err }()},
		{"spread of 9 channels", func() error { _, err := p.PackSpread(dst, w, 1, 40, 9, off, step); return err }()},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
