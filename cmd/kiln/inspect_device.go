package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/fuse"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/kdesc"
	"github.com/kilnml/kiln/msl"
	"github.com/kilnml/kiln/ptx"
)

// lowerChecks ask a GPU backend's emitter whether a node would lower,
// with no device: ptx writes CUDA's kernels, msl Metal's. Both are pure
// Go, so every kiln binary can answer for both.
var lowerChecks = map[string]func(*graph.Node) error{
	"cuda":  ptx.CheckNode,
	"metal": msl.CheckNode,
}

// errUnlowered ends an inspection that listed nodes a device has no
// kernel for.
var errUnlowered = errors.New("the model has nodes the device cannot run (listed above)")

// inspectDevice checks, for a GPU device, that every node of g lowers,
// as Compile would fuse it, and lists those that would not (then
// errUnlowered). It reports whether the device is there to compile on:
// where it is not (no GPU, or not this OS), the check is the inspection.
func inspectDevice(w io.Writer, g *graph.Graph, dev kiln.Device) (compile bool, err error) {
	check := lowerChecks[dev.Kind]
	if check == nil {
		return true, nil // the CPU runs every op kiln imports
	}
	work := g.Clone()
	if _, err := fuse.Run(work, fuse.FromEnv().ForDevice(dev.Kind)); err != nil {
		return false, fmt.Errorf("fuse: %w", err)
	}
	kernels := 0
	var bad []string
	for _, n := range work.Nodes {
		if kdesc.NeedsKernel(n) {
			kernels++
		}
		if err := check(n); err != nil {
			bad = append(bad, fmt.Sprintf("  %s: %v", n, err))
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "%s: %d of %d kernels would not lower:\n", dev.Kind, len(bad), kernels)
		for _, b := range bad {
			fmt.Fprintln(w, b)
		}
		return false, errUnlowered
	}
	fmt.Fprintf(w, "%s: all %d kernels lower\n", dev.Kind, kernels)
	if _, err := exec.OpenBackend(dev.Kind, dev.Index); err != nil {
		fmt.Fprintf(w, "not compiled on %v: %v\n", dev, err)
		return false, nil
	}
	return true, nil
}
