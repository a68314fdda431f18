package onnx

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
)

// mapConvTranspose reads ConvTranspose for 1 to 3 spatial axes. Pads
// come from pads, or from output_shape or auto_pad=SAME_* through ONNX's
// total padding stride·(in-1) + output_padding + dilation·(k-1) + 1 -
// out (the odd cell at the end for SAME_UPPER, at the beginning
// otherwise); output_padding then extends the end (kiln's negative end
// pad).
func mapConvTranspose(c *ctx) (*graph.Node, error) {
	x, err := c.need(0)
	if err != nil {
		return nil, err
	}
	wt, err := c.need(1)
	if err != nil {
		return nil, err
	}
	r := x.Shape.Rank()
	sp := r - 2
	if sp < 1 || sp > 3 || wt.Shape.Rank() != r {
		return nil, unsupportedf("input %v and weight %v: kiln has ConvTranspose over 1 to 3 spatial axes", x.Shape, wt.Shape)
	}
	kernel := []int(wt.Shape[2:])
	if ks, ok, err := c.attrInts("kernel_shape"); err != nil {
		return nil, err
	} else if ok && !equalInts(ks, kernel) {
		return nil, fmt.Errorf("kernel_shape %v disagrees with the weights %v", ks, kernel)
	}
	list := func(name string, def, n int) ([]int, error) {
		v, ok, err := c.attrInts(name)
		if err != nil || !ok {
			out := make([]int, n)
			for i := range out {
				out[i] = def
			}
			return out, err
		}
		if len(v) != n {
			return nil, fmt.Errorf("%s %v needs %d values", name, v, n)
		}
		return v, nil
	}
	strides, err := list("strides", 1, sp)
	if err != nil {
		return nil, err
	}
	dilations, err := list("dilations", 1, sp)
	if err != nil {
		return nil, err
	}
	pads, err := list("pads", 0, 2*sp)
	if err != nil {
		return nil, err
	}
	outPad, err := list("output_padding", 0, sp)
	if err != nil {
		return nil, err
	}
	group, err := c.attrInt("group", 1)
	if err != nil {
		return nil, err
	}
	if group < 1 || group > 1<<24 {
		return nil, fmt.Errorf("group %d, want at least 1", group)
	}
	autoPad, err := c.attrString("auto_pad", "NOTSET")
	if err != nil {
		return nil, err
	}
	outShape, hasOut, err := c.attrInts("output_shape")
	if err != nil {
		return nil, err
	}
	if hasOut && len(outShape) == r {
		outShape = outShape[2:] // some exporters give N and C too
	}
	if hasOut && len(outShape) != sp {
		return nil, fmt.Errorf("output_shape %v needs %d values", outShape, sp)
	}
	in := x.Shape[2:]
	for i := range sp {
		if strides[i] < 1 || dilations[i] < 1 || outPad[i] < 0 || strides[i] > 1<<24 || dilations[i] > 1<<24 || outPad[i] > 1<<24 {
			return nil, fmt.Errorf("strides %v and dilations %v must be at least 1, output_padding %v at least 0", strides, dilations, outPad)
		}
		want := -1 // the output length that sets the pads, if any
		switch {
		case hasOut:
			want = outShape[i]
		case autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER":
			want = in[i] * strides[i]
		case autoPad == "VALID":
			pads[i], pads[sp+i] = 0, 0
		case autoPad != "NOTSET":
			return nil, unsupportedf("auto_pad=%q", autoPad)
		}
		if want >= 0 {
			total := strides[i]*(in[i]-1) + outPad[i] + dilations[i]*(kernel[i]-1) + 1 - want
			half := floorDiv(total, 2)
			if autoPad == "SAME_UPPER" {
				pads[i], pads[sp+i] = half, total-half
			} else {
				pads[i], pads[sp+i] = total-half, half
			}
		}
		pads[sp+i] -= outPad[i]
	}
	opts := graph.ConvTransposeOpts{Strides: strides, Dilations: dilations, Pads: pads, Groups: int(group)}
	return c.g.ConvTranspose(x, wt, c.in(2), opts), nil
}

// floorDiv rounds toward minus infinity (a total padding is negative when
// output_shape asks for more than the full output).
func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}
