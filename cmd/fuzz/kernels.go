package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/kilnml/kiln/ops/asm"
)

// padElems of canaries surround every buffer a kernel mode case hands to
// a kernel; the buffer starts at a random element offset, so alignment
// and tails vary.
const padElems = 24

// canaryBits is what the pads hold: a NaN payload no kernel produces.
const canaryBits = 0x7fc0dead

// region is a buffer of n floats inside canaries.
type region struct {
	all []float32
	off int
	n   int
}

func newRegion(r *rand.Rand, n int) *region {
	g := &region{all: make([]float32, n+2*padElems), off: padElems - r.IntN(16), n: n}
	for i := range g.all {
		g.all[i] = math.Float32frombits(canaryBits)
	}
	return g
}

func (g *region) s() []float32 { return g.all[g.off : g.off+g.n : g.off+g.n] }

// intact reports the first damaged canary index relative to the buffer.
func (g *region) intact() error {
	for i, v := range g.all {
		if (i < g.off || i >= g.off+g.n) && math.Float32bits(v) != canaryBits {
			return fmt.Errorf("wrote out of bounds at element %d of a %d-element buffer", i-g.off, g.n)
		}
	}
	return nil
}

// value is a random float32, with NaN, ±Inf, ±0, denormals, huge and
// tiny values among them.
func value(r *rand.Rand) float32 {
	switch r.IntN(12) {
	case 0:
		return specials[r.IntN(len(specials))]
	case 1:
		return math.Float32frombits(r.Uint32()) // any bit pattern
	case 2:
		return float32(r.NormFloat64() * 100)
	}
	return float32(r.NormFloat64())
}

func kernelLen(r *rand.Rand) int {
	switch r.IntN(6) {
	case 0:
		return 1000 + r.IntN(80)
	case 1:
		return r.IntN(5000)
	}
	return r.IntN(71)
}

// sameBits: equal bits, or both NaN.
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

func fuzzKernels(seed uint64, n int, deadline time.Time, verbose bool) stats {
	var st stats
	for i := 0; (n == 0 || i < n) && (n > 0 || time.Now().Before(deadline)); i++ {
		s := seed + uint64(i)
		st.cases++
		name, err := kernelCase(s)
		if verbose {
			fmt.Printf("kernel case seed=%d %s: %v\n", s, name, err)
		}
		if err != nil {
			fmt.Printf("FAIL kernel seed=%d %s: %v\n", s, name, err)
			st.fail("kernel/"+name, fmt.Sprintf("-mode kernels -seed %d -n 1   (%v)", s, firstLine(err.Error())))
		}
	}
	return st
}

// kernelCase runs one random kernel of every assembly variant against
// the Go twin; it returns the kernel's name and the first problem.
func kernelCase(seed uint64) (name string, err error) {
	r := rand.New(rand.NewPCG(seed, 0x6b726e6c))
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	switch r.IntN(4) {
	case 0:
		return ewCase(r)
	case 1:
		return rowCase(r)
	case 2:
		return gemmI8Case(r)
	}
	return gemmCase(r)
}

func ewCase(r *rand.Rand) (string, error) {
	vs := asm.EwVariants()
	twin := vs[len(vs)-1]
	n := kernelLen(r)
	x, y := newRegion(r, n), newRegion(r, n)
	for i := range x.s() {
		x.s()[i], y.s()[i] = value(r), value(r)
	}
	sc := value(r)
	kind, uop, bop := r.IntN(4), asm.EwUnary(r.IntN(int(asm.EwAbs)+1)), asm.EwBinary(r.IntN(int(asm.EwMin)+1))
	name := fmt.Sprintf("ew/%v/n=%d", uop, n)
	if kind > 0 {
		name = fmt.Sprintf("ew/%v/form=%d/n=%d", bop, kind, n)
	}
	run := func(k *asm.EwKernels, dst *region) error {
		switch kind {
		case 0:
			return k.Unary(uop, dst.s(), x.s())
		case 1:
			return k.Binary(bop, dst.s(), x.s(), y.s())
		case 2:
			return k.BinaryScalar(bop, dst.s(), x.s(), sc)
		}
		return k.ScalarBinary(bop, dst.s(), sc, y.s())
	}
	want := newRegion(r, n)
	if err := run(twin, want); err != nil {
		return name, err
	}
	for _, v := range vs[:len(vs)-1] {
		got := newRegion(r, n)
		if err := run(v, got); err != nil {
			return name, fmt.Errorf("%s: %w", v.Name, err)
		}
		if err := got.intact(); err != nil {
			return name, fmt.Errorf("%s: %w", v.Name, err)
		}
		for i, w := range want.s() {
			if g := got.s()[i]; !sameBits(g, w) {
				return name, fmt.Errorf("%s: element %d: got %g (%#x), twin %g (%#x); x=%g y=%g s=%g",
					v.Name, i, g, math.Float32bits(g), w, math.Float32bits(w), x.s()[i], y.s()[i], sc)
			}
		}
	}
	return name, nil
}
