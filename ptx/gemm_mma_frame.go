package ptx

import (
	"fmt"
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// gemmFrame is what the SIMT and the tensor-core GEMM share: the checked
// descriptor's parameters, the index width, each operand's batch offset
// (from %ctaid.z) and the epilogue.
type gemmFrame struct {
	f                 *fn
	x                 ix
	out, a, b, c, res string // global pointers; c and res empty when absent
	aOff, bOff, cOff  string // batch offsets in elements
	outOff            string
	batches           int
}

// newGemmFrame checks g's dtypes, epilogue and batch geometry for blocks
// of bm rows, declares the parameters (out, a, b, then c, then res) and
// emits the batch offsets.
func newGemmFrame(g *Gemm, bm int) (*gemmFrame, error) {
	for _, dt := range []tensor.DType{g.A, g.B, g.Out} {
		if err := floatOnly(dt); err != nil {
			return nil, err
		}
	}
	if g.HasC {
		if err := floatOnly(g.CType); err != nil {
			return nil, err
		}
	}
	if g.HasRes {
		if err := floatOnly(g.ResType); err != nil {
			return nil, err
		}
	}
	if g.Act != graph.OpInvalid && !graph.IsEpilogueAct(g.Act) {
		return nil, fmt.Errorf("ptx: %s: %v is not an epilogue activation", g.Name, g.Act)
	}
	nb := len(g.Batch)
	if len(g.ABatch) != nb || len(g.BBatch) != nb || (g.HasC && len(g.CBatch) != nb) {
		return nil, fmt.Errorf("ptx: %s: batch strides do not match %d batch dims", g.Name, nb)
	}
	batches := product(g.Batch)
	if batches > MaxGridYZ {
		return nil, fmt.Errorf("ptx: %s: %d batches exceed the grid's z limit %d", g.Name, batches, MaxGridYZ)
	}
	if gy := CeilDiv(g.M, bm); gy > MaxGridYZ {
		return nil, fmt.Errorf("ptx: %s: M=%d needs %d row blocks (limit %d)", g.Name, g.M, gy, MaxGridYZ)
	}
	f := newFn(g.Name)
	fr := &gemmFrame{f: f, batches: batches}
	fr.out, fr.a, fr.b = f.ptrParam("out"), f.ptrParam("a"), f.ptrParam("b")
	if g.HasC {
		fr.c = f.ptrParam("c")
	}
	if g.HasRes {
		fr.res = f.ptrParam("res")
	}
	// Index width: 64-bit if any operand can span 2³¹ elements.
	span := func(batch []int, sm, sn, m, n int) int {
		return absSum(batch, g.Batch) + abs(sm)*max(m-1, 0) + abs(sn)*max(n-1, 0) + 1
	}
	big := max(span(g.ABatch, g.ASm, g.ASk, g.M, g.K), span(g.BBatch, g.BSk, g.BSn, g.K, g.N), batches*g.M*g.N)
	if g.HasC {
		big = max(big, span(g.CBatch, g.CSm, g.CSn, g.M, g.N))
	}
	x := ix{f: f, wide: big > math.MaxInt32/2}
	fr.x = x
	bz := f.reg(cB32)
	f.op("mov.u32 %s, %%ctaid.z", bz)
	bzx := x.ext(bz)
	strides := [][]int{g.ABatch, g.BBatch}
	if g.HasC {
		strides = append(strides, g.CBatch)
	}
	offs := x.offsets(bzx, g.Batch, strides, nil)
	if nb == 0 {
		for i := range offs {
			offs[i] = x.imm(0)
		}
	}
	fr.aOff, fr.bOff = offs[0], offs[1]
	if g.HasC {
		fr.cOff = offs[2]
	}
	fr.outOff = x.reg()
	f.op("mul.lo.%s %s, %s, %d", x.t(), fr.outOff, bzx, g.M*g.N)
	return fr, nil
}

// ext widens a u32 register to the index width.
func (x ix) ext(r string) string {
	if !x.wide {
		return r
	}
	w := x.f.reg(cB64)
	x.f.op("cvt.u64.u32 %s, %s", w, r)
	return w
}

// epilogue finishes element (gm, gn) (u32 registers) from its f32
// accumulator v: alpha, beta·C, the activation, the residual, then the
// store in g.Out; elements outside M×N are skipped.
func (fr *gemmFrame) epilogue(g *Gemm, gm, gn, v string) error {
	f, x := fr.f, fr.x
	p := f.reg(cPred)
	skip := f.label("skip")
	f.op("setp.ge.u32 %s, %s, %d", p, gm, g.M)
	f.op("@%s bra %s", p, skip)
	f.op("setp.ge.u32 %s, %s, %d", p, gn, g.N)
	f.op("@%s bra %s", p, skip)
	gmx, gnx := x.ext(gm), x.ext(gn)
	y := f.reg(cF32)
	f.op("mul.f32 %s, %s, %s", y, v, fimm(g.Alpha))
	if g.HasC {
		ci := x.mad(gmx, g.CSm, fr.cOff)
		ci = x.mad(gnx, g.CSn, ci)
		f.op("fma.rn.f32 %s, %s, %s, %s", y, f.load(g.CType, x.addr(fr.c, ci, g.CType.Size())), fimm(g.Beta), y)
	}
	if g.Act != graph.OpInvalid {
		a, err := f.unary(Instr{Op: g.Act, DType: tensor.F32}, val{y, kF32, tensor.F32})
		if err != nil {
			return err
		}
		y = a.r
	}
	oi := x.mad(gmx, g.N, fr.outOff)
	r := x.reg()
	f.op("add.%s %s, %s, %s", x.t(), r, oi, gnx)
	if g.HasRes {
		ry := f.reg(cF32)
		f.op("add.f32 %s, %s, %s", ry, y, f.load(g.ResType, x.addr(fr.res, r, g.ResType.Size())))
		y = ry
	}
	f.store(g.Out, x.addr(fr.out, r, g.Out.Size()), y)
	f.place(skip)
	return nil
}
