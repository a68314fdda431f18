package main

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/mmapfile"
	"github.com/kilnml/kiln/onnx"
	"github.com/kilnml/kiln/plan"
)

const inspectUsage = `usage: kiln inspect model.onnx [--device D] [--shape name=d0,d1,...] [--dim name=size]

Describes an ONNX model: its inputs, outputs, weights and op counts; then
imports and compiles it and prints kiln's graph, the fusion report, the
arena plan and the kernel variants chosen. When some ops cannot be
imported, every one is listed (node, op, opset, what is missing) and the
command exits with status 1 after printing the rest.

With --device cuda or metal it first asks that backend's kernel emitter
about every node of the fused graph, with no GPU needed, and lists each
node that would not lower and why (then exits with status 1); it
compiles on the device only where one can be opened.
`

// errUnsupported ends an inspection that listed unsupported ops.
var errUnsupported = errors.New("the model has ops kiln cannot import (listed above)")

func runInspect(args []string) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	fs.Usage = func() { fmt.Fprint(stderr, inspectUsage, "\nflags:\n"); fs.PrintDefaults() }
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	path, err := modelArg("inspect", pos)
	if err != nil {
		return err
	}
	f, err := mmapfile.Open(path) // regular files only: a FIFO would block
	if err != nil {
		return err
	}
	defer f.Close()
	mp, err := onnx.Decode(f.Bytes())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	describeProto(path, mp)

	opts, err := mf.options()
	if err != nil {
		return err
	}
	t0 := time.Now()
	m, err := onnx.Load(path, opts...)
	var ue *onnx.UnsupportedError
	if errors.As(err, &ue) {
		fmt.Fprintf(stdout, "unsupported (%d nodes):\n", len(ue.Ops))
		for _, u := range ue.Ops {
			fmt.Fprintf(stdout, "  %s\n", u)
		}
		return errUnsupported
	}
	if err != nil {
		// The import stopped before its nodes (unbound dims, a sequence
		// input): the ops it lacks still show, from the op types alone.
		if u := onnx.Unsupported(mp); len(u) > 0 {
			fmt.Fprintf(stdout, "unsupported ops (%d nodes; the import stopped before checking attributes and shapes):\n", len(u))
			for _, x := range u {
				fmt.Fprintf(stdout, "  %s\n", x)
			}
		}
		return withHint(err)
	}
	defer m.Close()
	fmt.Fprintf(stdout, "imported in %v: %d kiln nodes; ops %s\n", time.Since(t0).Round(time.Millisecond),
		len(m.Graph.Nodes), opCounts(kilnOps(m.Graph)))
	sess, err := mf.session()
	if err != nil {
		return err
	}
	if compile, err := inspectDevice(stdout, m.Graph, sess.Device()); !compile || err != nil {
		return err
	}
	t0 = time.Now()
	cg, err := sess.Compile(m.Graph)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	defer cg.Close()
	fmt.Fprintf(stdout, "compiled in %v: %d nodes after fusion; ops %s\n", time.Since(t0).Round(time.Millisecond),
		len(cg.Graph().Nodes), opCounts(kilnOps(cg.Graph())))
	fmt.Fprint(stdout, cg.Report())
	return nil
}

// describeProto prints what the file declares, before any import.
func describeProto(path string, mp *onnx.ModelProto) {
	var opsets []string
	for _, o := range mp.Opsets {
		d := o.Domain
		if d == "" {
			d = "ai.onnx"
		}
		opsets = append(opsets, fmt.Sprintf("%s %d", d, o.Version))
	}
	producer := strings.TrimSpace(mp.ProducerName + " " + mp.ProducerVersion)
	if producer == "" {
		producer = "unknown"
	}
	fmt.Fprintf(stdout, "%s: IR version %d, producer %s, opsets %s\n", path, mp.IRVersion, producer, strings.Join(opsets, ", "))
	g := mp.Graph
	if g == nil {
		return
	}
	inits := map[string]bool{}
	weightBytes := 0
	for _, t := range g.Initializers {
		inits[t.Name] = true
		n := 1
		for _, d := range t.Dims {
			n *= int(min(max(d, 0), 1<<31)) // a print-out: absurd dims fail at import
		}
		if dt, err := onnx.DType(t.DataType); err == nil {
			weightBytes += n * dt.Size()
		}
	}
	for _, vi := range g.Inputs {
		if !inits[vi.Name] {
			fmt.Fprintf(stdout, "input  %s\n", valueInfo(vi))
		}
	}
	for _, vi := range g.Outputs {
		fmt.Fprintf(stdout, "output %s\n", valueInfo(vi))
	}
	fmt.Fprintf(stdout, "initializers: %d (%s)\n", len(g.Initializers), plan.HumanBytes(weightBytes))
	counts := map[string]int{}
	for _, n := range g.Nodes {
		op := n.OpType
		if n.Domain != "" && n.Domain != "ai.onnx" {
			op = n.Domain + "." + op
		}
		counts[op]++
	}
	fmt.Fprintf(stdout, "ONNX ops (%d nodes): %s\n", len(g.Nodes), opCounts(counts))
}

func valueInfo(vi *onnx.ValueInfo) string {
	if !vi.IsTensor {
		return vi.Name + " (not a tensor)"
	}
	dims := make([]string, len(vi.Dims))
	for i, d := range vi.Dims {
		dims[i] = d.String()
	}
	shape := "[" + strings.Join(dims, " ") + "]"
	if !vi.HasShape {
		shape = "[unknown shape]"
	}
	return fmt.Sprintf("%s %s%s", vi.Name, strings.ToLower(onnx.TypeName(vi.ElemType)), shape)
}

func kilnOps(g *graph.Graph) map[string]int {
	counts := map[string]int{}
	for _, n := range g.Nodes {
		if !n.Op.IsSource() {
			counts[n.Op.String()]++
		}
	}
	return counts
}

// opCounts lists ops by count, most frequent first: "MatMul×12 Add×8".
func opCounts(counts map[string]int) string {
	ops := slices.Collect(maps.Keys(counts))
	slices.SortFunc(ops, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	s := make([]string, len(ops))
	for i, op := range ops {
		s[i] = fmt.Sprintf("%s×%d", op, counts[op])
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " ")
}
