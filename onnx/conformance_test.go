package onnx

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/ops"
	"github.com/kilnml/kiln/tensor"
)

// TestConformance runs cases of ONNX's own node test suite: each case is
// a directory holding model.onnx and test_data_set_*/{input,output}_<i>.pb.
// By default it runs the subset committed under testdata/node; set
// KILN_ONNX_CONFORMANCE to a directory made by
// `python3 -m onnx.backend.test.cmd_tools generate-data -o DIR` (see
// conformance.sh) to run the whole suite. A case whose ops kiln does not
// map, or whose values use a dtype kiln lacks, is skipped as unsupported;
// every other case must match the expected outputs. With
// KILN_ONNX_CONFORMANCE_MD set to a path, the per-op counts are also
// written there as a Markdown table.
func TestConformance(t *testing.T) {
	root := os.Getenv("KILN_ONNX_CONFORMANCE")
	full := root != ""
	if !full {
		root = filepath.Join("testdata", "node")
	}
	dirs := conformanceDirs(root)
	if len(dirs) == 0 {
		if full {
			t.Fatalf("KILN_ONNX_CONFORMANCE=%s holds no test_* case directories", root)
		}
		t.Skip("no committed conformance cases")
	}
	tally := map[string]*opTally{}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		r := runConformance(dir)
		tl := tally[r.op]
		if tl == nil {
			tl = &opTally{}
			tally[r.op] = tl
		}
		switch r.status {
		case statusPass:
			tl.pass++
			if r.frozen {
				tl.frozen++
			}
			if r.lifted {
				tl.lifted++
			}
		case statusFail:
			tl.fail++
		case statusDefect:
			tl.defect++
		default:
			tl.unsupported++
		}
		t.Run(name, func(t *testing.T) {
			switch r.status {
			case statusFail:
				t.Errorf("%s: %s", r.op, r.detail)
			case statusUnsupported:
				t.Skipf("unsupported: %s", r.detail)
			case statusDefect:
				t.Skipf("defective test data: %s", r.detail)
			}
		})
	}
	table := conformanceTable(tally)
	if full || testing.Verbose() {
		fmt.Print(table)
	}
	if md := os.Getenv("KILN_ONNX_CONFORMANCE_MD"); md != "" {
		if err := os.WriteFile(md, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// conformanceDirs lists the case directories under root, or under
// root/node when root is the generator's output directory.
func conformanceDirs(root string) []string {
	for _, base := range []string{root, filepath.Join(root, "node")} {
		dirs, _ := filepath.Glob(filepath.Join(base, "test_*"))
		var keep []string
		for _, d := range dirs {
			if _, err := os.Stat(filepath.Join(d, "model.onnx")); err == nil {
				keep = append(keep, d)
			}
		}
		if len(keep) > 0 {
			sort.Strings(keep)
			return keep
		}
	}
	return nil
}

type caseStatus int

const (
	statusPass caseStatus = iota
	statusFail
	statusUnsupported
	statusDefect // the suite's data contradicts its model (see dataError)
)

type caseResult struct {
	op     string // the operator the case tests (see caseOp)
	status caseStatus
	frozen bool // ran with shape-like inputs frozen (see checkSet)
	lifted bool // ran with its opset lifted to 11 (see liftOpset)
	detail string
}

type opTally struct{ pass, frozen, lifted, fail, unsupported, defect int }

// dataError marks test data that contradicts its own model, which a
// runtime with static shapes cannot run (onnx 1.12's CastLike-to-bfloat16
// cases declare a [3 4] "like" input and store a [1] one).
type dataError struct{ msg string }

func (e *dataError) Error() string { return e.msg }

// unchangedSince gives, for ops kiln maps, the opset at which the op's
// definition in force at opset 11 was introduced (from ONNX's operator
// changelog). A model at an older opset that uses only such ops, each at
// or after that opset, means the same at opset 11. The suite writes each
// case at its op's own opset, so Sin's cases import opset 7.
var unchangedSince = map[string]int64{
	"Sin": 7, "Cos": 7, "Not": 1, "And": 7, "Or": 7, "HardSigmoid": 6,
	"GlobalAveragePool": 1, "GlobalMaxPool": 1, "ConstantOfShape": 9, "Add": 7, "Identity": 1,
	"Tan": 7, "Asin": 7, "Acos": 7, "Atan": 7, "Sinh": 9, "Cosh": 9, "Asinh": 9, "Acosh": 9, "Atanh": 9,
	"Softplus": 1, "Softsign": 1, "Elu": 6, "Selu": 6, "ThresholdedRelu": 10, "Shrink": 9, "IsInf": 10,
	"Xor": 7, "InstanceNormalization": 6, "EyeLike": 9, "LRN": 1,
	// Scan-11 only allows negative scan axes, so a Scan-9 model means the
	// same at opset 11 (Scan-8, with its batch axis, does not).
	"Scan": 9,
	// Scatter-11 (deprecated) only added negative indices to Scatter-9;
	// ReverseSequence-10 is the only version.
	"Scatter": 9, "ReverseSequence": 10,
	// Upsample 9 is Upsample 10 (which only deprecates it), and kiln
	// maps it at every opset.
	"Upsample": 9,
	// The quantization ops of opset 10 next change at 13 (QuantizeLinear,
	// DequantizeLinear: axis) or 21 (the integer products).
	"QuantizeLinear": 10, "DequantizeLinear": 10, "MatMulInteger": 10, "ConvInteger": 10,
	"QLinearMatMul": 10, "QLinearConv": 10,
}

// allUnchanged reports whether every node of g and of its subgraphs is
// listed in unchangedSince for the given opset.
func allUnchanged(g *GraphProto, opset int64) bool {
	for _, n := range g.Nodes {
		since, ok := unchangedSince[n.OpType]
		if !ok || n.Domain != "" || opset < since {
			return false
		}
		for _, a := range n.Attrs {
			for _, sub := range a.subgraphs() {
				if !allUnchanged(sub, opset) {
					return false
				}
			}
		}
	}
	return true
}

// liftOpset rewrites a model older than MinOpset to opset 11 when every
// op in it is unchanged between the model's opset and 11, by appending a
// second ai.onnx opset import (the importer takes the last). This is
// what onnx.version_converter does for these ops.
func liftOpset(model []byte, mp *ModelProto) ([]byte, bool) {
	opset := int64(-1)
	for _, o := range mp.Opsets {
		if o.Domain == "" || o.Domain == "ai.onnx" {
			opset = o.Version
		}
	}
	if opset < 1 || opset >= MinOpset || mp.Graph == nil {
		return nil, false
	}
	if !allUnchanged(mp.Graph, opset) {
		return nil, false
	}
	imp := appendVarint(nil, 2, MinOpset)
	return appendMsg(slices.Clone(model), 8, imp), true
}

// runConformance runs one case. Panics are caught and reported as
// failures, so one bug does not hide the rest of the suite.
func runConformance(dir string) (r caseResult) {
	r.op = "?"
	b, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return caseResult{op: r.op, status: statusFail, detail: err.Error()}
	}
	mp, err := Decode(b)
	if err != nil {
		return caseResult{op: r.op, status: statusFail, detail: "decode: " + err.Error()}
	}
	r.op = caseOp(filepath.Base(dir), mp)
	defer func() {
		if p := recover(); p != nil {
			r.status, r.detail = statusFail, fmt.Sprintf("panic: %v", p)
		}
	}()
	if lifted, ok := liftOpset(b, mp); ok {
		b, r.lifted = lifted, true
		if mp, err = Decode(b); err != nil {
			return caseResult{op: r.op, status: statusFail, detail: "decode: " + err.Error()}
		}
	}
	if why := unsupportedCase(mp); why != "" {
		r.status, r.detail = statusUnsupported, why
		return r
	}
	frozen, err := checkConformance(dir, b)
	r.frozen = frozen
	if err != nil {
		var ue *UnsupportedError
		var de *dataError
		switch {
		case errors.As(err, &ue):
			r.status, r.detail = statusUnsupported, err.Error()
		case errors.As(err, &de):
			r.status, r.detail = statusDefect, err.Error()
		default:
			r.status, r.detail = statusFail, err.Error()
		}
		return r
	}
	r.status = statusPass
	return r
}

// unsupportedCase names what kiln does not claim to support in a model:
// ops outside opTable or another domain, control flow, or values of a
// dtype kiln lacks. Empty means kiln must run the case.
func unsupportedCase(mp *ModelProto) string {
	g := mp.Graph
	if g == nil {
		return "no graph"
	}
	if _, err := defaultOpset(mp); err != nil {
		return err.Error()
	}
	if u := Unsupported(mp); len(u) > 0 {
		seen := map[string]bool{}
		var names []string
		for _, o := range u {
			if !seen[o.OpType] {
				seen[o.OpType] = true
				names = append(names, o.OpType)
			}
		}
		return "ops " + strings.Join(names, ", ")
	}
	for _, list := range [][]*ValueInfo{g.Inputs, g.Outputs} {
		for _, v := range list {
			if !v.IsTensor {
				return fmt.Sprintf("%q is not a tensor (sequence, map or optional)", v.Name)
			}
			if _, err := DType(v.ElemType); err != nil {
				return fmt.Sprintf("%q: %v", v.Name, err)
			}
		}
	}
	for _, in := range g.Initializers {
		if _, err := DType(in.DataType); err != nil {
			return fmt.Sprintf("initializer %q: %v", in.Name, err)
		}
	}
	for _, n := range g.Nodes {
		for _, a := range n.Attrs {
			if a.T != nil {
				if _, err := DType(a.T.DataType); err != nil {
					return fmt.Sprintf("%s attribute %q: %v", n.OpType, a.Name, err)
				}
			}
		}
	}
	return ""
}

// caseOp names the operator a case tests: the op of a single-op model,
// else the known op whose name the case name starts with (function ops
// whose expanded body is the model, such as LayerNormalization in
// test_layer_normalization_*_expanded), marked "(expanded)".
func caseOp(name string, mp *ModelProto) string {
	types := map[string]bool{}
	for _, n := range mp.Graph.Nodes {
		types[n.OpType] = true
	}
	key := strings.ReplaceAll(strings.TrimPrefix(name, "test_"), "_", "")
	if len(types) == 1 {
		for op := range types {
			return op
		}
	}
	best := ""
	for _, op := range onnxOpNames {
		if strings.HasPrefix(key, strings.ToLower(op)) && len(op) > len(best) {
			best = op
		}
	}
	if best == "" {
		best = strings.SplitN(strings.TrimPrefix(name, "test_"), "_", 2)[0]
	}
	if strings.HasSuffix(name, "_expanded") {
		best += " (expanded)"
	}
	return best
}

// onnxOpNames are the ONNX ops whose expanded (function body) or
// multi-node cases the suite holds, for caseOp's name matching.
var onnxOpNames = []string{
	"Bernoulli", "BlackmanWindow", "CastLike", "Celu", "CenterCropPad", "Clip", "DynamicQuantizeLinear",
	"Elu", "GreaterOrEqual", "GroupNormalization", "HammingWindow", "HannWindow", "HardSigmoid",
	"HardSwish", "LayerNormalization", "LessOrEqual", "LogSoftmax", "MeanVarianceNormalization",
	"Mish", "NegativeLogLikelihoodLoss", "Range", "ReduceL1", "ReduceL2", "ReduceLogSum",
	"ReduceLogSumExp", "ReduceSumSquare", "Relu", "Selu", "SequenceMap", "Shrink", "Softmax",
	"SoftmaxCrossEntropyLoss", "Softplus", "Softsign", "ThresholdedRelu", "Gelu", "PRelu",
	"LeakyRelu", "Sce", "Nllloss", "Gradient", "Loop", "If", "Scan", "Momentum", "Adam", "Adagrad",
}

// checkConformance compares the compiled outputs of every test data set
// of a case with the expected ones. It reports whether some set needed
// frozen inputs (see checkSet).
func checkConformance(dir string, model []byte) (frozen bool, err error) {
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	if len(sets) == 0 {
		return false, errors.New("no test_data_set_* directory")
	}
	for _, set := range sets {
		ins, err := readPBs(set, "input")
		if err != nil {
			return false, err
		}
		want, err := readPBs(set, "output")
		if err != nil {
			return false, err
		}
		err = checkSet(dir, model, ins, want, false)
		var ue *UnsupportedError
		if errors.As(err, &ue) {
			frozen = true
			err = checkSet(dir, model, ins, want, true)
		}
		if err != nil {
			return false, fmt.Errorf("%s: %w", filepath.Base(set), err)
		}
	}
	return frozen, nil
}

// checkSet imports, compiles and runs a case's model on one data set.
// The suite passes shape-like arguments (Reshape's shape, Slice's starts,
// CumSum's axis, Resize's scales) as graph inputs, which kiln's static shapes cannot take
// at run time; with freeze, the integer, bool, scalar and knownArg inputs are bound
// to the set's values with WithInputValue, as a user would do for such a
// model, and the rest stay run-time inputs. A mismatch also says what the
// reference interpreter computes, which tells a kernel or fusion bug (the
// interpreter agrees with ONNX) from an import or op-semantics one (it
// does not).
func checkSet(dir string, model []byte, ins, want []tensor.Tensor, freeze bool) error {
	mp, err := Decode(model)
	if err != nil {
		return err
	}
	inits := map[string]bool{}
	for _, in := range mp.Graph.Initializers {
		inits[in.Name] = true
	}
	opts := []Option{WithBaseDir(dir)}
	feeds := map[string]tensor.Tensor{}
	var typed []kiln.TypedInput
	k := 0
	for _, vi := range mp.Graph.Inputs {
		if inits[vi.Name] { // old IR: initializers listed as inputs
			continue
		}
		if k >= len(ins) {
			return fmt.Errorf("no data for input %q", vi.Name)
		}
		in := ins[k]
		k++
		if vi.HasShape && !declaredMatches(vi.Dims, in.Shape) {
			return &dataError{fmt.Sprintf("input %q is declared %v but its data is %v", vi.Name, vi.Dims, in.Shape)}
		}
		if freeze && (!in.DType.IsFloat() || in.NumElements() <= 1 || knownArgs(mp)[vi.Name]) {
			opts = append(opts, WithInputValue(vi.Name, in))
			continue
		}
		typed = append(typed, kiln.TypedInput{Name: vi.Name, Data: in.Data, DType: in.DType})
		feeds[vi.Name] = in
	}
	m, err := Parse(model, opts...)
	if err != nil {
		return err
	}
	defer m.Close()
	cg, err := kiln.NewSession(kiln.CPU).Compile(m.Graph)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	defer cg.Close()
	if err := m.SetParams(cg); err != nil {
		return err
	}
	outs, err := cg.RunTyped(typed...)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if len(outs) != len(want) {
		return fmt.Errorf("%d outputs, want %d", len(outs), len(want))
	}
	for i, o := range outs {
		got := tensor.Tensor{DType: o.DType, Shape: o.Shape, Data: o.Data}
		err := conformClose(got, want[i])
		if err == nil {
			continue
		}
		name := cg.Outputs()[i].Name
		for _, p := range m.Graph.Params() {
			w, _ := m.Weight(p.Name)
			feeds[p.Name] = w.Clone()
		}
		ref, rerr := ops.Interpret(m.Graph, feeds)
		switch {
		case rerr != nil:
			return fmt.Errorf("output %q: %v (interpreter: %v)", name, err, rerr)
		case conformClose(ref[i], want[i]) == nil:
			return fmt.Errorf("output %q: %v (the reference interpreter matches ONNX: a compiled-kernel or fusion bug)", name, err)
		default:
			return fmt.Errorf("output %q: %v (the reference interpreter differs too: an import or op-semantics bug)", name, err)
		}
	}
	return nil
}

// knownArg lists, per op, the float inputs kiln needs at import time
// (Resize's roi and scales, Upsample's scales): the suite passes them as
// graph inputs, and a user binds them with WithInputValue.
var knownArg = map[string][]int{"Resize": {1, 2}, "Upsample": {1}}

// knownArgs names the graph values read at a knownArg position.
func knownArgs(mp *ModelProto) map[string]bool {
	out := map[string]bool{}
	for _, n := range mp.Graph.Nodes {
		for _, i := range knownArg[n.OpType] {
			if i < len(n.Inputs) && n.Inputs[i] != "" {
				out[n.Inputs[i]] = true
			}
		}
	}
	return out
}

// readPBs reads <kind>_0.pb, <kind>_1.pb, ... until one is missing.
func readPBs(dir, kind string) ([]tensor.Tensor, error) {
	var out []tensor.Tensor
	for i := 0; ; i++ {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s_%d.pb", kind, i)))
		if errors.Is(err, os.ErrNotExist) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		tp, err := DecodeTensor(b)
		if err != nil {
			return nil, fmt.Errorf("%s_%d.pb: %w", kind, i, err)
		}
		if tp.DataType == typeUint16 {
			// onnx 1.12 stores BFLOAT16 test data as its uint16 bits; a
			// model with real UINT16 values is skipped before this.
			tp.DataType = typeBFloat16
		}
		v, err := tp.Tensor()
		if err != nil {
			return nil, fmt.Errorf("%s_%d.pb: %w", kind, i, err)
		}
		out = append(out, v.Clone())
	}
}

// conformClose applies the ONNX backend tests' tolerance,
// |got-want| <= 1e-7 + 1e-3·|want| for floats (one ulp, at
// most 2^-7 relative, for bfloat16), exact equality for integers and
// bools; NaNs must match NaNs.
func conformClose(got, want tensor.Tensor) error {
	if got.DType != want.DType || !got.Shape.Equal(want.Shape) {
		return fmt.Errorf("got %v %v, want %v %v", got.DType, got.Shape, want.DType, want.Shape)
	}
	g, w := got.Float64s(), want.Float64s()
	rtol := 1e-3
	if want.DType == tensor.BF16 {
		rtol = 1.0 / 128 // one ulp: onnx 1.12 truncates to bfloat16, kiln rounds to nearest even
	}
	for i := range w {
		if math.IsNaN(w[i]) || math.IsNaN(g[i]) {
			if math.IsNaN(w[i]) != math.IsNaN(g[i]) {
				return fmt.Errorf("element %d: got %v, want %v", i, g[i], w[i])
			}
			continue
		}
		d := math.Abs(g[i] - w[i])
		if g[i] == w[i] {
			continue
		}
		if !want.DType.IsFloat() || math.IsInf(w[i], 0) || d > 1e-7+rtol*math.Abs(w[i]) {
			return fmt.Errorf("element %d of %d: got %v, want %v (got %s, want %s)", i, len(w), g[i], w[i], clipList(g), clipList(w))
		}
	}
	return nil
}

// conformanceTable formats the per-op counts as Markdown, ops with a
// passing case first.
func conformanceTable(tally map[string]*opTally) string {
	ops := make([]string, 0, len(tally))
	var total opTally
	for op, tl := range tally {
		ops = append(ops, op)
		total.pass += tl.pass
		total.fail += tl.fail
		total.unsupported += tl.unsupported
		total.frozen += tl.frozen
		total.lifted += tl.lifted
		total.defect += tl.defect
	}
	sort.Slice(ops, func(i, j int) bool {
		a, b := tally[ops[i]], tally[ops[j]]
		if (a.pass+a.fail > 0) != (b.pass+b.fail > 0) {
			return a.pass+a.fail > 0
		}
		return ops[i] < ops[j]
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%d cases: %d pass, %d fail, %d unsupported, %d with defective test data\n\n",
		total.pass+total.fail+total.unsupported+total.defect, total.pass, total.fail, total.unsupported, total.defect)
	b.WriteString("| op | pass | fail | unsupported | bad data | passes with frozen inputs | passes with lifted opset |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, op := range ops {
		tl := tally[op]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d |\n", op, tl.pass, tl.fail, tl.unsupported, tl.defect, tl.frozen, tl.lifted)
	}
	return b.String()
}
