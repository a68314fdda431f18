package main

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/npy"
	"github.com/kilnml/kiln/tensor"
)

// inputSpecs parses --input name=file.npy flags.
func inputSpecs(list []string) (map[string]string, error) {
	files := map[string]string{}
	for _, s := range list {
		name, path, ok := strings.Cut(s, "=")
		if !ok || name == "" || path == "" {
			return nil, usagef("--input %q: want name=file.npy", s)
		}
		if _, dup := files[name]; dup {
			return nil, usagef("--input %q: input %q given twice", s, name)
		}
		files[name] = path
	}
	return files, nil
}

// readInputs reads the --input files.
func readInputs(files map[string]string) (map[string]tensor.Tensor, error) {
	given := map[string]tensor.Tensor{}
	for name, path := range files {
		t, err := npy.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", name, err)
		}
		given[name] = t
	}
	return given, nil
}

// feed is one graph input's value and where it came from.
type feed struct {
	info   kiln.TensorInfo
	value  tensor.Tensor
	random bool
}

// source says where an input's value came from: "random", "file", or
// "file, f64 converted to f32" when kiln converts the file's dtype at the
// boundary (allowed, but worth a word: f64 data loses precision).
func (f feed) source() string {
	switch {
	case f.random:
		return "random"
	case f.value.DType != f.info.DType:
		return fmt.Sprintf("file, %v converted to %v", f.value.DType, f.info.DType)
	}
	return "file"
}

// feeds pairs the compiled graph's inputs with the given values and
// makes random ones (see randomTensor) for the rest. A given value must
// have the input's shape; its dtype may differ when kiln can convert it
// (int32 ids for an int64 input, say).
func feeds(c *compiled, given map[string]tensor.Tensor, seed uint64) ([]feed, error) {
	infos := c.cg.Inputs()
	known := map[string]bool{}
	for _, in := range infos {
		known[in.Name] = true
	}
	var unknown []string
	for name := range given {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if unknown != nil {
		sort.Strings(unknown)
		return nil, usagef("the model has no input %s (its inputs: %s)", strings.Join(unknown, ", "), describeInfos(infos))
	}
	rng := rand.New(rand.NewPCG(seed, 0x6b696c6e))
	out := make([]feed, len(infos))
	for i, in := range infos {
		out[i].info = in
		t, ok := given[in.Name]
		if !ok {
			t, err := randomTensor(c.model.Graph, in, rng)
			if err != nil {
				return nil, fmt.Errorf("input %q: %w", in.Name, err)
			}
			out[i].value, out[i].random = t, true
			continue
		}
		if !t.Shape.Equal(in.Shape) {
			return nil, fmt.Errorf("input %q: the file holds shape %v, the model takes %v", in.Name, t.Shape, in.Shape)
		}
		if (t.DType == tensor.Bool) != (in.DType == tensor.Bool) {
			return nil, fmt.Errorf("input %q: the file holds %v, the model takes %v", in.Name, t.DType, in.DType)
		}
		out[i].value = t
	}
	return out, nil
}

func typed(fs []feed) []kiln.TypedInput {
	ins := make([]kiln.TypedInput, len(fs))
	for i, f := range fs {
		ins[i] = kiln.TypedInput{Name: f.info.Name, Data: f.value.Data, DType: f.value.DType}
	}
	return ins
}

func describeInfos(infos []kiln.TensorInfo) string {
	if len(infos) == 0 {
		return "none"
	}
	s := make([]string, len(infos))
	for i, in := range infos {
		s[i] = fmt.Sprintf("%s %v%v", in.Name, in.DType, in.Shape)
	}
	return strings.Join(s, ", ")
}

// randomTensor makes a value for an input no file was given for:
//
//   - floating-point inputs: uniform in [-1, 1);
//   - bool inputs: true or false with equal odds;
//   - integer inputs: uniform in [0, n), where n is the smallest size of
//     the dims the input indexes in any Gather, GatherElements, GatherND,
//     ScatterElements or ScatterND that reads it as indices
//     (directly or through reshapes, transposes, casts, slices, expands,
//     tiles and concats) — the vocabulary for token ids, so an embedding
//     lookup never goes out of range; n is 2 for integer inputs that index
//     nothing (attention masks, token-type ids, flags).
func randomTensor(g *graph.Graph, in kiln.TensorInfo, rng *rand.Rand) (tensor.Tensor, error) {
	v := make([]float64, in.Shape.NumElements())
	switch {
	case in.DType.IsFloat():
		for i := range v {
			v[i] = 2*rng.Float64() - 1
		}
	default:
		n := 2
		if in.DType != tensor.Bool {
			n = indexBound(g, in.Name)
		}
		for i := range v {
			v[i] = float64(rng.IntN(n))
		}
	}
	return tensor.FromFloat64s(in.DType, in.Shape, v)
}

// indexBound is n of randomTensor's rule for the input named name.
func indexBound(g *graph.Graph, name string) int {
	start, ok := g.Lookup(name)
	if !ok {
		return 2
	}
	users := map[*graph.Node][]*graph.Node{}
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			users[in] = append(users[in], n)
		}
	}
	bound := -1
	seen := map[*graph.Node]bool{start: true}
	queue := []*graph.Node{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, u := range users[v] {
			switch {
			case len(u.Inputs) >= 2 && u.Inputs[1] == v && u.Inputs[0] != v && indexes(u):
				if d, _ := graph.IndexedDim(u, 1); bound < 0 || d < bound {
					bound = d
				}
			case carriesValues(u.Op) && !seen[u]:
				seen[u] = true
				queue = append(queue, u)
			}
		}
	}
	switch {
	case bound < 0:
		return 2
	case bound == 0:
		return 1 // an empty table: any index fails, 0 at least names the axis
	}
	return bound
}

// indexes reports whether u reads its input 1 as indices.
func indexes(u *graph.Node) bool {
	_, ok := graph.IndexedDim(u, 1)
	return ok
}

// carriesValues: ops whose outputs are some of their input's values,
// rearranged, so an index stays an index.
func carriesValues(op graph.Op) bool {
	switch op {
	case graph.OpReshape, graph.OpSqueeze, graph.OpUnsqueeze, graph.OpFlatten, graph.OpTranspose,
		graph.OpCast, graph.OpSlice, graph.OpExpand, graph.OpTile, graph.OpConcat, graph.OpSplit:
		return true
	}
	return false
}
