package onnx

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kilnml/kiln/tensor"
)

// inputs declares a kiln Input for every graph input that is not also an
// initializer (old exporters list weights as inputs too; the initializer
// wins, and must agree with the input's declared dtype and fixed dims).
// Symbolic and unknown dims must be bound by WithShape or WithDim.
func (imp *importer) inputs() error {
	var ins []*ValueInfo
	for _, vi := range imp.mp.Graph.Inputs {
		init, ok := imp.vals[vi.Name]
		if !ok {
			ins = append(ins, vi)
			continue
		}
		if err := agrees(vi, init); err != nil {
			return err
		}
	}
	byName := map[string]*ValueInfo{}
	for _, vi := range ins {
		if vi.Name == "" {
			return fmt.Errorf("onnx: a graph input has no name")
		}
		if byName[vi.Name] != nil {
			return fmt.Errorf("onnx: graph input %q is declared twice", vi.Name)
		}
		byName[vi.Name] = vi
	}
	for name := range imp.opts.shapes {
		if byName[name] == nil {
			return fmt.Errorf("onnx: WithShape(%q): the model has no such input (inputs: %s)", name, inputNames(ins))
		}
	}
	ins, err := imp.freeze(ins, byName)
	if err != nil {
		return err
	}
	dims, err := imp.bindDims(byName)
	if err != nil {
		return err
	}
	var unbound []string
	for _, vi := range ins {
		if !vi.IsTensor {
			return fmt.Errorf("onnx: input %q is not a tensor (sequences and maps are not supported)", vi.Name)
		}
		dt, err := DType(vi.ElemType)
		if err != nil {
			return fmt.Errorf("onnx: input %q: %w", vi.Name, err)
		}
		if !vi.HasShape {
			if _, ok := imp.opts.shapes[vi.Name]; !ok {
				unbound = append(unbound, fmt.Sprintf("%s (no shape: use WithShape)", vi.Name))
				continue
			}
		}
		s, missing, err := resolveShape(vi, imp.opts.shapes[vi.Name], dims)
		if err != nil {
			return err
		}
		if missing != "" {
			unbound = append(unbound, missing)
			continue
		}
		n := imp.g.Input(vi.Name, dt, s...)
		if err := imp.g.Err(); err != nil {
			return fmt.Errorf("onnx: input %q: %w", vi.Name, err)
		}
		imp.vals[vi.Name] = &value{name: vi.Name, node: n}
	}
	if len(unbound) > 0 {
		return fmt.Errorf("onnx: inputs with unbound dims (bind them with onnx.WithShape or onnx.WithDim): %s", strings.Join(unbound, "; "))
	}
	return nil
}

// dimNames lists symbolic dim names in order, or "none".
func dimNames(set map[string]bool) string {
	if len(set) == 0 {
		return "none"
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// agrees checks an initializer against a graph input of the same name:
// the input's element type and every fixed dim must be the initializer's
// (a silently ignored declaration would hide a wrong export).
func agrees(vi *ValueInfo, init *value) error {
	if !vi.IsTensor {
		return nil
	}
	dt, s := init.dtype(), init.shape()
	if want, err := DType(vi.ElemType); err == nil && want != dt {
		return fmt.Errorf("onnx: graph input %q is declared %v but its initializer is %v", vi.Name, want, dt)
	}
	if !vi.HasShape {
		return nil
	}
	bad := len(vi.Dims) != len(s)
	for i, d := range vi.Dims {
		if !bad && d.HasValue && d.Value != int64(s[i]) {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("onnx: graph input %q is declared with shape %v but its initializer has %v", vi.Name, vi.Dims, s)
	}
	return nil
}

// bindDims collects symbolic dim sizes: WithDim first, then the dims that
// WithShape gives to inputs declaring them symbolically.
func (imp *importer) bindDims(byName map[string]*ValueInfo) (map[string]int, error) {
	dims := map[string]int{}
	declared := map[string]bool{} // the symbolic dims the inputs declare
	for _, vi := range byName {
		for _, d := range vi.Dims {
			if d.Param != "" && !d.HasValue {
				declared[d.Param] = true
			}
		}
	}
	for k, v := range imp.opts.dims {
		if v < 0 {
			return nil, fmt.Errorf("onnx: WithDim(%q, %d): negative size", k, v)
		}
		if !declared[k] {
			return nil, fmt.Errorf("onnx: WithDim(%q, %d): no input declares dim %q (symbolic dims: %s)", k, v, k, dimNames(declared))
		}
		dims[k] = v
	}
	names := make([]string, 0, len(imp.opts.shapes))
	for name := range imp.opts.shapes {
		names = append(names, name)
	}
	sort.Strings(names) // deterministic conflict messages
	for _, name := range names {
		vi, s := byName[name], imp.opts.shapes[name]
		if !vi.HasShape {
			continue
		}
		if len(s) != len(vi.Dims) {
			return nil, fmt.Errorf("onnx: WithShape(%q, %v): the input has rank %d (%v)", name, s, len(vi.Dims), vi.Dims)
		}
		for i, d := range vi.Dims {
			if d.Param == "" || d.HasValue {
				continue
			}
			if old, ok := dims[d.Param]; ok && old != s[i] {
				return nil, fmt.Errorf("onnx: WithShape(%q, %v): dim %q is already bound to %d", name, s, d.Param, old)
			}
			dims[d.Param] = s[i]
		}
	}
	return dims, nil
}

// resolveShape gives an input its static shape, or names what is missing.
func resolveShape(vi *ValueInfo, given []int, dims map[string]int) (tensor.Shape, string, error) {
	if given != nil {
		for _, d := range given {
			if d < 0 {
				return nil, "", fmt.Errorf("onnx: WithShape(%q, %v): negative dim", vi.Name, given)
			}
		}
		if vi.HasShape {
			for i, d := range vi.Dims {
				if d.HasValue && d.Value != int64(given[i]) {
					return nil, "", fmt.Errorf("onnx: WithShape(%q, %v): the model fixes dim %d to %d", vi.Name, given, i, d.Value)
				}
			}
		}
		return tensor.Shape(given).Clone(), "", nil
	}
	s := make(tensor.Shape, len(vi.Dims))
	var missing []string
	for i, d := range vi.Dims {
		switch {
		case d.HasValue:
			if d.Value < 0 || d.Value > tensor.MaxElements {
				return nil, "", fmt.Errorf("onnx: input %q: invalid dim %d", vi.Name, d.Value)
			}
			s[i] = int(d.Value)
		case d.Param != "":
			v, ok := dims[d.Param]
			if !ok {
				missing = append(missing, d.Param)
			}
			s[i] = v
		default:
			missing = append(missing, fmt.Sprintf("dim %d", i))
		}
	}
	if missing != nil {
		return nil, fmt.Sprintf("%s %v needs %s", vi.Name, vi.Dims, strings.Join(missing, ", ")), nil
	}
	return s, "", nil
}

func inputNames(ins []*ValueInfo) string {
	s := make([]string, len(ins))
	for i, vi := range ins {
		s[i] = vi.Name
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// freeze turns the inputs given WithInputValue into known constants and
// returns the inputs that stay graph inputs.
func (imp *importer) freeze(ins []*ValueInfo, byName map[string]*ValueInfo) ([]*ValueInfo, error) {
	if len(imp.opts.values) == 0 {
		return ins, nil
	}
	for name, t := range imp.opts.values {
		vi := byName[name]
		if vi == nil {
			return nil, fmt.Errorf("onnx: WithInputValue(%q): the model has no such input (inputs: %s)", name, inputNames(ins))
		}
		if _, err := tensor.View(t.DType, t.Shape, t.Data); err != nil {
			return nil, fmt.Errorf("onnx: WithInputValue(%q): %w", name, err)
		}
		if dt, err := DType(vi.ElemType); err != nil || dt != t.DType {
			return nil, fmt.Errorf("onnx: WithInputValue(%q): the input is %s, the value %v", name, TypeName(vi.ElemType), t.DType)
		}
		if vi.HasShape && !declaredMatches(vi.Dims, t.Shape) {
			return nil, fmt.Errorf("onnx: WithInputValue(%q): the input is declared %v, the value is %v", name, vi.Dims, t.Shape)
		}
		c := t.Clone()
		imp.vals[name] = &value{name: name, known: &c}
	}
	kept := ins[:0:0]
	for _, vi := range ins {
		if _, frozen := imp.opts.values[vi.Name]; !frozen {
			kept = append(kept, vi)
		}
	}
	return kept, nil
}
