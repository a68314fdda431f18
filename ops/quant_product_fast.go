package ops

import (
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// The fast MatMulInteger runs on the int8 GEMM (asm.GemmU8S8: uint8
// activations times int8 weights, int32 sums). Other signednesses map
// onto it exactly (the package asm's int8 notes): an int8 A is A XOR 0x80
// read as uint8 with its zero point raised by 128, a uint8 B is B XOR
// 0x80 read as int8 with its zero point lowered by 128. The zero points
// then become corrections of the raw sums,
//
//	Σ_p (a-za)(b-zb) = Σ a·b − zb·Σ_p a − za·Σ_p b + K·za·zb,
//
// with A's row sums from the product's run and B's column sums from its
// packing. All of it is int32 arithmetic modulo 2³², so the result has
// the reference's bits. A B that is a param or constant is packed once
// and again only when the weights version moves.

func init() {
	// The int8 GEMM first; the int32 path takes what it leaves.
	RegisterFast(graph.OpMatMulInteger, prepareMatMulIntegerFast)
	RegisterFast(graph.OpMatMulInteger, prepareMatMulIntegerInt32)
}

// int8Product is the fast MatMulInteger's plan.
type int8Product struct {
	g          *asm.GemmU8S8
	args       asm.GemmU8S8Args
	m, k, n    int
	aSigned    bool    // A is I8: shifted into ua
	bUnsigned  bool    // B is U8: shifted into sb before packing
	transB     bool    // B is stored [N, K] (a Gemm's or a Conv's weight)
	perm       []int32 // nil, or B's elements reordered before packing: sb[i] = B[perm[i]]
	zaRows     bool    // A's zero point is one per row, else a scalar
	zbCols     bool    // B's zero point is one per column, else a scalar
	ua         []uint8
	sb         []int8
	za, zb     []int32 // the zero points as the GEMM sees them
	rowSums    []int32
	zbZero     bool // every zero point of B (as the GEMM sees it) is 0: A's row sums are not needed
	pb         asm.PackedU8S8
	constB     bool
	version    *atomic.Uint64
	have       bool
	at         uint64
	src        *byte
	correction func(lo, hi int)
	env        Env
	c          []int32 // the current run's result
}

// prepareMatMulIntegerFast takes A [..., M, K] times a 2-D B [K, N] with
// a scalar or per-row A zero point and a scalar or per-column B zero
// point; other forms (a batched B) run the reference.
func prepareMatMulIntegerFast(n *graph.Node, env Env) (Kernel, string, error) {
	if len(n.Inputs) != 4 || n.DType != tensor.I32 {
		return nil, "", nil
	}
	a, b, az, bz := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Inputs[3]
	if b.Shape.Rank() != 2 || a.Shape.Rank() < 1 || !slices.Contains(quant8, a.DType) || !slices.Contains(quant8, b.DType) {
		return nil, "", nil
	}
	p := &int8Product{k: b.Shape[0], n: b.Shape[1], aSigned: a.DType == tensor.I8, bUnsigned: b.DType == tensor.U8, env: env}
	if a.Shape[a.Shape.Rank()-1] != p.k || p.k == 0 {
		return nil, "", nil
	}
	p.m = a.Shape.NumElements() / p.k
	switch nz := az.Shape.NumElements(); {
	case nz == 1:
	case nz == p.m && az.Shape.Equal(append(a.Shape[:a.Shape.Rank()-1:a.Shape.Rank()-1], 1)):
		p.zaRows = true
	default:
		return nil, "", nil
	}
	switch nz := bz.Shape.NumElements(); {
	case nz == 1:
	case nz == p.n && bz.Shape[bz.Shape.Rank()-1] == p.n:
		p.zbCols = true
	default:
		return nil, "", nil
	}
	if err := p.plan(env, weightParam(b) != nil || b.Op == graph.OpConstant); err != nil {
		return nil, "", err
	}
	p.correction = p.correct
	return sizeChecked(n, p.run), "int8-" + p.g.Variant().Name, nil
}

// plan prepares the GEMM and the scratch for p's sizes and forms; constB
// says B is a param or constant (packed once per weights version).
func (p *int8Product) plan(env Env, constB bool) error {
	g, err := asm.NewGemmU8S8(asm.GemmU8S8Config{M: p.m, N: p.n, K: p.k}, asm.BestGemmU8S8(), asm.Par{For: env.For, Threads: env.Threads})
	if err != nil {
		return err
	}
	p.g, p.env = g, env
	if p.aSigned {
		p.ua = make([]uint8, p.m*p.k)
	}
	if p.bUnsigned {
		p.sb = make([]int8, p.k*p.n)
	}
	p.za, p.zb = make([]int32, max(1, p.m*btoi(p.zaRows))), make([]int32, max(1, p.n*btoi(p.zbCols)))
	p.rowSums = make([]int32, p.m)
	if constB {
		p.constB, p.version = true, env.WeightsVersion
	}
	return nil
}

// run computes the product of ins into out.
func (p *int8Product) run(ins []tensor.Tensor, out tensor.Tensor) error {
	if err := p.packB(ins[1].Data); err != nil {
		return err
	}
	p.loadZeros(ins[2].Data, ins[3].Data)
	a := ins[0].Data
	if p.aSigned {
		for i, x := range a {
			p.ua[i] = x ^ 0x80
		}
		a = p.ua
	}
	return p.product(a, tensor.Elems[int32](out.Data))
}

// product runs the GEMM of a (uint8) and the packed B into c, then the
// correction over its rows.
func (p *int8Product) product(a []uint8, c []int32) error {
	p.c = c
	p.args = asm.GemmU8S8Args{A: a, B: &p.pb, C: p.c, RowSums: p.rowSums}
	if p.zbZero {
		// Every row sum is multiplied by a zero point of 0: the sums
		// (zeros since make, never written) need not be found.
		p.args.RowSums = nil
	}
	err := p.g.Run(&p.args)
	p.args = asm.GemmU8S8Args{}
	if err == nil {
		p.env.For(p.m, max(1, 4096/max(p.n, 1)), p.correction)
	}
	p.c = nil
	return err
}

// packB packs B, shifted to int8 when it is U8, unless a constant B is
// packed already at the current weights version.
func (p *int8Product) packB(b []byte) error {
	var v uint64
	if p.version != nil {
		v = p.version.Load() // read before packing: a write during it repacks next run
	}
	src := unsafe.SliceData(b)
	if p.constB && p.have && v == p.at && src == p.src {
		return nil
	}
	sb := unsafe.Slice((*int8)(unsafe.Pointer(src)), len(b))
	var shift byte
	if p.bUnsigned {
		shift = 0x80
	}
	switch {
	case p.perm != nil:
		for i, s := range p.perm {
			p.sb[i] = int8(b[s] ^ shift)
		}
		sb = p.sb
	case p.bUnsigned:
		for i, x := range b {
			p.sb[i] = int8(x ^ shift)
		}
		sb = p.sb
	}
	ldb := p.n
	if p.transB {
		ldb = p.k
	}
	if err := asm.PackU8S8(&p.pb, sb, p.k, p.n, ldb, p.transB); err != nil {
		return err
	}
	p.have, p.at, p.src = true, v, src
	return nil
}

// loadZeros reads the zero points as the GEMM sees its operands: A's
// raised by 128 when A was shifted to uint8, B's lowered by 128 when B
// was shifted to int8.
func (p *int8Product) loadZeros(az, bz []byte) {
	load := func(dst []int32, z []byte, signed bool, shift int32) {
		for i := range dst {
			if signed {
				dst[i] = int32(int8(z[i])) + shift
			} else {
				dst[i] = int32(z[i]) + shift
			}
		}
	}
	load(p.za, az, p.aSigned, 128*int32(btoi(p.aSigned)))
	load(p.zb, bz, !p.bUnsigned, -128*int32(btoi(p.bUnsigned)))
	p.zbZero = !slices.ContainsFunc(p.zb, func(z int32) bool { return z != 0 })
}

// correct applies the zero-point terms to rows [lo, hi) of the result.
func (p *int8Product) correct(lo, hi int) {
	for i := lo; i < hi; i++ {
		p.correctRow(i)
	}
}

// correctRow applies the zero-point terms to row i of the result.
func (p *int8Product) correctRow(i int) {
	k := int32(p.k)
	cs := p.pb.ColSums()
	{
		za := p.za[0]
		if p.zaRows {
			za = p.za[i]
		}
		row, ra := p.c[i*p.n:(i+1)*p.n], p.rowSums[i]
		if !p.zbCols {
			zb := p.zb[0]
			base := k*za*zb - zb*ra
			if base == 0 && za == 0 {
				return
			}
			for j := range row {
				row[j] += base - za*cs[j]
			}
			return
		}
		for j := range row {
			zb := p.zb[j]
			row[j] += k*za*zb - zb*ra - za*cs[j]
		}
	}
}
