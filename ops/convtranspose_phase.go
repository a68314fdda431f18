package ops

import (
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// The phase path of the fast ConvTranspose (2-D, dilation 1, taps that
// overlap: the GAN and segmentation upsamplers' 3×3 and 4×4 at stride
// 2). Output cells whose coordinates leave the same remainders (py, px)
// by the strides form a phase, and every cell of a phase takes the same
// taps: kernel rows ky ≡ py + pad (mod stride), each from an input row
// that moves one row per phase row. So each phase is an ordinary
// convolution of the input, stride 1, with those taps (in reverse order)
// as its kernel: asm's Conv2D runs it at its GEMM rate, with no
// overlapping scatter and no col buffer to add up. The phases' outputs
// are then interleaved into the output rows, bias added (Zip2Add at
// stride 2 in x), each output value written once.

// convTPhase is one phase (py, px) of the output.
type convTPhase struct {
	py, px   int
	ph, pw   int // its cells: output rows py, py+s, ... and columns px, px+s, ...
	ty, tx   int // its taps per axis (0: none, the phase is bias only)
	ky0, kx0 int // its first tap per axis
	conv     *asm.Conv2D
	w        []float32 // the conv's weights [M, C/groups, ty, tx], rebuilt per run
	out      []float32 // [N, M, ph, pw]
}

// convTPhases is the phase plan of a ConvTranspose.
type convTPhases struct {
	convTGeom
	phases  []convTPhase // row-major over (py, px)
	rows    *asm.RowKernels
	env     Env
	dst, x  []float32 // the current run's operands
	bias    []float32
	zipBody func(lo, hi int)
}

// newConvTPhases returns the phase plan, or nil where the geometry is not
// the phase path's: not 2-D, a dilation, a phase of taps that would read
// the input before its start (pads past the kernel), or taps that tile
// the output (the tiles scatter's case, one GEMM).
func newConvTPhases(g convTGeom, rank int, env Env, gv *asm.GemmVariant) (*convTPhases, error) {
	if rank != 4 || g.d[1] != 1 || g.d[2] != 1 || g.tiles() {
		return nil, nil
	}
	p := &convTPhases{convTGeom: g, rows: asm.BestRows(), env: env}
	s, k, pb := [2]int{g.s[1], g.s[2]}, [2]int{g.k[1], g.k[2]}, [2]int{g.pb[1], g.pb[2]}
	for py := range s[0] {
		for px := range s[1] {
			ph := convTPhase{py: py, px: px}
			var pl [2]int // the conv's top and left pads
			for a, ph0 := range [2]int{py, px} {
				out := g.out[1+a]
				cells := 0
				if out > ph0 {
					cells = (out - ph0 + s[a] - 1) / s[a]
				}
				t0 := (ph0 + pb[a]) % s[a] // first tap: t0 ≡ phase + pad
				taps := 0
				if t0 < k[a] {
					taps = (k[a]-1-t0)/s[a] + 1
				}
				// Cell j of the phase reads input j + c0 - t from tap t0 + t·s.
				c0 := (ph0 + pb[a] - t0) / s[a]
				pl[a] = taps - 1 - c0
				if taps > 0 && pl[a] < 0 {
					return nil, nil
				}
				if a == 0 {
					ph.ph, ph.ty, ph.ky0 = cells, taps, t0
				} else {
					ph.pw, ph.tx, ph.kx0 = cells, taps, t0
				}
			}
			ph.out = make([]float32, g.n*g.m*ph.ph*ph.pw)
			if ph.ty > 0 && ph.tx > 0 && ph.ph > 0 && ph.pw > 0 {
				cg := asm.ConvGeom{N: g.n, C: g.c, H: g.in[1], W: g.in[2], M: g.m, OH: ph.ph, OW: ph.pw,
					KH: ph.ty, KW: ph.tx, SH: 1, SW: 1, DH: 1, DW: 1, PT: pl[0], PL: pl[1], Groups: g.groups}
				c, err := asm.NewConv2D(cg, false, p.rows, gv, asm.Par{For: env.For, Threads: env.Threads})
				if err != nil {
					return nil, err
				}
				ph.conv, ph.w = c, make([]float32, g.m*g.cpg*ph.ty*ph.tx)
			}
			p.phases = append(p.phases, ph)
		}
	}
	p.zipBody = p.zip
	return p, nil
}

// run computes the output y from x, w and the bias (nil without one).
func (p *convTPhases) run(x, w, bias, y []float32) error {
	for i := range p.phases {
		ph := &p.phases[i]
		if ph.conv == nil {
			continue // out stays zero: bias only
		}
		// Conv weight [m, cc, uy, ux] is tap (ky0 + s·(ty-1-uy), kx0 +
		// s·(tx-1-ux)) of ConvTranspose weight [c, mm] (c = group·cpg +
		// cc, m = group·mpg + mm): the taps reversed, as input rows run
		// the other way.
		kw := p.k[2]
		o := 0
		for m := range p.m {
			grp, mm := m/p.mpg, m%p.mpg
			for cc := range p.cpg {
				wc := w[((grp*p.cpg+cc)*p.mpg+mm)*p.kSz:][:p.kSz]
				for uy := range ph.ty {
					row := wc[(ph.ky0+p.s[1]*(ph.ty-1-uy))*kw:]
					for ux := range ph.tx {
						ph.w[o] = row[ph.kx0+p.s[2]*(ph.tx-1-ux)]
						o++
					}
				}
			}
		}
		if err := ph.conv.Run(ph.out, x, ph.w, nil); err != nil {
			return err
		}
	}
	p.dst, p.bias = y, bias
	p.env.For(p.n*p.m, 1, p.zipBody)
	p.dst, p.bias = nil, nil
	return nil
}

// zip writes the output planes [lo, hi) (image·M + channel) from the
// phases' planes: output row oy is the interleave of the phases of row
// phase oy mod s, plus the bias.
func (p *convTPhases) zip(lo, hi int) {
	sy, sx, oh, ow := p.s[1], p.s[2], p.out[1], p.out[2]
	for plane := lo; plane < hi; plane++ {
		var bv float32
		if p.bias != nil {
			bv = p.bias[plane%p.m]
		}
		for oy := range oh {
			py, jy := oy%sy, oy/sy
			dst := p.dst[(plane*oh+oy)*ow:][:ow]
			row := func(px int) []float32 {
				ph := &p.phases[py*sx+px]
				return ph.out[(plane*ph.ph+jy)*ph.pw:][:ph.pw]
			}
			if sx == 2 {
				even, odd := row(0), row(1)
				h := ow / 2
				p.rows.Zip2Add(dst[:2*h], even[:h], odd[:h], bv)
				if ow%2 == 1 {
					dst[ow-1] = even[h] + bv
				}
				continue
			}
			for px := range sx {
				for jx, v := range row(px) {
					dst[jx*sx+px] = v + bv
				}
			}
		}
	}
}

// f32sOf is t's float32 elements, nil for no tensor.
func f32sOf(t []tensor.Tensor, i int) []float32 {
	if i >= len(t) {
		return nil
	}
	return t[i].F32()
}
