package ptxemu

import (
	"fmt"
	"math"
)

// mma.sync.aligned.{m16n8k8,m16n8k16}.row.col.dtype.{f16,bf16}x2.ctype
// with the fragment layouts of the PTX ISA. With groupID g = lane/4 and
// threadID_in_group q = lane%4:
//
//	A (16×K, .row), element i of the lane's halves (two per register):
//	  row g + 8·((i/2)%2), column 2q + i%2 + 8·(i/4)
//	B (K×8, .col), element i: row 2q + i%2 + 8·(i/2), column g
//	C, D (16×8), element i: row g + 8·(i/2), column 2q + i%2
//
// Products are exact and summed in float64, then rounded once to the
// accumulator type (hardware accumulates in a wider internal format, so
// it may differ in the last bit).

func mmaARow(lane, i int) (int, int) { return lane/4 + 8*((i/2)%2), 2*(lane%4) + i%2 + 8*(i/4) }
func mmaBCol(lane, i int) (int, int) { return 2*(lane%4) + i%2 + 8*(i/2), lane / 4 }
func mmaCRow(lane, i int) (int, int) { return lane/4 + 8*(i/2), 2*(lane%4) + i%2 }

// decMma decodes the supported mma shapes and types.
func decMma(d *dec) error {
	if !d.has("sync") || !d.has("aligned") {
		return fmt.Errorf("mma needs .sync.aligned")
	}
	k := map[string]int{"m16n8k8": 8, "m16n8k16": 16}[d.oneOf("m16n8k8", "m16n8k16")]
	if k == 0 {
		return fmt.Errorf("mma: only shapes m16n8k8 and m16n8k16 are supported")
	}
	if !d.has("row") || !d.has("col") {
		return fmt.Errorf("mma with f16/bf16 inputs needs .row.col")
	}
	if len(d.types) != 4 {
		return fmt.Errorf("mma needs four types (d, a, b, c)")
	}
	dt, at, bt, ct := d.types[0], d.types[1], d.types[2], d.types[3]
	switch {
	case at != bt || (at != tF16 && at != tBF16):
		return fmt.Errorf("mma inputs must both be .f16 or both .bf16")
	case dt != ct || (dt != tF32 && dt != tF16):
		return fmt.Errorf("mma accumulators must both be .f32 or both .f16")
	case dt == tF16 && at != tF16:
		return fmt.Errorf("mma with .bf16 inputs accumulates in .f32")
	}
	na, nb, nc := k/4, k/8, 4
	if dt == tF16 {
		nc = 2
	}
	if err := d.nops(4); err != nil {
		return err
	}
	sizes := []int{nc, na, nb, nc}
	for i, n := range sizes {
		o, err := d.k.parseOperand(d.raw[i])
		if err != nil {
			return err
		}
		if o.kind != okVec || len(o.vec) != n {
			return fmt.Errorf("mma operand %d needs %d registers in braces", i, n)
		}
		for _, r := range o.vec {
			if r < 0 {
				return fmt.Errorf("mma operands cannot be sinks")
			}
			if err := d.checkReg(r, tB32); err != nil {
				return err
			}
		}
		d.in.op = append(d.in.op, o)
	}
	d.in.t, d.in.t2, d.in.mode = dt, at, k
	d.in.coll, d.in.warp = collWarp, mmaResolve
	return nil
}

// half16 reads element i of a vector of b32 registers holding 16-bit
// halves (element 0 in the low half of register 0).
func half16(u *thread, o *operand, i int) uint64 {
	return (u.r(o.vec[i/2]) >> uint(16*(i%2))) & 0xffff
}

func mmaResolve(b *block, lanes []thread, t *thread) (bool, *Error) {
	ok, err := alignedReady(b, lanes, t)
	if !ok || err != nil {
		return false, err
	}
	in := t.wait
	k := in.mode
	var A [16][16]float64
	var B [16][8]float64
	var C [16][8]float64
	who := t
	err = b.collect(&who, in, func() {
		for l := range lanes {
			u := &lanes[l]
			who = u
			for i := range k / 2 {
				r, c := mmaARow(l, i)
				A[r][c] = half(half16(u, &in.op[1], i), in.t2)
			}
			for i := range k / 4 {
				r, c := mmaBCol(l, i)
				B[r][c] = half(half16(u, &in.op[2], i), in.t2)
			}
			for i := range 4 {
				r, c := mmaCRow(l, i)
				if in.t == tF32 {
					C[r][c] = float64(f32(u.r(in.op[3].vec[i])))
				} else {
					C[r][c] = half(half16(u, &in.op[3], i), tF16)
				}
			}
		}
	})
	if err != nil {
		return false, err
	}
	for l := range lanes {
		u := &lanes[l]
		var packed [2]uint64
		for i := range 4 {
			r, c := mmaCRow(l, i)
			s := C[r][c]
			for kk := range k {
				s += A[r][kk] * B[kk][c]
			}
			if in.t == tF32 {
				if math.IsNaN(s) {
					u.set(in.op[0].vec[i], nanF32)
				} else {
					u.set(in.op[0].vec[i], f32bits(float32(s)))
				}
				continue
			}
			packed[i/2] |= fbits(s, tF16, rRN) << uint(16*(i%2))
		}
		if in.t == tF16 {
			u.set(in.op[0].vec[0], packed[0])
			u.set(in.op[0].vec[1], packed[1])
		}
		release(u)
	}
	return true, nil
}
