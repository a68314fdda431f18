package asm

// gemv computes columns [n0, n1) of product e when op(A) is one row: the
// row is made contiguous once, then B is streamed once: a
// pre-packed B panel by panel (NR columns, contiguous), a row-major B row
// by row.
func (g *Gemm) gemv(s *gemmScratch, e, ao, bo, co, n0, n1 int) {
	cfg, v := &g.cfg, g.v
	nr, k := v.nr, cfg.K
	if len(s.x) < k {
		s.x = make([]float32, k) // once: A, already checked, holds k floats
	}
	x := s.x[:k]
	a := g.run.A[ao:]
	if cfg.TransA {
		for p := range x {
			x[p] = a[p*cfg.LDA]
		}
	} else {
		copy(x, a[:k])
	}
	c := g.run.C[co:]
	flags := uint(0)
	if cfg.Accumulate {
		flags = gemmAccumulate
	}
	t := s.tile[:nr]
	if pb := g.run.PackedB; pb != nil {
		// Depth blocks outer: a block's column panels lie back to back, so
		// the pass reads the packed weights front to back, one stream the
		// kernel fetches ahead across panels (strip by strip, each block
		// began 1 MiB on at MobileNetV2's 1280×1000 classifier, its first
		// lines unfetched). A partial last strip sums in scratch.
		for pc := 0; pc < k; pc += v.kc {
			kc := min(v.kc, k-pc)
			for j := n0; j < n1; j += nr {
				w := min(nr, n1-j)
				y, f := &t[0], gemmAccumulate
				if w == nr {
					y = &c[j : j+nr][0]
				}
				if pc == 0 {
					f = flags
					if w < nr {
						f = 0
					}
				}
				pan := pb.block(pc, kc, j, nr)
				v.gemv(kc, &x[pc], &pan[0], nr, y, f)
			}
		}
		if w := (n1 - n0) % nr; w > 0 {
			gemmMerge(c[n1-w:n1], t[:w], cfg.Accumulate)
		}
	} else {
		// Row-major B: stream it four rows at a time into y, which
		// stays in L1; the last k%4 rows are added in Go.
		b, ldb, w := g.run.B[bo:], cfg.LDB, n1-n0
		y := c[n0:n1]
		p := 0
		for ; p+4 <= k; p += 4 {
			rows := b[p*ldb+n0 : (p+3)*ldb+n1] // the four row segments are inside B
			v.gemvRows4(w, &x[p], &rows[0], ldb, &y[0], flags)
			flags = gemmAccumulate
		}
		for ; p < k; p++ {
			xp, row := x[p], b[p*ldb+n0:p*ldb+n1]
			if flags&gemmAccumulate == 0 {
				for j, bv := range row {
					y[j] = xp * bv
				}
			} else {
				for j, bv := range row {
					y[j] += xp * bv
				}
			}
			flags = gemmAccumulate
		}
	}
	g.epilogue(e, co, 0, 1, n0, n1-n0)
}

// mergeRow writes src into dst, or adds it when acc is set.
func gemmMerge(dst, src []float32, acc bool) {
	if !acc {
		copy(dst, src)
		return
	}
	for j, x := range src[:len(dst)] {
		dst[j] += x
	}
}
