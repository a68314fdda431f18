package main

import "maps"

// Minimise shrinks a failing case while it still fails in the same
// stage: first it drops steps (halves, then quarters... then single
// steps, as delta debugging does), then it caps dims ever lower. It
// returns the smallest failing case found and its failure.
func Minimise(c Case, f *Failure, special bool, budget int) (Case, *Failure) {
	tries := 0
	still := func(t Case) *Failure {
		tries++
		if g := Check(t, special); g != nil && g.Stage == f.Stage {
			return g
		}
		return nil
	}
	if c.Drop == nil {
		c.Drop = map[int]bool{}
	}
	for chunk := max(c.Steps/2, 1); chunk >= 1 && tries < budget; chunk /= 2 {
		for lo := 0; lo < c.Steps && tries < budget; lo += chunk {
			t := c
			t.Drop = maps.Clone(c.Drop)
			changed := false
			for i := lo; i < min(lo+chunk, c.Steps); i++ {
				if !t.Drop[i] {
					t.Drop[i], changed = true, true
				}
			}
			if !changed {
				continue
			}
			if g := still(t); g != nil {
				c, f = t, g
			}
		}
	}
	for _, cap := range []int{64, 32, 16, 8, 4, 3, 2, 1} {
		if tries >= budget || (c.DimCap > 0 && cap >= c.DimCap) {
			continue
		}
		t := c
		t.DimCap = cap
		if g := still(t); g != nil {
			c, f = t, g
		}
	}
	return c, f
}
