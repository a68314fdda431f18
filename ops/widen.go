package ops

import (
	"fmt"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

func isHalf(dt tensor.DType) bool { return dt == tensor.F16 || dt == tensor.BF16 }

func widenDType(dt tensor.DType) tensor.DType {
	if isHalf(dt) {
		return tensor.F32
	}
	return dt
}

// widened runs an F16/BF16 node through the op's F32 kernel: half inputs
// are widened into F32 scratch, the F32 result is rounded back (nearest
// even). The scratch belongs to the returned kernel.
func widened(e *Entry, n *graph.Node) (Kernel, error) {
	shadow := *n
	shadow.DType = widenDType(n.DType)
	shadow.Inputs = make([]*graph.Node, len(n.Inputs))
	for i, in := range n.Inputs {
		s := *in
		s.DType = widenDType(in.DType)
		shadow.Inputs[i] = &s
	}
	k, err := e.Reference(&shadow)
	if err != nil {
		return nil, fmt.Errorf("ops: %s (widened to f32): %w", n, err)
	}
	wide := make([]tensor.Tensor, len(n.Inputs))
	for i, in := range shadow.Inputs {
		if isHalf(n.Inputs[i].DType) {
			wide[i] = tensor.New(tensor.F32, in.Shape...)
		}
	}
	var wideOut tensor.Tensor
	if isHalf(n.DType) {
		wideOut = tensor.New(tensor.F32, n.Shape...)
	}
	args := make([]tensor.Tensor, len(n.Inputs))
	return func(ins []tensor.Tensor, out tensor.Tensor) error {
		for i, in := range ins {
			args[i] = in
			if wide[i].DType != tensor.Invalid {
				if err := tensor.Convert(wide[i], in); err != nil {
					return err
				}
				args[i] = wide[i]
			}
		}
		dst := out
		if wideOut.DType != tensor.Invalid {
			dst = wideOut
		}
		if err := k(args, dst); err != nil {
			return err
		}
		if wideOut.DType != tensor.Invalid {
			return tensor.Convert(out, wideOut)
		}
		return nil
	}, nil
}
