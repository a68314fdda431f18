package kiln_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/internal/demo"
	"github.com/kilnml/kiln/tensor"
)

func TestDevice(t *testing.T) {
	s := kiln.NewSession(kiln.CPU)
	if s.Device() != kiln.CPU {
		t.Errorf("session device %v, want cpu", s.Device())
	}
	g, _ := smallMLP(t)
	cg, err := s.Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if d := cg.Device(); d != kiln.CPU || d.String() != "cpu" {
		t.Errorf("Device() = %#v (%q), want cpu", d, d)
	}
	for d, want := range map[kiln.Device]string{kiln.CUDA(1): "cuda:1", kiln.Metal(): "metal"} {
		if d.String() != want {
			t.Errorf("%#v prints as %q, want %q", d, d.String(), want)
		}
	}
}

// TestInfos checks the declared inputs, outputs and params of the tiny
// demo encoder against its config.
func TestInfos(t *testing.T) {
	c := demo.Tiny
	g := demo.Encoder(c)
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	str := func(ti []kiln.TensorInfo) string {
		var s []string
		for _, x := range ti {
			s = append(s, fmt.Sprintf("%s %v%v", x.Name, x.DType, x.Shape))
		}
		return strings.Join(s, "; ")
	}
	wantIn := fmt.Sprintf("input_ids i64[%d %d]; attention_mask f32[%d 1 1 %d]", c.Batch, c.Seq, c.Batch, c.Seq)
	if got := str(cg.Inputs()); got != wantIn {
		t.Errorf("Inputs: %s, want %s", got, wantIn)
	}
	wantOut := fmt.Sprintf("last_hidden_state f32[%d %d %d]", c.Batch, c.Seq, c.Hidden)
	if got := str(cg.Outputs()); got != wantOut {
		t.Errorf("Outputs: %s, want %s", got, wantOut)
	}
	// Params: 4 for the embeddings (word, position, norm scale and bias)
	// and 16 per layer (q, k, v, o, ffn1, ffn2 weight and bias; two norms).
	params := cg.Params()
	if want := 4 + c.Layers*(6*2+2*2); len(params) != want {
		t.Errorf("%d params, want %d", len(params), want)
	}
	byName := map[string]kiln.TensorInfo{}
	for _, p := range params {
		byName[p.Name] = p
	}
	for name, shape := range map[string]tensor.Shape{
		"embeddings.word":     {c.Vocab, c.Hidden},
		"embeddings.position": {c.Seq, c.Hidden},
		"embeddings.ln.scale": {c.Hidden},
		"embeddings.ln.bias":  {c.Hidden},
		"layer0.q.weight":     {c.Hidden, c.Hidden},
		"layer0.k.bias":       {c.Hidden},
		"layer0.v.bias":       {c.Hidden},
		"layer0.o.weight":     {c.Hidden, c.Hidden},
		"layer0.ln1.scale":    {c.Hidden},
		"layer0.ffn1.bias":    {c.FFN},
		"layer0.ffn2.weight":  {c.FFN, c.Hidden},
		"layer0.ln2.scale":    {c.Hidden},
		"layer1.q.bias":       {c.Hidden},
		"layer1.k.weight":     {c.Hidden, c.Hidden},
		"layer1.v.weight":     {c.Hidden, c.Hidden},
		"layer1.o.bias":       {c.Hidden},
		"layer1.ln1.bias":     {c.Hidden},
		"layer1.ffn1.weight":  {c.Hidden, c.FFN},
		"layer1.ffn2.bias":    {c.Hidden},
		"layer1.ln2.bias":     {c.Hidden},
	} {
		p, ok := byName[name]
		if !ok || p.DType != tensor.F32 || !p.Shape.Equal(shape) {
			t.Errorf("param %q: %v%v (found %v), want f32%v", name, p.DType, p.Shape, ok, shape)
		}
	}
	// The descriptions are copies: changing one does not change the graph.
	in := cg.Inputs()
	in[0].Shape[1] = 999
	if cg.Inputs()[0].Shape[1] != c.Seq {
		t.Error("Inputs() shares its shapes with the graph")
	}
}

// TestReport checks that the report names the device, the step count, the
// plan and every kernel variant, with counts that add up.
func TestReport(t *testing.T) {
	g := demo.Encoder(demo.Tiny)
	cg, err := kiln.NewSession(kiln.CPU).Compile(g)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	rep := cg.Report()
	st := cg.Stats()
	if st.Steps == 0 {
		t.Fatal("no steps")
	}
	head := fmt.Sprintf("device cpu: %d nodes, %d steps\n", len(cg.Graph().Nodes), st.Steps)
	if !strings.HasPrefix(rep, head) {
		t.Errorf("report starts %q, want %q", firstLine(rep), head)
	}
	if !strings.Contains(rep, "plan: "+cg.Plan().Report()) {
		t.Errorf("report lacks the plan line %q:\n%s", cg.Plan().Report(), rep)
	}
	m := regexp.MustCompile(`(?m)^kernels:(.*)$`).FindStringSubmatch(rep)
	if m == nil {
		t.Fatalf("report has no kernels line:\n%s", rep)
	}
	total, seen := 0, map[string]bool{}
	for _, f := range strings.Fields(m[1]) {
		name, n, ok := strings.Cut(f, "×")
		k, err := strconv.Atoi(n)
		if !ok || err != nil {
			t.Fatalf("kernel entry %q is not name×count", f)
		}
		total += k
		seen[strings.SplitN(name, "/", 2)[0]] = true
	}
	if total != st.Steps {
		t.Errorf("kernel counts add up to %d, want %d steps", total, st.Steps)
	}
	// Every computing op of the compiled (fused) graph has steps, and no
	// other op does. Views may be free, so they may be missing.
	for _, n := range cg.Graph().Nodes {
		if !n.Op.IsSource() && !n.Op.IsView() && !seen[n.Op.String()] {
			t.Errorf("kernels line lacks %v: %s", n.Op, m[1])
		}
	}
	compiled := map[string]bool{}
	for _, n := range cg.Graph().Nodes {
		compiled[n.Op.String()] = true
	}
	for op := range seen {
		if !compiled[op] {
			t.Errorf("kernels line names %s, which is not in the compiled graph", op)
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestClosed checks that every method fails after Close, without panics,
// and that Close is idempotent.
func TestClosed(t *testing.T) {
	g, feeds := smallMLP(t)
	cg := compileSet(t, kiln.NewSession(kiln.CPU), g, feeds)
	x := feeds["x"].F32()
	if _, err := cg.RunSlots(x); err != nil {
		t.Fatal(err)
	}
	if err := cg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cg.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	in := []kiln.Input{kiln.In("x", x)}
	calls := map[string]func() error{
		"SetParam":      func() error { return cg.SetParam("b2", []float32{0, 0}) },
		"SetParamTyped": func() error { return cg.SetParamTyped("b2", make([]byte, 8), tensor.F32) },
		"Run":           func() error { _, err := cg.Run(in...); return err },
		"RunTyped": func() error {
			_, err := cg.RunTyped(kiln.TypedInput{Name: "x", Data: tensor.Bytes(x), DType: tensor.F32})
			return err
		},
		"RunSlots":     func() error { _, err := cg.RunSlots(x); return err },
		"RunRaw":       func() error { _, err := cg.RunRaw(in...); return err },
		"CommitNoWait": func() error { return cg.CommitNoWait(in...) },
		"SyncPending":  cg.SyncPending,
		"RunPipelined": func() error { _, err := cg.RunPipelined([][]kiln.Input{in}); return err },
		"RunPipelined(nil)": func() error {
			_, err := cg.RunPipelined(nil)
			return err
		},
		"Clone":        func() error { _, err := cg.Clone(); return err },
		"BindHandle":   func() error { return cg.BindHandle("x", x) },
		"FeedHandle":   func() error { return cg.FeedHandle("x", 0) },
		"ReadHandle":   func() error { _, err := cg.ReadHandle("x"); return err },
		"OutputTensor": func() error { _, err := cg.OutputTensor(0); return err },
	}
	for name, call := range calls {
		if err := call(); err == nil {
			t.Errorf("%s after Close: no error", name)
		}
	}
	if cg.Output(0) != nil {
		t.Error("Output(0) after Close is not nil")
	}
	if cg.Arena() != nil {
		t.Error("Arena() after Close is not nil")
	}
	// Descriptions still work: they do not touch the arena.
	if len(cg.Inputs()) != 1 || cg.Device() != kiln.CPU {
		t.Error("Inputs/Device after Close changed")
	}
}
