package ops

import (
	"cmp"
	"fmt"
	"sync"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func init() {
	Register(Entry{Op: graph.OpConvTranspose, DTypes: nativeFloats, Reference: prepareConvTranspose, Tol: 1e-5})
}

// convTGeom is a ConvTranspose's geometry with its spatial axes padded
// to three (leading axes of length 1, stride and dilation 1, no pad), so
// one loop nest serves 1-D, 2-D and 3-D.
type convTGeom struct {
	n, c, m     int // batch, input channels, output channels
	groups      int
	cpg, mpg    int // input and output channels per group
	in, out, k  [3]int
	s, d, pb    [3]int // strides, dilations, begin pads (end pads only shape out)
	inSz, outSz int    // cells of one input and one output plane
	kSz         int    // taps of one kernel
	bias        bool
}

func newConvTGeom(nd *graph.Node) (convTGeom, error) {
	x, w, y := nd.Inputs[0].Shape, nd.Inputs[1].Shape, nd.Shape
	at := nd.Attrs
	sp := x.Rank() - 2
	if sp < 1 || sp > 3 || w.Rank() != x.Rank() || y.Rank() != x.Rank() ||
		len(at.Strides) != sp || len(at.Dilations) != sp || len(at.Pads) != 2*sp || at.Groups < 1 {
		return convTGeom{}, fmt.Errorf("input %v, weight %v, result %v or attributes %+v not normalised", x, w, y, at)
	}
	g := convTGeom{n: x[0], c: x[1], m: y[1], groups: at.Groups, bias: len(nd.Inputs) == 3,
		inSz: 1, outSz: 1, kSz: 1}
	g.cpg, g.mpg = g.c/g.groups, w[1]
	if g.c%g.groups != 0 || w[0] != g.c || g.m != g.mpg*g.groups || y[0] != x[0] {
		return g, fmt.Errorf("groups %d do not fit input %v, weight %v, result %v", g.groups, x, w, y)
	}
	for i := range 3 {
		g.in[i], g.out[i], g.k[i], g.s[i], g.d[i] = 1, 1, 1, 1, 1
		if j := i - (3 - sp); j >= 0 {
			g.in[i], g.out[i], g.k[i] = x[2+j], y[2+j], w[2+j]
			g.s[i], g.d[i], g.pb[i] = at.Strides[j], at.Dilations[j], at.Pads[j]
			full := g.s[i]*(g.in[i]-1) + g.d[i]*(g.k[i]-1) + 1
			if g.out[i] != full-at.Pads[j]-at.Pads[sp+j] {
				return g, fmt.Errorf("result %v does not match input %v under pads %v", y, x, at.Pads)
			}
		}
		g.inSz *= g.in[i]
		g.outSz *= g.out[i]
		g.kSz *= g.k[i]
	}
	if g.bias && !nd.Inputs[2].Shape.Equal(tensor.Shape{g.m}) {
		return g, fmt.Errorf("bias %v must be [%d]", nd.Inputs[2].Shape, g.m)
	}
	return g, nil
}

type convTPlan struct {
	convTGeom
	acc []float64 // one image's output, accumulated in float64
}

func prepareConvTranspose(nd *graph.Node) (Kernel, error) {
	dt, err := computeDType(nd, 2, 3, 3)
	if err != nil {
		return nil, err
	}
	g, err := newConvTGeom(nd)
	if err != nil {
		return nil, err
	}
	p := &convTPlan{convTGeom: g, acc: make([]float64, g.m*g.outSz)}
	return bindFloat(nd, dt, p, runConvTranspose[float32], runConvTranspose[float64]), nil
}

// runConvTranspose is the scatter definition: every input cell x[b, c, i]
// adds x·w[c, m, k] to output cell i·stride + k·dilation - pad of each
// output channel m of c's group, for every kernel tap k; cells past the
// cropped output are dropped, and the bias is added to every cell.
func runConvTranspose[T float32 | float64](p *convTPlan, ins []tensor.Tensor, out tensor.Tensor) {
	x, w, y := tensor.Elems[T](ins[0].Data), tensor.Elems[T](ins[1].Data), tensor.Elems[T](out.Data)
	var bias []T
	if p.bias {
		bias = tensor.Elems[T](ins[2].Data)
	}
	for b := range p.n {
		clear(p.acc)
		for c := range p.c {
			m0 := c / p.cpg * p.mpg // first output channel of c's group
			xc := x[(b*p.c+c)*p.inSz:]
			for i := range p.inSz {
				xv := float64(xc[i])
				iz, iy, ix := i/(p.in[1]*p.in[2]), i/p.in[2]%p.in[1], i%p.in[2]
				for mm := range p.mpg {
					wk := w[(c*p.mpg+mm)*p.kSz:]
					acc := p.acc[(m0+mm)*p.outSz:]
					for k := range p.kSz {
						kz, ky, kx := k/(p.k[1]*p.k[2]), k/p.k[2]%p.k[1], k%p.k[2]
						oz := iz*p.s[0] + kz*p.d[0] - p.pb[0]
						oy := iy*p.s[1] + ky*p.d[1] - p.pb[1]
						ox := ix*p.s[2] + kx*p.d[2] - p.pb[2]
						if oz < 0 || oz >= p.out[0] || oy < 0 || oy >= p.out[1] || ox < 0 || ox >= p.out[2] {
							continue
						}
						acc[(oz*p.out[1]+oy)*p.out[2]+ox] += xv * float64(wk[k])
					}
				}
			}
		}
		yb := y[b*p.m*p.outSz:]
		for m := range p.m {
			var bv float64
			if p.bias {
				bv = float64(bias[m])
			}
			for i, v := range p.acc[m*p.outSz : (m+1)*p.outSz] {
				yb[m*p.outSz+i] = T(v + bv)
			}
		}
	}
}

// firstError keeps the first error that concurrent chunks of a parallel
// loop report.
type firstError struct {
	mu  sync.Mutex
	err error
}

// add records err if it is the first (nil is ignored).
func (f *firstError) add(err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	f.err = cmp.Or(f.err, err)
	f.mu.Unlock()
}

// reset returns the error recorded and clears it.
func (f *firstError) reset() error {
	err := f.err
	f.err = nil
	return err
}
