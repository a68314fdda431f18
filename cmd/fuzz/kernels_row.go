package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kilnml/kiln/ops/asm"
)

// near: both NaN, equal infinities, or within tol.
func near(g, w float64, tol float64) bool {
	switch {
	case math.IsNaN(g) || math.IsNaN(w):
		return math.IsNaN(g) && math.IsNaN(w)
	case math.IsInf(g, 0) || math.IsInf(w, 0):
		return g == w
	}
	return math.Abs(g-w) <= tol
}

// acrossOverflow reports whether g and w are the same sum rounded to
// either side of float32's largest value: one ±Inf, the other finite of
// the same sign within tol of it. With Alpha near 3e38 the variants' sums,
// rounded in other orders, land either side (seeds 4264142, 4368023).
func acrossOverflow(g, w float32, tol float64) bool {
	gi, wi := math.IsInf(float64(g), 0), math.IsInf(float64(w), 0)
	if gi == wi || math.Signbit(float64(g)) != math.Signbit(float64(w)) {
		return false
	}
	f := math.Abs(float64(g))
	if gi {
		f = math.Abs(float64(w))
	}
	return math.MaxFloat32-f <= tol
}

func rowCase(r *rand.Rand) (string, error) {
	vs := asm.RowVariants()
	twin := vs[len(vs)-1]
	n := kernelLen(r)
	x := newRegion(r, n)
	sumAbs := 0.0
	for i := range x.s() {
		v := float32(r.NormFloat64() * 10)
		if r.IntN(40) == 0 {
			v = value(r)
		}
		x.s()[i] = v
		sumAbs += math.Abs(float64(v))
	}
	op := r.IntN(7)
	name := fmt.Sprintf("row/%s/n=%d", []string{"sum", "sumsqdev", "max", "min", "softmax", "logsoftmax", "layernorm"}[op], n)
	for _, v := range vs[:len(vs)-1] {
		switch op {
		case 0:
			if g, w := v.Sum(x.s()), twin.Sum(x.s()); !near(g, w, 1e-12*sumAbs) {
				return name, fmt.Errorf("%s: %g, twin %g", v.Name, g, w)
			}
		case 1:
			if g, w := v.SumSqDev(x.s(), 0.5), twin.SumSqDev(x.s(), 0.5); !near(g, w, 1e-12*math.Abs(w)) {
				return name, fmt.Errorf("%s: %g, twin %g", v.Name, g, w)
			}
		case 2, 3:
			f, t := v.Max, twin.Max
			if op == 3 {
				f, t = v.Min, twin.Min
			}
			if g, w := f(x.s()), t(x.s()); !sameBits(g, w) {
				return name, fmt.Errorf("%s: %g, twin %g", v.Name, g, w)
			}
		default:
			got, want := newRegion(r, n), newRegion(r, n)
			switch op {
			case 4:
				v.Softmax(got.s(), x.s())
				twin.Softmax(want.s(), x.s())
			case 5:
				v.LogSoftmax(got.s(), x.s())
				twin.LogSoftmax(want.s(), x.s())
			case 6:
				v.LayerNorm(got.s(), x.s(), nil, nil, 1e-5)
				twin.LayerNorm(want.s(), x.s(), nil, nil, 1e-5)
			}
			if err := got.intact(); err != nil {
				return name, fmt.Errorf("%s: %w", v.Name, err)
			}
			for i, w := range want.s() {
				g := got.s()[i]
				if !near(float64(g), float64(w), 4e-6*(math.Abs(float64(w))+1e-30)+1e-7) {
					return name, fmt.Errorf("%s: element %d: %g, twin %g (x=%g)", v.Name, i, g, w, x.s()[i])
				}
			}
		}
	}
	return name, nil
}

func gemmCase(r *rand.Rand) (string, error) {
	vs := asm.GemmVariants()
	twin := vs[len(vs)-1]
	dim := func() int {
		if r.IntN(3) == 0 {
			return 1 + r.IntN(300)
		}
		return r.IntN(40)
	}
	cfg := asm.GemmConfig{M: dim(), N: dim(), K: dim(), TransA: r.IntN(2) == 0, TransB: r.IntN(2) == 0, Alpha: 1}
	switch r.IntN(6) {
	case 0, 1:
		cfg.Alpha = float32(r.NormFloat64())
	case 2: // the float32 extremes: alpha multiplies the finished sums
		cfg.Alpha = []float32{1e38, -3e38, 1e-38, 1e-45}[r.IntN(4)]
	}
	ar, ac := cfg.M, cfg.K
	if cfg.TransA {
		ar, ac = ac, ar
	}
	br, bc := cfg.K, cfg.N
	if cfg.TransB {
		br, bc = bc, br
	}
	cfg.LDA, cfg.LDB, cfg.LDC = ac+r.IntN(3), bc+r.IntN(3), cfg.N+r.IntN(3)
	cfg.Accumulate = cfg.Alpha == 1 && r.IntN(3) == 0 // Accumulate needs Alpha 1
	name := fmt.Sprintf("gemm/m=%d,n=%d,k=%d,ta=%v,tb=%v,acc=%v", cfg.M, cfg.N, cfg.K, cfg.TransA, cfg.TransB, cfg.Accumulate)
	span := func(rows, cols, ld int) int {
		if rows == 0 || cols == 0 {
			return 0
		}
		return (rows-1)*ld + cols
	}
	a, b := newRegion(r, span(ar, ac, cfg.LDA)), newRegion(r, span(br, bc, cfg.LDB))
	fill := func(s []float32) {
		for i := range s {
			s[i] = float32(r.NormFloat64())
			if r.IntN(500) == 0 {
				s[i] = specials[r.IntN(5)] // NaN, ±Inf, ±0
			}
		}
	}
	fill(a.s())
	fill(b.s())
	c0 := make([]float32, span(cfg.M, cfg.N, cfg.LDC))
	fill(c0)
	run := func(v *asm.GemmVariant) (*region, error) {
		c := newRegion(r, len(c0))
		copy(c.s(), c0)
		g, err := asm.NewGemm(cfg, v, asm.Par{})
		if err == nil {
			err = g.Run(&asm.GemmArgs{A: a.s(), B: b.s(), C: c.s()})
		}
		return c, err
	}
	want, err := run(twin)
	if err != nil {
		return name, err
	}
	for _, v := range vs[:len(vs)-1] {
		got, err := run(v)
		if err != nil {
			return name, fmt.Errorf("%s: %w", v.Name, err)
		}
		if err := got.intact(); err != nil {
			return name, fmt.Errorf("%s: %w", v.Name, err)
		}
		for i, w := range want.s() {
			g := got.s()[i]
			c := math.Abs(float64(c0[i]))
			if !cfg.Accumulate || c > 1e30 || c != c {
				c = 0
			}
			tol := 1e-5 * (float64(cfg.K) + 1) * (math.Abs(float64(cfg.Alpha)) + 1) * (c + 1)
			if !near(float64(g), float64(w), tol) && !acrossOverflow(g, w, tol) {
				return name, fmt.Errorf("%s: C[%d] = %g, twin %g", v.Name, i, g, w)
			}
		}
	}
	return name, nil
}
