package graph

// direction unrolls direction d over x2 ([S·B, I], step-major) from the
// states h and c ([B, H] each, nil for zeros). It returns each step's Y
// ([B, H], indexed by time, not by processing order) and the last
// states (c nil unless the cell is an LSTM).
func (r *rnn) direction(d int, reverse bool, x2, h, c *Node, mask []*Node) (ys []*Node, hLast, cLast *Node) {
	g, o, H, B := r.g, r.o, r.hid, r.batch
	gh := o.Cell.Gates() * H
	lbr := o.Cell == CellGRU && o.LinearBeforeReset
	w := r.pick(r.in.W, d, gh, x2.Shape[1])
	rw := r.pick(r.in.R, d, gh, H)
	rows := func(x *Node, lo, hi int) *Node {
		return g.Slice(x, SliceSpec{Axes: []int{0}, Starts: []int{lo}, Ends: []int{hi}})
	}

	// Biases: Wb + Rb go into the projection's epilogue, except GRU's Rbh
	// under linear_before_reset, which the reset gate multiplies.
	var pb, rbh *Node
	if r.in.B != nil {
		b := r.pick(r.in.B, d, 2*gh)
		wb, rb := rows(b, 0, gh), rows(b, gh, 2*gh)
		pb = g.Add(wb, rb)
		if lbr {
			pb = g.Concat(0, rows(pb, 0, 2*H), rows(wb, 2*H, 3*H))
			rbh = rows(rb, 2*H, 3*H)
		}
	}
	// Every step's input projection at once: one [S·B, I]·Wᵀ GEMM.
	xw := g.MatMul(x2, g.Transpose(w, 1, 0))
	if pb != nil {
		xw = g.Add(xw, pb)
	}
	// The recurrent weights, transposed once (fuse folds the transposes
	// into the products' TransB). Without linear_before_reset GRU's
	// candidate multiplies r ⊙ Hₜ₋₁, so its block is a product of its own.
	rT, rhT := g.Transpose(rw, 1, 0), (*Node)(nil)
	if o.Cell == CellGRU && !lbr {
		rT, rhT = g.Transpose(rows(rw, 0, 2*H), 1, 0), g.Transpose(rows(rw, 2*H, 3*H), 1, 0)
	}
	var peep [3]*Node // i, o, f
	if p := r.pick(r.in.P, d, 3*H); p != nil {
		for k := range peep {
			peep[k] = rows(p, k*H, (k+1)*H)
		}
	}

	n := o.Cell.acts()
	acts := r.acts[d*n : (d+1)*n]
	f := func(x *Node) *Node { return r.act(acts[0], r.clip(x)) }
	zeroH := h == nil // the first step's recurrent products are zero
	zeros := func() *Node { return g.Expand(r.num(0), B, H) }
	if h == nil {
		h = zeros()
	}
	if o.Cell == CellLSTM && c == nil {
		c = zeros()
	}
	mul := func(a, b *Node) *Node {
		if a == nil || b == nil {
			return nil
		}
		return g.Mul(a, b)
	}
	cols := r.cols
	ys = make([]*Node, r.steps)
	for k := range r.steps {
		t := k
		if reverse {
			t = r.steps - 1 - k
		}
		xt := rows(xw, t*B, (t+1)*B) // [B, G·H]
		var hr *Node
		if !zeroH {
			hr = g.MatMul(h, rT)
		}
		var hn, cn *Node
		switch o.Cell {
		case CellRNN:
			hn = f(r.sum(xt, hr))
		case CellGRU:
			var hrzr, term *Node
			if hr != nil {
				hrzr = hr
				if lbr {
					hrzr = cols(hr, 0, 2*H)
				}
			}
			zr := r.sum(cols(xt, 0, 2*H), hrzr)
			z, rg := f(cols(zr, 0, H)), f(cols(zr, H, 2*H))
			switch {
			case lbr && hr != nil:
				term = g.Mul(rg, r.sum(cols(hr, 2*H, 3*H), rbh))
			case lbr:
				term = mul(rg, rbh)
			case !zeroH:
				term = g.MatMul(g.Mul(rg, h), rhT)
			}
			hh := r.act(acts[1], r.clip(r.sum(cols(xt, 2*H, 3*H), term)))
			hn = g.Add(g.Mul(g.Sub(r.num(1), z), hh), g.Mul(z, h))
		case CellLSTM:
			pre := r.sum(xt, hr)
			ig := f(r.sum(cols(pre, 0, H), mul(peep[0], c)))
			var fg *Node
			if o.InputForget {
				fg = g.Sub(r.num(1), ig)
			} else {
				fg = f(r.sum(cols(pre, 2*H, 3*H), mul(peep[2], c)))
			}
			ct := r.act(acts[1], r.clip(cols(pre, 3*H, 4*H)))
			cn = g.Add(g.Mul(fg, c), g.Mul(ig, ct))
			og := f(r.sum(cols(pre, H, 2*H), mul(peep[1], cn)))
			hn = g.Mul(og, r.act(acts[2], cn))
		}
		ys[t] = hn
		if mask != nil { // past a row's length: Y is zero, the state is kept
			ys[t] = g.Where(mask[t], hn, r.num(0))
			hn = g.Where(mask[t], hn, h)
			if cn != nil {
				cn = g.Where(mask[t], cn, c)
			}
		}
		h, c, zeroH = hn, cn, false
	}
	if o.Cell != CellLSTM {
		c = nil
	}
	return ys, h, c
}
