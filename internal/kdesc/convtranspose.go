package kdesc

import "fmt"

// Spatial is the number of spatial axes (1 to 3).
func (c *ConvTranspose) Spatial() int { return len(c.In) - 2 }

// Reach is the extent of the positions on spatial axis a that input
// cells land on before they are divided by the stride: an output cell o
// takes tap k from input cell (o + Pads[a] − k·Dilations[a]) / Strides[a]
// when that numerator t is in [0, Reach(a)) and divisible by the stride
// (the inverse of the scatter's i·stride + k·dilation − pad). One
// unsigned compare of t against Reach catches both ends.
func (c *ConvTranspose) Reach(a int) int { return (c.In[2+a]-1)*c.Strides[a] + 1 }

// Check verifies the geometry an emitter relies on: ranks, groups,
// strides and dilations ≥ 1, and an output matching the input under the
// pads (stride·(in−1) + dilation·(k−1) + 1 − begin − end per axis).
func (c *ConvTranspose) Check() error {
	sp := c.Spatial()
	if sp < 1 || sp > 3 || len(c.Kernel) != sp || len(c.Strides) != sp || len(c.Dilations) != sp ||
		len(c.Pads) != 2*sp || len(c.Out) != sp+2 {
		return fmt.Errorf("%s: input %v, kernel %v, strides %v, dilations %v, pads %v, output %v do not fit 1 to 3 spatial axes",
			c.Name, c.In, c.Kernel, c.Strides, c.Dilations, c.Pads, c.Out)
	}
	if c.Groups < 1 || c.In[1]%c.Groups != 0 || c.M%c.Groups != 0 || c.Out[0] != c.In[0] || c.Out[1] != c.M {
		return fmt.Errorf("%s: groups %d do not fit input %v and output %v", c.Name, c.Groups, c.In, c.Out)
	}
	for a := range sp {
		if min(c.Strides[a], c.Dilations[a], c.Kernel[a], c.In[2+a]) < 1 ||
			c.Out[2+a] != c.Reach(a)+c.Dilations[a]*(c.Kernel[a]-1)-c.Pads[a]-c.Pads[sp+a] {
			return fmt.Errorf("%s: output %v does not follow from input %v, kernel %v, strides %v, dilations %v, pads %v",
				c.Name, c.Out, c.In, c.Kernel, c.Strides, c.Dilations, c.Pads)
		}
	}
	return nil
}
