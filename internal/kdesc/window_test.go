package kdesc

import (
	"testing"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// TestWindowSpan: Span and Divisor agree with counting, tap by tap, the
// cells Source finds inside the input.
func TestWindowSpan(t *testing.T) {
	for _, w := range []Window{
		{H: 5, W: 4, KH: 3, KW: 2, SH: 2, SW: 1, PT: 1, PL: 1, DH: 1, DW: 1, OH: 3, OW: 4},
		{H: 7, W: 6, KH: 2, KW: 3, SH: 3, SW: 2, PT: 0, PL: 2, DH: 1, DW: 1, OH: 3, OW: 4},
	} {
		for _, countPad := range []bool{false, true} {
			p := &Pool{Window: w, CountPad: countPad}
			for oy := range w.OH {
				for ox := range w.OW {
					y0, y1, x0, x1 := w.Span(oy, ox)
					real := 0
					for ky := range w.KH {
						for kx := range w.KW {
							iy, ix, ok := w.Source(oy, ox, ky, kx)
							if !ok {
								continue
							}
							real++
							if iy < y0 || iy >= y1 || ix < x0 || ix >= x1 {
								t.Errorf("%+v (%d,%d): tap at %d,%d outside span %d..%d × %d..%d", w, oy, ox, iy, ix, y0, y1, x0, x1)
							}
						}
					}
					want := real
					if countPad {
						want = w.KH * w.KW
					}
					if got := p.Divisor(oy, ox); got != want || (y1-y0)*(x1-x0) != real {
						t.Errorf("%+v (%d,%d): divisor %d, span %d cells; want %d, %d real", w, oy, ox, got, (y1-y0)*(x1-x0), want, real)
					}
				}
			}
		}
	}
}

// TestWindowOf: conv and pool nodes described, bad ones refused.
func TestWindowOf(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 6, 9, 8)
	conv := g.Conv2D(x, g.Param("w", tensor.F32, 4, 3, 3, 2), g.Param("b", tensor.F32, 4),
		graph.ConvOpts{Strides: []int{2, 1}, Pads: []int{1, 0, 1, 1}, Dilations: []int{1, 2}, Groups: 2})
	pool := g.AvgPool2D(x, graph.PoolOpts{Kernel: []int{3, 3}, Strides: []int{2, 2}, Pads: []int{1, 1, 1, 1}, CountPad: true})
	gap := g.GlobalAvgPool(x)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	c, err := ConvOf("c", conv)
	if err != nil {
		t.Fatal(err)
	}
	// out = floor((9+2-3)/2)+1 = 5 rows, (8+1-(2·1+1))/1+1 = 7 columns
	want := Window{N: 2, C: 6, H: 9, W: 8, OH: 5, OW: 7, KH: 3, KW: 2, SH: 2, SW: 1, PT: 1, PL: 0, DH: 1, DW: 2}
	if c.Window != want || c.M != 4 || c.Groups != 2 || !c.Bias || c.Res || c.Act != graph.OpInvalid {
		t.Errorf("ConvOf = %+v", c)
	}
	// The pooled FusedConv2D keeps the conv's window: 5×7, out 2×3.
	fa := conv.Attrs
	fa.Epilogue = graph.Epilogue{Bias: true, Act: graph.OpRelu, Pool2x2: true}
	fc, err := g.Insert(graph.OpFusedConv2D, fa, conv.Inputs...)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := ConvOf("pc", fc)
	if err != nil {
		t.Fatal(err)
	}
	if oh, ow := pc.OutHW(); pc.Window != want || !pc.Pool || pc.Act != graph.OpRelu || oh != 2 || ow != 3 {
		t.Errorf("ConvOf(pooled) = %+v, out %d×%d", pc, oh, ow)
	}
	p, err := PoolOf("p", pool)
	if err != nil {
		t.Fatal(err)
	}
	if p.Max || !p.CountPad || p.OH != 5 || p.OW != 4 || p.KH != 3 || p.PT != 1 {
		t.Errorf("PoolOf = %+v", p)
	}
	if axes, err := GlobalPoolAxes(gap); err != nil || len(axes) != 2 || axes[0] != 2 || axes[1] != 3 {
		t.Errorf("GlobalPoolAxes = %v, %v", axes, err)
	}
	if _, err := ConvOf("bad", pool); err == nil {
		t.Error("ConvOf of a pool: no error")
	}
	if _, err := PoolOf("bad", conv); err == nil {
		t.Error("PoolOf of a conv: no error")
	}
	if _, err := GlobalPoolAxes(pool); err == nil {
		t.Error("GlobalPoolAxes of a 2-D pool: no error")
	}
}

// TestLines: Base and Elem walk each line at the element strides of the
// shape, and the describers read their attributes.
func TestLines(t *testing.T) {
	s := tensor.Shape{3, 4, 5}
	st := s.Strides()
	l, err := LinesOf(s, 1)
	if err != nil || l != (Lines{3, 4, 5}) || l.Count() != 15 {
		t.Fatalf("LinesOf = %+v, %v", l, err)
	}
	for o := range 3 {
		for i := range 5 {
			for k := range 4 {
				if got, want := l.Elem(o*5+i, k), o*st[0]+k*st[1]+i*st[2]; got != want {
					t.Errorf("Elem(%d, %d) = %d, want %d", o*5+i, k, got, want)
				}
			}
		}
	}
	if _, err := LinesOf(s, 3); err == nil {
		t.Error("axis 3 of rank 3: no error")
	}
	g := graph.New()
	x := g.Input("x", tensor.F32, 2, 3, 8)
	cs := g.CumSum(x, 2, true, false)
	am := g.ArgMin(x, 0, true)
	bn := g.BatchNorm(x, g.Param("s", tensor.F32, 3), g.Param("b", tensor.F32, 3), g.Param("m", tensor.F32, 3), g.Param("v", tensor.F32, 3), 1e-3)
	rp := g.RoPE(x, g.Input("c", tensor.F32, 3, 4), g.Input("n", tensor.F32, 3, 4), true)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	if c, err := CumSumOf("c", cs); err != nil || c.Lines != (Lines{6, 8, 1}) || !c.Exclusive || c.Reverse {
		t.Errorf("CumSumOf = %+v, %v", c, err)
	}
	if a, err := ArgOf("a", am); err != nil || a.Lines != (Lines{1, 2, 24}) || a.Max || a.DType != tensor.F32 {
		t.Errorf("ArgOf = %+v, %v", a, err)
	}
	b, err := BatchNormOf("b", bn)
	if err != nil || b.N != 2 || b.C != 3 || b.Spatial != 8 || b.Eps != 1e-3 {
		t.Fatalf("BatchNormOf = %+v, %v", b, err)
	}
	for i, want := range map[int]int{0: 0, 7: 0, 8: 1, 23: 2, 24: 0, 41: 2} {
		if got := b.Channel(i); got != want {
			t.Errorf("Channel(%d) = %d, want %d", i, got, want)
		}
	}
	r, err := RoPEOf("r", rp)
	if err != nil || r.Rows != 6 || r.Seq != 3 || r.Half != 4 || !r.Interleaved {
		t.Fatalf("RoPEOf = %+v, %v", r, err)
	}
	if a, b := r.Pair(3); a != 6 || b != 7 {
		t.Errorf("interleaved Pair(3) = %d,%d", a, b)
	}
	r.Interleaved = false
	if a, b := r.Pair(3); a != 3 || b != 7 {
		t.Errorf("half-split Pair(3) = %d,%d", a, b)
	}
	for _, f := range []func() error{
		func() error { _, err := CumSumOf("x", am); return err },
		func() error { _, err := ArgOf("x", cs); return err },
		func() error { _, err := BatchNormOf("x", rp); return err },
		func() error { _, err := RoPEOf("x", bn); return err },
	} {
		if f() == nil {
			t.Error("describing the wrong op: no error")
		}
	}
}
