package fuse

import (
	"fmt"
	"os"
	"strings"

	"github.com/kilnml/kiln/graph"
)

// Pass rewrites a graph in place and describes what it did.
type Pass struct {
	Name string
	Run  func(g *graph.Graph) ([]string, error)
}

// Options select passes.
type Options struct {
	// Off disables every pass (KILN_FUSE=off).
	Off bool
	// Disabled names passes to skip (KILN_FUSE=-name,-name).
	Disabled map[string]bool
}

// FromEnv reads KILN_FUSE: "off", or a comma list of "-pass" names.
func FromEnv() Options {
	return ParseOptions(os.Getenv("KILN_FUSE"))
}

// ParseOptions parses the KILN_FUSE syntax.
func ParseOptions(s string) Options {
	o := Options{Disabled: map[string]bool{}}
	for _, f := range strings.Split(s, ",") {
		switch f = strings.TrimSpace(f); {
		case f == "off":
			o.Off = true
		case strings.HasPrefix(f, "-"):
			o.Disabled[f[1:]] = true
		}
	}
	return o
}

// Report lists what the passes did.
type Report struct {
	Lines []string // "pass: what happened"
}

func (r Report) String() string { return strings.Join(r.Lines, "\n") }

// Passes is the pipeline in order. Passes register here as they are added.
var Passes = []Pass{
	{Name: "dce", Run: deadCode},
}

// Run applies the enabled passes to g in order, verifying after each.
func Run(g *graph.Graph, o Options) (Report, error) {
	var rep Report
	if err := graph.Verify(g); err != nil {
		return rep, err
	}
	if o.Off {
		rep.Lines = append(rep.Lines, "fusion off")
		return rep, nil
	}
	for _, p := range Passes {
		if o.Disabled[p.Name] {
			rep.Lines = append(rep.Lines, p.Name+": disabled")
			continue
		}
		lines, err := p.Run(g)
		if err != nil {
			return rep, fmt.Errorf("fuse: pass %s: %w", p.Name, err)
		}
		if err := graph.Verify(g); err != nil {
			return rep, fmt.Errorf("fuse: graph invalid after pass %s: %w", p.Name, err)
		}
		for _, l := range lines {
			rep.Lines = append(rep.Lines, p.Name+": "+l)
		}
	}
	return rep, nil
}

// deadCode removes nodes no output depends on.
func deadCode(g *graph.Graph) ([]string, error) {
	before := len(g.Nodes)
	if err := g.Prune(); err != nil {
		return nil, err
	}
	if d := before - len(g.Nodes); d > 0 {
		return []string{fmt.Sprintf("removed %d dead nodes", d)}, nil
	}
	return nil, nil
}
