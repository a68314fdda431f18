package safetensors

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kilnml/kiln/internal/mmapfile"
	"github.com/kilnml/kiln/tensor"
)

// Report says what SetParams did.
type Report struct {
	Set        []string // params set from the file
	Missing    []string // params of the graph the file has no tensor for
	Unexpected []string // tensors of the file the graph has no param for
}

// Complete reports whether every param was set.
func (r Report) Complete() bool { return len(r.Missing) == 0 }

func (r Report) String() string {
	s := fmt.Sprintf("set %d params", len(r.Set))
	if len(r.Missing) > 0 {
		s += "; missing: " + strings.Join(r.Missing, ", ")
	}
	if len(r.Unexpected) > 0 {
		s += "; unexpected: " + strings.Join(r.Unexpected, ", ")
	}
	return s
}

// ParamSetter is what SetParams needs of a compiled graph:
// *kiln.CompiledGraph has it. An interface, so that reading weights does
// not link the executor and the kernels.
type ParamSetter interface {
	Params() []tensor.Info
	SetParamTyped(name string, data []byte, dt tensor.DType) error
}

// SetParams sets every param of cg that has a tensor of the same name,
// converting dtypes at the boundary (BF16 weights into an F32 graph, say).
// Shapes must match exactly. Params without a tensor (which a sharded
// checkpoint's other files may hold) and tensors without a param are
// listed in the report, not errors; check Report.Complete once all shards
// are applied. An error means a tensor could not be used: a shape or
// dtype mismatch, which is reported for every such param at once.
func (f *File) SetParams(cg ParamSetter) (Report, error) {
	var r Report
	var bad []string
	var buf []byte
	params := map[string]bool{}
	for _, p := range cg.Params() {
		params[p.Name] = true
		e, ok := f.Entry(p.Name)
		if !ok {
			r.Missing = append(r.Missing, p.Name)
			continue
		}
		if !e.Shape.Equal(p.Shape) {
			bad = append(bad, fmt.Sprintf("%s: file %s%v, param %v%v", p.Name, e.FileDType, e.Shape, p.DType, p.Shape))
			continue
		}
		t, err := f.Tensor(p.Name)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		// Copied out of the mapping under a fault guard (a file truncated
		// since it was opened is an error, not SIGBUS), into one buffer
		// the params share: aligned, as conversion needs.
		if buf, err = mmapfile.CopyOut(buf, t.Data); err != nil {
			return r, fmt.Errorf("safetensors: %s: %w", p.Name, err)
		}
		if err := cg.SetParamTyped(p.Name, buf, t.DType); err != nil {
			bad = append(bad, err.Error())
			continue
		}
		r.Set = append(r.Set, p.Name)
	}
	for _, e := range f.entries {
		if !params[e.Name] {
			r.Unexpected = append(r.Unexpected, e.Name)
		}
	}
	sort.Strings(r.Missing)
	sort.Strings(r.Unexpected)
	if bad != nil {
		return r, fmt.Errorf("safetensors: %d tensor(s) do not fit their params:\n  %s", len(bad), strings.Join(bad, "\n  "))
	}
	return r, nil
}
