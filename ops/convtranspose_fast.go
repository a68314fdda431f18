package ops

import (
	"math"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/ops/asm"
	"github.com/kilnml/kiln/tensor"
)

// The fast F32 ConvTranspose is a GEMM and a col2im scatter. For each
// image and group g, col = W_gᵀ · X_g: the weights of g, stored
// [C/groups, (M/groups)·taps], transposed, times the group's input
// [C/groups, cells], one row per (output channel, kernel tap) and one
// column per input cell, in asm's GEMM (all groups as one batch, over
// the worker pool). Then each output channel's plane starts at its bias
// and adds, for every tap, that tap's row of col shifted to where the tap
// lands (input cell i goes to i·stride + tap·dilation - pad), in runs
// along the last axis: at stride 2 one AddStride2 call per tap over all
// the input rows it reaches (the decoders' 3×3 and 4×4 at stride 2),
// vector adds (the row kernels' Axpy) at stride 1, a strided loop
// otherwise. Output channels are split over the workers. At stride 2
// along the rows, where the channels split evenly over the workers, the
// product and the output go a block of input rows at a time instead,
// each output written once (convtranspose_blocks.go). Where the
// convolution kernels have a phase product (AVX-512) and the output is
// twice the input at stride 2 (the decoders' 3×3 with output padding,
// the DCGAN 4×4, the U-Nets' 2×2), the output's four phases run as
// convolutions instead, with no GEMM and no col at all
// (convtranspose_phase.go), but for a 4×4 input with a 4×4 kernel (a
// DCGAN generator's 4² step), which sums every tap of every cell with
// output channels' taps as vectors and folds them into the planes in
// registers (convtranspose_t4.go). (The same
// split through Conv2D measured slower: it packs each phase's patches
// for only the output channels' rows, and pads the input four times.)
// Elsewhere (no phase product, run-time weights on a small input),
// where the taps tile the output two columns wide (the U-Net decoder's
// 2×2, stride 2) there is no col matrix at all: the GEMM stores each
// pair of rows (the two column taps of one output channel and kernel
// row) interleaved straight into its output row (asm.ZipStore), the
// bias added as it goes. A one-cell input is a MatMul by the weights as
// stored (convtranspose_project.go).

func init() {
	RegisterFast(graph.OpConvTranspose, func(n *graph.Node, env Env) (Kernel, string, error) {
		k, scatter, err := prepareConvTransposeFast(n, env, asm.BestGemm())
		if k == nil {
			return nil, "", err
		}
		if scatter == "phases" || scatter == "t4" { // no GEMM: the convolution kernels' own products
			return k, scatter + "/" + asm.BestGemm().Name, err
		}
		return k, "gemm+" + scatter + "/" + asm.BestGemm().Name, err
	})
}

type convTFast struct {
	convTGeom
	gemm    *asm.Gemm
	args    asm.GemmArgs
	col     []float32
	xLo     []int // per tap column kx: the first input column landing inside the output
	xHi     []int // and one past the last
	yLo     []int // per tap row ky: the same for input rows
	yHi     []int
	rows    *asm.RowKernels
	env     Env
	scatter func(lo, hi int)
	// The current image's operands.
	dst, bias []float32
	// zip: the GEMM stores into the output (zipTiles); pairBias is the
	// bias of each pair of rows, refilled per run.
	zip      *asm.ZipStore
	pairBias []float32
	// blocks, if set, runs the product and scatter a block of input rows
	// at a time (convtranspose_blocks.go), without col.
	blocks *convTBlocks
	// phases, if set, runs the output's four stride-2 phases as
	// convolutions (convtranspose_phase.go), without col or GEMM.
	phases *convTPhases
	// t4, if set, runs a 4×4 input's ConvT4 (convtranspose_t4.go).
	t4 *convTT4
	// reference runs the definition where the phases cannot (weights that
	// are not finite); prepared on first use.
	reference Kernel
}

// runReference runs node n's reference kernel, preparing it first.
func (f *convTFast) runReference(n *graph.Node, ins []tensor.Tensor, out tensor.Tensor) error {
	if f.reference == nil {
		k, err := prepareConvTranspose(n)
		if err != nil {
			return err
		}
		f.reference = k
	}
	return f.reference(ins, out)
}

// prepareConvTransposeFast returns the kernel and the name of its
// scatter (col2im, or tiles where taps tile the output), or nil (no
// error) for nodes it does not take.
func prepareConvTransposeFast(n *graph.Node, env Env, gv *asm.GemmVariant) (Kernel, string, error) {
	for _, v := range append(n.Inputs[:len(n.Inputs):len(n.Inputs)], n) {
		if v.DType != tensor.F32 {
			return nil, "", nil
		}
	}
	g, err := newConvTGeom(n)
	if err != nil || n.Shape.NumElements() == 0 {
		return nil, "", err
	}
	if k, err := prepareConvTProject(n, g, env, gv); k != nil || err != nil {
		return k, "project", err
	}
	rowsPerGroup := g.mpg * g.kSz
	gm, err := asm.NewGemm(asm.GemmConfig{M: rowsPerGroup, N: g.inSz, K: g.cpg, TransA: true, Alpha: 1},
		gv, asm.Par{For: env.For, Threads: env.Threads})
	if err != nil {
		return nil, "", err
	}
	f := &convTFast{convTGeom: g, gemm: gm, rows: asm.BestRows(), env: env}
	f.args.Batch = g.groups
	for gi := range g.groups {
		f.args.OffA = append(f.args.OffA, gi*g.cpg*rowsPerGroup)
		f.args.OffB = append(f.args.OffB, gi*g.cpg*g.inSz)
		f.args.OffC = append(f.args.OffC, gi*rowsPerGroup*g.inSz)
	}
	f.xLo, f.xHi = g.landing(2)
	f.yLo, f.yHi = g.landing(1)
	scatter := "col2im"
	f.scatter = f.col2im
	// The phases first: where the taps tile the output (U-Nets' 2×2) they
	// read the input in place, a panel pairing each channel's column
	// phases, and a U-Net step (128 → 64 channels, 64² input, params)
	// runs at 0.98-1.03 / 0.98-0.99 of the GEMM at one / two threads on
	// them (0.93-0.97 / 0.92-0.96 before the pairs), where the zip path
	// gave 0.98 / 0.77 (AVX-512, Zen 5).
	f.t4 = newConvTT4(f, n)
	if f.t4 == nil {
		if f.phases, err = newConvTPhases(f, n); err != nil {
			return nil, "", err
		}
	}
	switch {
	case f.t4 != nil:
		scatter = "t4"
	case f.phases != nil:
		scatter = "phases"
	case g.zipTiles():
		scatter = "zip"
		f.zipPlan()
		f.args.Zip, f.args.OffC = f.zip, nil
	case g.tiles():
		f.scatter, scatter = f.col2imTiles, "tiles"
	default:
		if f.blocks, err = newConvTBlocks(f, gv); err != nil {
			return nil, "", err
		}
		if f.blocks != nil {
			scatter = "blocks"
		}
	}
	if f.zip == nil && f.blocks == nil && f.phases == nil && f.t4 == nil {
		f.col = make([]float32, g.groups*rowsPerGroup*g.inSz)
	}
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		x, w, y := ins[0].F32(), ins[1].F32(), out.F32()
		f.bias = nil
		if f.convTGeom.bias {
			f.bias = ins[2].F32()
		}
		f.args.A, f.args.C = w, f.col
		if f.zip != nil {
			return f.runZip(x, y)
		}
		if f.t4 != nil {
			return f.t4.run(x, w, f.bias, y)
		}
		if f.phases != nil {
			done, err := f.phases.run(x, w, f.bias, y)
			if done || err != nil {
				return err
			}
			return f.runReference(n, ins, out) // non-finite weights
		}
		if f.blocks != nil {
			return f.blocks.run(x, w, y)
		}
		for b := range f.n {
			f.args.B = x[b*f.c*f.inSz : (b+1)*f.c*f.inSz]
			if err := f.gemm.Run(&f.args); err != nil {
				return err
			}
			f.dst = y[b*f.m*f.outSz : (b+1)*f.m*f.outSz]
			f.env.For(f.m, 1, f.scatter)
		}
		return nil
	}, scatter, nil
}

// col2im fills the planes of output channels [lo, hi) of the current
// image from col. Channel m's rows of col are m·taps .. (m+1)·taps - 1
// (groups are laid out one after another, as the channels are).
func (f *convTFast) col2im(lo, hi int) {
	in, k, s, d, pb, od := f.in, f.k, f.s, f.d, f.pb, f.convTGeom.out
	for m := lo; m < hi; m++ {
		plane := f.dst[m*f.outSz : (m+1)*f.outSz]
		var bv float32
		if f.bias != nil {
			bv = f.bias[m]
		}
		fillF32(plane, bv)
		for t := range f.kSz {
			kz, ky, kx := t/(k[1]*k[2]), t/k[2]%k[1], t%k[2]
			crow := f.col[(m*f.kSz+t)*f.inSz:][:f.inSz]
			y0, y1 := f.yLo[ky], f.yHi[ky]
			for iz := range in[0] {
				oz := iz*s[0] + kz*d[0] - pb[0]
				if oz < 0 || oz >= od[0] || y0 >= y1 {
					continue
				}
				f.addTap(plane[oz*od[1]*od[2]:], crow[(iz*in[1]+y0)*in[2]:], ky, kx, y0, y1)
			}
		}
	}
}

// addTap adds the products of kernel tap (ky, kx) with input rows
// [y0, y1) (src holds row y0 first, rows in[2] apart) into plane, one
// output depth slice, in runs along the last axis: at stride 2 one
// AddStride2 call over all the rows (the decoders' 3×3 and 4×4 at stride
// 2), vector adds (the row kernels' Axpy) at stride 1, a strided loop
// otherwise.
func (f *convTFast) addTap(plane, src []float32, ky, kx, y0, y1 int) {
	x0, x1 := f.xLo[kx], f.xHi[kx]
	if x0 >= x1 || y0 >= y1 {
		return
	}
	s, d, pb, od, w := f.s, f.d, f.pb, f.convTGeom.out, f.in[2]
	o := (y0*s[1]+ky*d[1]-pb[1])*od[2] + x0*s[2] + kx*d[2] - pb[2]
	if s[2] == 2 {
		f.rows.AddStride2(plane[o:], s[1]*od[2], src[x0:], w, y1-y0, x1-x0)
		return
	}
	for r := range y1 - y0 {
		row, at := src[r*w+x0:r*w+x1], o+r*s[1]*od[2]
		if s[2] == 1 {
			f.rows.Axpy(plane[at:at+len(row)], row, 1)
			continue
		}
		stridedAdd(plane[at:at+(len(row)-1)*s[2]+1], row, s[2])
	}
}

// landing returns, per tap of spatial axis a (0..2 of the padded
// three), the range [lo, hi) of input positions whose cells land inside
// the output under that tap (lo >= hi: none).
func (g *convTGeom) landing(a int) (lo, hi []int) {
	lo, hi = make([]int, g.k[a]), make([]int, g.k[a])
	for k := range g.k[a] {
		lo[k], hi[k] = g.in[a], 0
		for i := range g.in[a] {
			if o := i*g.s[a] + k*g.d[a] - g.pb[a]; o >= 0 && o < g.out[a] {
				lo[k], hi[k] = min(lo[k], i), i+1
			}
		}
	}
	return lo, hi
}

// tiles reports whether every output cell takes exactly one tap of one
// input cell: kernel = stride, dilation 1, no pads, in every axis (the
// U-Net decoder's 2×2 stride 2). The taps of input cell i then tile the
// block of output cells starting at i·stride.
func (g *convTGeom) tiles() bool {
	for i := range 3 {
		if g.k[i] != g.s[i] || g.d[i] != 1 || g.pb[i] != 0 || g.out[i] != g.in[i]*g.s[i] {
			return false
		}
	}
	return true
}

// col2imTiles is col2im where taps tile the output (tiles): each output
// row (channel m, row oz, oy) is the interleave of the kernel's k[2]
// taps of row (oz mod k[0], oy mod k[1]), read from input row
// (oz / k[0], oy / k[1]) of their rows of col, plus the bias: written
// once, never cleared or read back.
func (f *convTFast) col2imTiles(lo, hi int) {
	in, k, od := f.in, f.k, f.convTGeom.out
	for m := lo; m < hi; m++ {
		var bv float32
		if f.bias != nil {
			bv = f.bias[m]
		}
		for oz := range od[0] {
			for oy := range od[1] {
				dst := f.dst[m*f.outSz+(oz*od[1]+oy)*od[2]:][:od[2]]
				t0 := ((oz%k[0])*k[1] + oy%k[1]) * k[2] // first tap of the row
				cell := (oz/k[0]*in[1] + oy/k[1]) * in[2]
				row := func(kx int) []float32 { return f.col[(m*f.kSz+t0+kx)*f.inSz+cell:][:in[2]] }
				if k[2] == 2 {
					f.rows.Zip2Add(dst, row(0), row(1), bv)
					continue
				}
				for kx := range k[2] {
					for ix, v := range row(kx) {
						dst[ix*k[2]+kx] = v + bv
					}
				}
			}
		}
	}
}

// zipTiles reports whether the taps tile the output (tiles) two columns
// wide in one plane of depth: then each output row is the interleave of
// two rows of the product, which asm.ZipStore writes in place.
func (g *convTGeom) zipTiles() bool { return g.tiles() && g.k[2] == 2 && g.k[0] == 1 }

// zipPlan lays out the ZipStore of a zipTiles geometry: product (group)
// e's rows 2q, 2q+1 (q = output channel of the group · k[1] + kernel
// row) are that channel's output row kernel-row on, every input row
// (segment) k[1] output rows further.
func (f *convTFast) zipPlan() {
	g, od := &f.convTGeom, f.convTGeom.out
	z := &asm.ZipStore{Width: g.in[2], Stride: g.k[1] * od[2]}
	for m := range g.m {
		for ky := range g.k[1] {
			z.Pairs = append(z.Pairs, m*g.outSz+ky*od[2])
		}
	}
	if g.bias {
		f.pairBias = make([]float32, len(z.Pairs))
	}
	f.zip = z
}

// runZip runs the product of every image straight into its output.
func (f *convTFast) runZip(x, y []float32) error {
	f.zip.Bias = nil
	if f.bias != nil {
		for q := range f.pairBias {
			f.pairBias[q] = f.bias[q/f.k[1]]
		}
		f.zip.Bias = f.pairBias
	}
	for b := range f.n {
		f.args.B = x[b*f.c*f.inSz : (b+1)*f.c*f.inSz]
		f.zip.Out = y[b*f.m*f.outSz : (b+1)*f.m*f.outSz]
		if err := f.gemm.Run(&f.args); err != nil {
			return err
		}
	}
	return nil
}

// stridedAdd does dst[j·step] += src[j]; dst holds exactly the cells it
// reaches. Two and more steps of 2 (the common upsampling stride) go four
// at a time.
func stridedAdd(dst, src []float32, step int) {
	j := 0
	if step == 2 {
		for ; j+4 <= len(src); j += 4 {
			d := dst[2*j : 2*j+7]
			s := src[j : j+4]
			d[0] += s[0]
			d[2] += s[1]
			d[4] += s[2]
			d[6] += s[3]
		}
	}
	for o := j * step; j < len(src); j, o = j+1, o+step {
		dst[o] += src[j]
	}
}

// fillF32 sets every element of s to v: a cleared block (v = 0) or one
// value copied over doubling lengths, both through the runtime's vector
// memory routines rather than an element loop.
func fillF32(s []float32, v float32) {
	if v == 0 && !math.Signbit(float64(v)) {
		clear(s)
		return
	}
	if len(s) == 0 {
		return
	}
	s[0] = v
	for n := 1; n < len(s); n *= 2 {
		copy(s[n:], s[:n])
	}
}
