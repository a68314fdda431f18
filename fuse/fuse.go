package fuse

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

	"github.com/kilnml/kiln/graph"
)

// Pass rewrites a graph in place and records what it did in log.
type Pass struct {
	Name string
	Run  func(g *graph.Graph, log *Log) error
}

// Log is what one pass did: each fusion made, and each near miss (a
// pattern that almost matched) with the reason it did not fuse, e.g.
// "matmul_7 + add_8: matmul_7 has 2 consumers".
type Log struct {
	Fused    []string
	NearMiss []string
	seenMiss map[string]bool
}

func (l *Log) fused(format string, args ...any) {
	l.Fused = append(l.Fused, fmt.Sprintf(format, args...))
}

// miss records a near miss once (passes may meet a pattern again after
// rebuilding their view of the graph).
func (l *Log) miss(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if l.seenMiss == nil {
		l.seenMiss = map[string]bool{}
	}
	if !l.seenMiss[s] {
		l.seenMiss[s] = true
		l.NearMiss = append(l.NearMiss, s)
	}
}

// Options select passes.
type Options struct {
	// Off disables every pass (KILN_FUSE=off).
	Off bool
	// Disabled names passes to skip (KILN_FUSE=-name,-name).
	Disabled map[string]bool
	// Unknown holds the entries ParseOptions could not use (not "off",
	// not "-" and a pass name): they change nothing.
	Unknown []string
}

// CPUOnly names the passes whose fused nodes only the CPU runs: a
// session on a GPU leaves the nodes they would replace, which its
// backend lowers. With qdq off, a static QDQ model runs there as
// QuantizeLinear and DequantizeLinear around the float product (a
// correct fallback; the CPU's fused int8 product has no GPU kernel).
var CPUOnly = []string{"qdq"}

// ForDevice returns o for a session on a device of kind ("cpu", "cuda",
// "metal"): on any but the CPU, with the passes of CPUOnly disabled too.
// o's map is not changed.
func (o Options) ForDevice(kind string) Options {
	if kind == "cpu" {
		return o
	}
	d := make(map[string]bool, len(o.Disabled)+len(CPUOnly))
	for k, v := range o.Disabled {
		d[k] = v
	}
	for _, name := range CPUOnly {
		d[name] = true
	}
	o.Disabled = d
	return o
}

// FromEnv reads KILN_FUSE: "off", or a comma list of "-pass" names.
// Entries it cannot use are reported on stderr once per process.
func FromEnv() Options {
	o := ParseOptions(os.Getenv("KILN_FUSE"))
	if len(o.Unknown) > 0 {
		warnFuseOnce.Do(func() {
			names := make([]string, len(Passes))
			for i, p := range Passes {
				names[i] = p.Name
			}
			fmt.Fprintf(os.Stderr, "kiln: KILN_FUSE: ignoring %q (want off, or -pass with pass one of %s)\n",
				o.Unknown, strings.Join(names, ", "))
		})
	}
	return o
}

var warnFuseOnce sync.Once

// ParseOptions parses the KILN_FUSE syntax.
func ParseOptions(s string) Options {
	o := Options{Disabled: map[string]bool{}}
	for _, f := range strings.Split(s, ",") {
		switch f = strings.TrimSpace(f); {
		case f == "":
		case f == "off":
			o.Off = true
		case strings.HasPrefix(f, "-") && passNamed(f[1:]):
			o.Disabled[f[1:]] = true
		default:
			o.Unknown = append(o.Unknown, f)
		}
	}
	return o
}

// passNamed reports whether a pass of Passes is called name.
func passNamed(name string) bool {
	for _, p := range Passes {
		if p.Name == name {
			return true
		}
	}
	return false
}

// Report lists what the passes did.
type Report struct {
	Lines      []string // "pass: what happened", in order
	Fusions    []string // "pass: fusion", every fusion made
	NearMisses []string // "pass: pattern: reason", every near miss
}

func (r Report) String() string { return strings.Join(r.Lines, "\n") }

// Passes is the pipeline in order: Conv+BatchNorm folding first (it makes
// weight arithmetic the constant folder may finish), clean-ups, then the
// pattern fusions from the largest (attention) to the smallest
// (elementwise regions, which take what the others left), and dead code
// last.
var Passes = []Pass{
	{Name: "conv_bn", Run: convBatchNorm},
	{Name: "fold", Run: foldConstants},
	{Name: "cse", Run: commonSubexpressions},
	{Name: "simplify", Run: simplify},
	{Name: "recognise", Run: recognise},
	{Name: "attention", Run: attention},
	{Name: "dynamic_quant", Run: dynamicQuant},
	{Name: "qdq", Run: qdqProducts},
	{Name: "transpose_matmul", Run: transposeIntoMatMul},
	{Name: "epilogue", Run: epilogues},
	{Name: "norm", Run: residualNorms},
	{Name: "elementwise", Run: elementwiseRegions},
	{Name: "dce", Run: deadCode},
}

// Run applies the enabled passes to g in order, verifying after each
// one that changed the graph's structure (see structure), and the result
// once more at the end.
func Run(g *graph.Graph, o Options) (Report, error) {
	var rep Report
	if err := graph.Verify(g); err != nil {
		return rep, err
	}
	if o.Off {
		rep.Lines = append(rep.Lines, "fusion off")
		return rep, nil
	}
	shape := structure(g)
	for _, p := range Passes {
		if o.Disabled[p.Name] {
			rep.Lines = append(rep.Lines, p.Name+": disabled")
			continue
		}
		var log Log
		if err := p.Run(g, &log); err != nil {
			return rep, fmt.Errorf("fuse: pass %s: %w", p.Name, err)
		}
		if s := structure(g); s != shape || len(log.Fused) > 0 {
			if err := graph.Verify(g); err != nil {
				return rep, fmt.Errorf("fuse: graph invalid after pass %s: %w", p.Name, err)
			}
			shape = s
		}
		for _, l := range log.Fused {
			rep.Lines = append(rep.Lines, p.Name+": "+l)
			rep.Fusions = append(rep.Fusions, p.Name+": "+l)
		}
		for _, l := range log.NearMiss {
			rep.Lines = append(rep.Lines, p.Name+": near miss: "+l)
			rep.NearMisses = append(rep.NearMisses, p.Name+": "+l)
		}
	}
	if err := fuseBodies(g, o, &rep); err != nil {
		return rep, err
	}
	if err := graph.Verify(g); err != nil { // what a pass changed without a trace in structure
		return rep, fmt.Errorf("fuse: graph invalid after the passes: %w", err)
	}
	return rep, nil
}

// fuseBodies runs the same passes on a copy of every Loop node's body and
// gives the node a spec holding the fused copy (a spec is shared with the
// caller's graph and never changed). A body keeps its inputs and
// outputs, so the Loop's inference is unchanged.
func fuseBodies(g *graph.Graph, o Options, rep *Report) error {
	for _, n := range g.Nodes {
		if n.Op != graph.OpLoop || n.Attrs.Loop == nil || n.Attrs.Loop.Body == nil {
			continue
		}
		spec := *n.Attrs.Loop
		spec.Body = spec.Body.Clone()
		sub, err := Run(spec.Body, o)
		if err != nil {
			return fmt.Errorf("fuse: body of %s: %w", n, err)
		}
		for _, l := range sub.Fusions {
			rep.Lines = append(rep.Lines, "body of "+n.Name+": "+l)
			rep.Fusions = append(rep.Fusions, "body of "+n.Name+": "+l)
		}
		n.Attrs.Loop = &spec
	}
	return nil
}

// structure digests the graph's structure: every node's identity, op,
// dtype, shape and inputs, in order. Verifying re-infers every node; on a
// 100k-op chain, doing it after each of the passes, most of which change
// nothing there, was most of the compile time.
func structure(g *graph.Graph) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) { h = (h ^ v) * 1099511628211 }
	mix(uint64(len(g.Nodes)))
	for _, n := range g.Nodes {
		mix(uint64(uintptr(unsafe.Pointer(n))))
		mix(uint64(n.Op)<<8 | uint64(n.DType))
		for _, d := range n.Shape {
			mix(uint64(d))
		}
		for _, in := range n.Inputs {
			mix(uint64(uintptr(unsafe.Pointer(in))))
		}
	}
	return h
}

// recognise turns spelled-out norms and activations into single ops
// (recognise_norm.go, recognise_act.go), so the fusions after it see
// them. The replaced primitives are pruned at once: until then they still
// count as consumers of the pattern's input.
func recognise(g *graph.Graph, log *Log) error {
	if err := recogniseNorms(g, log); err != nil {
		return err
	}
	if err := recogniseActivations(g, log); err != nil {
		return err
	}
	if len(log.Fused) == 0 {
		return nil
	}
	return g.Prune()
}

// deadCode removes nodes no output depends on.
func deadCode(g *graph.Graph, log *Log) error {
	before := len(g.Nodes)
	if err := g.Prune(); err != nil {
		return err
	}
	if d := before - len(g.Nodes); d > 0 {
		log.fused("removed %d dead nodes", d)
	}
	return nil
}
