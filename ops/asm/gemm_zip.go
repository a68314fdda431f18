package asm

import (
	"errors"
	"fmt"
)

// ZipStore, set in GemmArgs, has a product store its C into Out instead,
// rows in pairs, each pair's two rows interleaved: element (i, j) of
// product e goes to
//
//	Out[Pairs[e·M/2 + i/2] + (j / Width)·Stride + 2·(j mod Width) + i mod 2]
//
// plus Bias[e·M/2 + i/2] when Bias is set (added once, after any
// accumulation). The columns come in segments of Width; a segment's
// values of a pair fill 2·Width consecutive floats. That is a transposed
// convolution whose kernel tiles the output two taps wide (a U-Net
// decoder's 2×2, stride 2): rows (output channel, kernel row, kernel
// column), columns the input cells, segments the input rows, so the
// product lands in place, with no col matrix written and scattered
// again. The micro-kernels store whole tiles so (GemmVariant.zip2,
// zip1); edge tiles and panels that cross a segment go through scratch.
// M must be even, Alpha 1, no Epilogue or InPlaceA; Accumulate adds to
// Out. C and OffC are not used.
type ZipStore struct {
	Out    []float32
	Pairs  []int     // Batch·M/2 offsets into Out, each >= 0
	Width  int       // columns per segment, > 0
	Stride int       // Out offset between segments, >= 2·Width
	Bias   []float32 // nil, or Batch·M/2 values, one per pair
}

// zipOff is the offset in Out of column j of a pair's row 2q, less the
// pair's own offset.
func (z *ZipStore) zipOff(j int) int { return j/z.Width*z.Stride + 2*(j%z.Width) }

// gemmZipBias is the flag bit that has a zip kernel add the pairs' bias.
const gemmZipBias uint = 8

// zip2Kernel is panel2Kernel storing as ZipStore does: pair q of tile t
// (rows 12t+2q, 12t+2q+1 of the 12-row variant) goes to out + offs[6t+q]
// (floats), its columns 0..NR-1 interleaved at floats 0..2NR-1 and
// NR..2NR-1 at d1 bytes on; flags&gemmAccumulate adds the old values,
// then flags&gemmZipBias adds bias[6t+q]. Same sums as panel2Kernel.
type zip2Kernel func(tiles, k int, a, b0, b1, out *float32, offs *int, d1 int, bias *float32, flags uint)

// zipEdge2Kernel is edge2Kernel storing as zip2Kernel does: rows 0-3
// or 0-7 (pairs 0-1 or 0-3) of one tile.
type zipEdge2Kernel func(rows, k int, a, b0, b1, out *float32, offs *int, d1 int, bias *float32, flags uint)

// zip1Kernel is panelKernel storing as ZipStore does, one NR-column
// panel: pair q of tile t (MR/2 pairs a tile) goes to floats 0..2NR-1 at
// out + offs[t·MR/2+q]; flags as zip2Kernel.
type zip1Kernel func(tiles, k int, a, b, out *float32, offs *int, bias *float32, flags uint)

// checkZip validates a zip run of nb products (the plan's config as run).
func (g *Gemm) checkZip(args *GemmArgs, nb int) error {
	cfg, z := &g.cfg, args.Zip
	switch {
	case cfg.Alpha != 1 || cfg.InPlaceA || args.Epilogue != nil:
		return errors.New("asm: gemm zip store: needs Alpha 1, no InPlaceA, no epilogue")
	case cfg.M%2 != 0:
		return fmt.Errorf("asm: gemm zip store: M=%d is odd", cfg.M)
	case z.Width <= 0 || z.Stride < 2*z.Width:
		return fmt.Errorf("asm: gemm zip store: width %d, stride %d", z.Width, z.Stride)
	case len(z.Pairs) < nb*cfg.M/2:
		return fmt.Errorf("asm: gemm zip store: %d pair offsets for %d products of %d rows", len(z.Pairs), nb, cfg.M)
	case z.Bias != nil && len(z.Bias) < nb*cfg.M/2:
		return fmt.Errorf("asm: gemm zip store: %d bias values for %d products of %d rows", len(z.Bias), nb, cfg.M)
	}
	if cfg.M == 0 || cfg.N == 0 {
		return nil
	}
	reach := z.zipOff(cfg.N-1) + 2 // past the last column of a pair
	for q, off := range z.Pairs[:nb*cfg.M/2] {
		if off < 0 || off > len(z.Out)-reach {
			return fmt.Errorf("asm: gemm zip store: pair %d at %d reaches %d of %d", q, off, off+reach, len(z.Out))
		}
	}
	if overlap32(z.Out, args.A) || (args.PackedB == nil && overlap32(z.Out, args.B)) {
		return errors.New("asm: gemm zip store: Out overlaps A or B")
	}
	return nil
}

// blocksZip is blocks for a zip run: the same loop nest and sums, each
// tile stored by the zip kernels, or computed into scratch and placed by
// zipTile where they do not take it.
func (g *Gemm) blocksZip(s *gemmScratch, e, ao, bo, m0, m1, n0, n1 int) {
	cfg, v, z := &g.cfg, g.v, g.run.Zip
	mr, nr := v.mr, v.nr
	pairs := z.Pairs[e*cfg.M/2:]
	var bias []float32
	if z.Bias != nil {
		bias = z.Bias[e*cfg.M/2:]
	}
	// inSeg: columns [j, j+nr) lie in one segment.
	inSeg := func(j int) bool { return j%z.Width+nr <= z.Width }
	for jc := n0; jc < n1; jc += v.nc {
		nc := min(v.nc, n1-jc)
		for pc := 0; pc < cfg.K; pc += v.kc {
			kc := min(v.kc, cfg.K-pc)
			bp := g.bBlock(s, bo, pc, kc, jc, nc)
			flags := uint(0)
			if pc > 0 || cfg.Accumulate {
				flags = gemmAccumulate
			}
			if pc+kc == cfg.K && bias != nil {
				flags |= gemmZipBias
			}
			for ic := m0; ic < m1; ic += v.mc {
				mc := min(v.mc, m1-ic)
				ap := s.a[:gemmRoundUp(mc, mr)*kc]
				packA(v, ap, g.run.A[ao:], cfg, ic, mc, pc, kc)
				tiles := mc / mr
				biasAt := func(q int) *float32 { // the bias of pair q on, if any
					if bias == nil {
						return nil
					}
					return &bias[q]
				}
				for jr := 0; jr < nc; {
					j := jc + jr
					width, done := min(nr, nc-jr), 0 // columns, and rows the kernels stored
					switch {
					case v.zip2 != nil && nc-jr >= 2*nr && inSeg(j) && inSeg(j+nr):
						width = 2 * nr
						out, b0, b1 := &z.Out[z.zipOff(j)], &bp[jr*kc], &bp[(jr+nr)*kc]
						d1 := 4 * (z.zipOff(j+nr) - z.zipOff(j))
						if tiles > 0 {
							done = tiles * mr
							// The first tile fetches the next pair of panels (as blocks).
							v.zip2(tiles, kc, &ap[0], b0, b1, out, &pairs[ic/2], d1, biasAt(ic/2), flags|gemmPrefetchNext)
						}
						if e := mc - done; (e == 4 || e == 8) && v.zipEdge2 != nil {
							q := (ic + done) / 2
							v.zipEdge2(e, kc, &ap[done*kc], b0, b1, out, &pairs[q], d1, biasAt(q), flags)
							done = mc
						}
					case v.zip1 != nil && width == nr && inSeg(j) && tiles > 0:
						done = tiles * mr
						v.zip1(tiles, kc, &ap[0], &bp[jr*kc], &z.Out[z.zipOff(j)], &pairs[ic/2], biasAt(ic/2), flags)
					}
					for p := 0; p < width; p += nr {
						g.zipTiles(s, kc, ap, bp[(jr+p)*kc:][:nr*kc], pairs, bias, ic, done, mc, j+p, min(nr, nc-jr-p), flags)
					}
					jr += width
				}
			}
		}
	}
}

// zipTiles computes rows [ir, mc) of one column panel (nrv <= NR columns
// from column j) of the block at row ic, tile by tile, into scratch, and
// places them as ZipStore says, with the kernels' sums and adds.
func (g *Gemm) zipTiles(s *gemmScratch, kc int, ap, bpan []float32, pairs []int, bias []float32, ic, ir, mc, j, nrv int, flags uint) {
	v, z := g.v, g.run.Zip
	for ; ir < mc; ir += v.mr {
		mrv := min(v.mr, mc-ir)
		micro, rows := v.partial(mrv)
		t := s.tile[:rows*v.nr]
		micro(kc, &ap[ir*kc], &bpan[0], &t[0], v.nr, 0)
		for r := range mrv {
			q := (ic + ir + r) / 2
			dst := z.Out[pairs[q]+(ic+ir+r)%2:]
			row := t[r*v.nr : r*v.nr+nrv]
			if j%z.Width+nrv <= z.Width { // one segment: every other float from zipOff(j)
				dst = dst[z.zipOff(j):][:2*nrv-1]
				for c, x := range row {
					if flags&gemmAccumulate != 0 {
						x += dst[2*c]
					}
					if flags&gemmZipBias != 0 {
						x += bias[q]
					}
					dst[2*c] = x
				}
				continue
			}
			for c, x := range row {
				o := z.zipOff(j + c)
				if flags&gemmAccumulate != 0 {
					x += dst[o]
				}
				if flags&gemmZipBias != 0 {
					x += bias[q]
				}
				dst[o] = x
			}
		}
	}
}

// emptyKZip is emptyK for a zip run: the product is zero (plus the bias).
func (g *Gemm) emptyKZip(e, m0, m1, n0, n1 int) {
	cfg, z := &g.cfg, g.run.Zip
	for i := m0; i < m1; i++ {
		q := e*cfg.M/2 + i/2
		dst := z.Out[z.Pairs[q]+i%2:]
		for j := n0; j < n1; j++ {
			var x float32
			if cfg.Accumulate {
				x = dst[z.zipOff(j)]
			}
			if z.Bias != nil {
				x += z.Bias[q]
			}
			dst[z.zipOff(j)] = x
		}
	}
}
