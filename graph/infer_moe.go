package graph

import (
	"fmt"

	"github.com/kilnml/kiln/tensor"
)

// isIndex reports whether dt can hold expert ids (and other indices).
func isIndex(dt tensor.DType) bool { return dt == tensor.I32 || dt == tensor.I64 }

// expertIDs checks ids, the [T, k] expert ids of a routed op, against T
// tokens, and returns k.
func expertIDs(ids *Node, t int) (int, error) {
	if !isIndex(ids.DType) || ids.Shape.Rank() != 2 || ids.Shape[0] != t {
		return 0, fmt.Errorf("expert ids %v%v must be I32 or I64 [%d, k]", ids.DType, ids.Shape, t)
	}
	return ids.Shape[1], nil
}

// stacked checks that w holds E stacked matrices of dtype dt, [E, rows,
// cols] with rows given (cols -1: any), and returns E and cols.
func stacked(name string, w *Node, dt tensor.DType, rows, cols int) (e, n int, err error) {
	s := w.Shape
	if w.DType != dt || s.Rank() != 3 || s[1] != rows || (cols >= 0 && s[2] != cols) {
		want := fmt.Sprintf("[E, %d, N]", rows)
		if cols >= 0 {
			want = fmt.Sprintf("[E, %d, %d]", rows, cols)
		}
		return 0, 0, fmt.Errorf("%s %v%v must be %v %s", name, w.DType, s, dt, want)
	}
	return s[0], s[2], nil
}

// inferGroupedMatMul: x [T, K] (every slot of a token reads its row) or
// [T, k, K] (one row per slot), float; w [E, K, N] of x's dtype; ids
// [T, k]. The result is [T, k, N].
func inferGroupedMatMul(_ *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x, w, ids := ins[0], ins[1], ins[2]
	if !x.DType.IsFloat() || (x.Shape.Rank() != 2 && x.Shape.Rank() != 3) {
		return 0, nil, fmt.Errorf("x %v%v must be float [T, K] or [T, k, K]", x.DType, x.Shape)
	}
	t, kk := x.Shape[0], x.Shape[x.Shape.Rank()-1]
	k, err := expertIDs(ids, t)
	if err != nil {
		return 0, nil, err
	}
	if x.Shape.Rank() == 3 && x.Shape[1] != k {
		return 0, nil, fmt.Errorf("x %v has %d slots per token, ids %v have %d", x.Shape, x.Shape[1], ids.Shape, k)
	}
	_, n, err := stacked("w", w, x.DType, kk, -1)
	if err != nil {
		return 0, nil, err
	}
	return x.DType, tensor.Shape{t, k, n}, nil
}

// inferMoE: x [T, H] float; ids [T, k]; weights [T, k], gate and up
// [E, H, F], down [E, F, H], all of x's dtype. The result is x's shape.
func inferMoE(_ *Attrs, ins []*Node) (tensor.DType, tensor.Shape, error) {
	x, ids, wts, gate, up, down := ins[0], ins[1], ins[2], ins[3], ins[4], ins[5]
	if !x.DType.IsFloat() || x.Shape.Rank() != 2 {
		return 0, nil, fmt.Errorf("x %v%v must be float [T, H]", x.DType, x.Shape)
	}
	t, h := x.Shape[0], x.Shape[1]
	k, err := expertIDs(ids, t)
	if err != nil {
		return 0, nil, err
	}
	if wts.DType != x.DType || !wts.Shape.Equal(tensor.Shape{t, k}) {
		return 0, nil, fmt.Errorf("routing weights %v%v must be %v [%d, %d]", wts.DType, wts.Shape, x.DType, t, k)
	}
	e, f, err := stacked("gate", gate, x.DType, h, -1)
	if err != nil {
		return 0, nil, err
	}
	if !up.Shape.Equal(gate.Shape) || up.DType != x.DType {
		return 0, nil, fmt.Errorf("up %v%v must be gate's %v%v", up.DType, up.Shape, x.DType, gate.Shape)
	}
	if e2, _, err := stacked("down", down, x.DType, f, h); err != nil || e2 != e {
		return 0, nil, fmt.Errorf("down %v%v must be %v [%d, %d, %d]", down.DType, down.Shape, x.DType, e, f, h)
	}
	return x.DType, x.Shape.Clone(), nil
}
