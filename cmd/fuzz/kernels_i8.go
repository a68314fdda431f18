package main

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/kilnml/kiln/ops/asm"
)

// i8Canary fills the int32s around a case's C: no sum of the products
// here reaches it (it needs K > 65000 steps at the extremes).
const i8Canary = -0x5a5a5a5b

// gemmI8Case runs one random int8 product (u8 × s8 → int32) on every
// assembly variant and compares C and the row sums with the Go twin's,
// bit for bit (every variant computes the sum modulo 2³²), with canaries
// around C.
func gemmI8Case(r *rand.Rand) (string, error) {
	vs := asm.GemmU8S8Variants()
	twin := vs[len(vs)-1]
	dim := func(big int) int {
		if r.IntN(3) == 0 {
			return 1 + r.IntN(big)
		}
		return r.IntN(40)
	}
	m, n, k := dim(100), dim(200), dim(1300) // K past a depth block (1024)
	cfg := asm.GemmU8S8Config{M: m, N: n, K: k, LDA: max(k+r.IntN(3), 1), LDC: max(n+r.IntN(3), 1)}
	transB := r.IntN(2) == 0
	name := fmt.Sprintf("gemm-i8/m=%d,n=%d,k=%d,tb=%v", m, n, k, transB)
	// Values: uniform, or the extremes that break saturating kernels.
	u8 := func() uint8 {
		if r.IntN(3) == 0 {
			return []uint8{0, 1, 127, 128, 254, 255}[r.IntN(6)]
		}
		return uint8(r.Uint32())
	}
	s8 := func() int8 {
		if r.IntN(3) == 0 {
			return []int8{-128, -127, -1, 0, 1, 127}[r.IntN(6)]
		}
		return int8(r.Uint32())
	}
	a := make([]uint8, max(0, (m-1)*cfg.LDA+k))
	for i := range a {
		a[i] = u8()
	}
	ldb := n + r.IntN(3)
	brows := k
	if transB {
		ldb, brows = k+r.IntN(3), n
	}
	ldb = max(ldb, 1)
	b := make([]int8, brows*ldb)
	for i := range b {
		b[i] = s8()
	}
	var pb asm.PackedU8S8
	if err := asm.PackU8S8(&pb, b, k, n, ldb, transB); err != nil {
		return name, err
	}
	cn := max(0, (m-1)*cfg.LDC+n)
	run := func(v *asm.GemmU8S8Variant) (c, rows []int32, err error) {
		all := make([]int32, cn+2*padElems)
		for i := range all {
			all[i] = i8Canary
		}
		rows = make([]int32, m)
		g, err := asm.NewGemmU8S8(cfg, v, asm.Par{})
		if err == nil {
			err = g.Run(&asm.GemmU8S8Args{A: a, B: &pb, C: all[padElems : padElems+cn], RowSums: rows})
		}
		for i, x := range all {
			if (i < padElems || i >= padElems+cn) && x != i8Canary {
				return nil, nil, fmt.Errorf("wrote out of bounds at element %d of a %d-element C", i-padElems, cn)
			}
		}
		return all[padElems : padElems+cn], rows, err
	}
	want, wantRows, err := run(twin)
	if err != nil {
		return name, err
	}
	for _, v := range vs[:len(vs)-1] {
		got, rows, err := run(v)
		if err != nil {
			return name, fmt.Errorf("%s: %w", v.Name, err)
		}
		for i := range want {
			if got[i] != want[i] {
				return name, fmt.Errorf("%s: C[%d] = %d, twin %d", v.Name, i, got[i], want[i])
			}
		}
		if !slices.Equal(rows, wantRows) {
			return name, fmt.Errorf("%s: row sums %v, twin %v", v.Name, rows, wantRows)
		}
	}
	return name, nil
}
