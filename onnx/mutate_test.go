package onnx

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// TestMutatedModels: structured mutations the byte-level fuzzer rarely
// reaches. Every attribute and every small integer initializer (shapes,
// axes, pads) of every case model is set to hostile values; each variant
// must import or fail with an error, and one that imports must run in the
// reference interpreter without panicking.
func TestMutatedModels(t *testing.T) {
	ints := []int64{-1 << 40, -7, -1, 0, 1, 3, 1 << 40, math.MaxInt64, math.MinInt64}
	floats := []float32{float32(math.NaN()), float32(math.Inf(1)), -1e30, 0, -1}
	imported := 0
	try := func(mp *ModelProto) {
		t.Helper()
		if tryMutant(mp) {
			imported++
		}
	}
	dirs, _ := filepath.Glob(filepath.Join("testdata", "cases", "*"))
	variants := 0
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		mp, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := Parse(encModel(mp)); err != nil { // the encoder is faithful
			t.Fatalf("%s re-encoded: %v", dir, err)
		} else {
			m.Close()
		}
		for _, n := range mp.Graph.Nodes {
			for _, a := range n.Attrs {
				saved := *a
				for _, v := range ints {
					switch a.Type {
					case AttrInt:
						a.I = v
					case AttrInts:
						a.Ints = []int64{v, v}
					default:
						continue
					}
					try(mp)
					variants++
				}
				if a.Type == AttrTensor && a.T != nil && a.T.DataType == typeInt64 && a.T.HasRaw && len(a.T.RawData) >= 8 {
					saved := a.T.RawData
					for _, v := range ints {
						for at := 0; at+8 <= len(saved); at += 8 {
							raw := append([]byte(nil), saved...)
							binary.LittleEndian.PutUint64(raw[at:], uint64(v))
							a.T.RawData = raw
							try(mp)
							variants++
						}
					}
					a.T.RawData = saved
				}
				for _, f := range floats {
					if a.Type != AttrFloat {
						break
					}
					a.F = f
					try(mp)
					variants++
				}
				*a = saved
			}
		}
		for _, init := range mp.Graph.Initializers {
			if init.DataType != typeInt64 || !init.HasRaw || len(init.RawData) > 64 {
				continue
			}
			saved := init.RawData
			for _, v := range ints {
				raw := append([]byte(nil), saved...)
				binary.LittleEndian.PutUint64(raw[len(raw)-8:], uint64(v))
				init.RawData = raw
				try(mp)
				variants++
			}
			init.RawData = saved
		}
	}
	t.Logf("%d variants, %d imported", variants, imported)
	if variants < 500 {
		t.Errorf("only %d variants tried", variants)
	}
}

// tryMutant imports a mutated model and, if that works and the model is
// small, runs it in the reference interpreter: an error is fine, a panic
// fails the calling test. It reports whether the import succeeded.
func tryMutant(mp *ModelProto) bool {
	m, err := Parse(encModel(mp))
	if err != nil {
		return false
	}
	defer m.Close()
	total := 0
	for _, n := range m.Graph.Nodes {
		total += n.Shape.NumElements()
	}
	if total > 1<<16 {
		return true
	}
	feeds := map[string]tensor.Tensor{}
	for _, in := range m.Graph.Inputs() {
		feeds[in.Name] = tensor.New(in.DType, in.Shape...)
	}
	for _, p := range m.Graph.Params() {
		w, _ := m.Weight(p.Name)
		feeds[p.Name] = w.Clone()
	}
	ops.Interpret(m.Graph, feeds)
	return true
}

// TestStructurallyMutatedModels rewires and retypes the nodes of every
// committed model (the node cases and the test models): an input read
// from another value in scope, an op type swapped for another of a list
// that covers the variadic, broadcasting, matrix and shape ops, an input
// dropped or repeated. Each mutant must import or fail with an error, and
// one that imports must run in the reference interpreter: never a panic
// (a Mean over inputs that do not broadcast panicked in the importer).
func TestStructurallyMutatedModels(t *testing.T) {
	opTypes := []string{"Add", "Sub", "Mul", "Div", "Mean", "Sum", "Max", "Min", "MatMul", "Gemm", "Concat",
		"Relu", "Identity", "Where", "Pow", "Equal", "Reshape", "Transpose", "Softmax", "Expand", "Gather", "Conv"}
	paths, _ := filepath.Glob(filepath.Join("testdata", "cases", "*", "model.onnx"))
	more, _ := filepath.Glob(filepath.Join("testdata", "models", "*", "model.onnx"))
	r := rand.New(rand.NewPCG(21, 22))
	variants, imported := 0, 0
	for _, path := range append(paths, more...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		mp, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		nodes := mp.Graph.Nodes
		if len(nodes) == 0 {
			continue
		}
		// The values each node may read: graph inputs, initializers and
		// the outputs of the nodes before it.
		var scope []string
		for _, in := range mp.Graph.Inputs {
			scope = append(scope, in.Name)
		}
		for _, init := range mp.Graph.Initializers {
			scope = append(scope, init.Name)
		}
		visible := make([]int, len(nodes)) // scope length before node i
		for i, n := range nodes {
			visible[i] = len(scope)
			scope = append(scope, n.Outputs...)
		}
		tries := min(80, 8*len(nodes))
		for range tries {
			i := r.IntN(len(nodes))
			n := nodes[i]
			saved := *n
			n.Inputs = append([]string(nil), n.Inputs...)
			switch r.IntN(4) {
			case 0: // rewire one input
				if len(n.Inputs) > 0 && visible[i] > 0 {
					n.Inputs[r.IntN(len(n.Inputs))] = scope[r.IntN(visible[i])]
				}
			case 1: // another op type
				n.OpType = opTypes[r.IntN(len(opTypes))]
			case 2: // drop an input
				if len(n.Inputs) > 0 {
					j := r.IntN(len(n.Inputs))
					n.Inputs = append(n.Inputs[:j], n.Inputs[j+1:]...)
				}
			case 3: // repeat an input, or add one from scope
				if visible[i] > 0 {
					n.Inputs = append(n.Inputs, scope[r.IntN(visible[i])])
				}
			}
			if tryMutant(mp) {
				imported++
			}
			variants++
			*n = saved
		}
	}
	t.Logf("%d structural variants, %d imported", variants, imported)
	if variants < 500 {
		t.Errorf("only %d variants tried", variants)
	}
}
