package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/driver/cuda"
	"github.com/kilnml/kiln/driver/metal"
	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/internal/mslhost"
	"github.com/kilnml/kiln/internal/ptxemu"
	"github.com/kilnml/kiln/msl"
	"github.com/kilnml/kiln/plan"
	"github.com/kilnml/kiln/ptx"
	"github.com/kilnml/kiln/tensor"
)

// prepared is a case built, its outputs computed by the reference
// interpreter, and compiled by a CPU session with fusion off (the case's
// graph is what each backend runs; a fused case was fused when built).
// The GPU backends lower that compiled graph and its plan, as their
// sessions do.
type prepared struct {
	c     opCase
	name  string // "Op/case"
	feeds map[string]tensor.Tensor
	want  []tensor.Tensor
	cg    *kiln.CompiledGraph
	err   error // from compiling for the CPU: every backend fails the case
}

// result is what one backend did with one case: its outputs, or why it
// does not lower the case (lowerErr, which the unsupported table must
// list), or a fault running what it lowered (runErr, a failure).
type result struct {
	outs     [][]byte
	lowerErr error
	runErr   error
}

// backend is a column of the matrix. run gives every prepared case's
// result (cases with p.err are not asked); check, for a GPU backend, is
// its no-device answer for one node (CheckNode), which must agree with
// whether the case lowered. An extra result (the other GEMM variant of
// Metal) is compared like the first.
type backend struct {
	name  string
	run   func(t *testing.T, ps []*prepared) [][]result
	check func(n *graph.Node) error
}

var backends = []backend{
	{"cpu", runCPU, nil},
	{"ptx-emu", runPTX, ptx.CheckNode},
	{"msl-host", runMSL, msl.CheckNode},
	{"cuda", runCUDA, ptx.CheckNode},
}

// runCPU runs each case as a compiled CPU session does: its fast kernels
// where they take the node. It logs the ops whose cases all ran the
// reference kernel itself (no fast kernel took them), where the column
// checks the session around the kernel, not a second kernel.
func runCPU(t *testing.T, ps []*prepared) [][]result {
	out := make([][]result, len(ps))
	fast := map[graph.Op]bool{}
	for i, p := range ps {
		if p.err != nil {
			continue
		}
		for v := range p.cg.Stats().Variants {
			if op, variant, _ := strings.Cut(v, "/"); op == p.c.op.String() && variant != "reference" {
				fast[p.c.op] = true
			}
		}
		var typed []kiln.TypedInput
		for _, n := range p.cg.Graph().Inputs() {
			typed = append(typed, kiln.TypedInput{Name: n.Name, Data: p.feeds[n.Name].Data, DType: n.DType})
		}
		var r result
		for _, n := range p.cg.Graph().Params() {
			if err := p.cg.SetParamTyped(n.Name, p.feeds[n.Name].Data, n.DType); err != nil && r.runErr == nil {
				r.runErr = err
			}
		}
		if r.runErr == nil {
			outs, err := p.cg.RunTyped(typed...)
			r.runErr = err
			for k, o := range outs {
				r.outs = append(r.outs, repad(p.cg.Graph().Outputs()[k], o.Data))
			}
		}
		out[i] = []result{r}
	}
	var ref []string
	for _, op := range catalogueOps() {
		if !fast[op] {
			ref = append(ref, op.String())
		}
	}
	t.Logf("cpu: no fast kernel took any case of %d ops (their reference kernel ran): %s", len(ref), strings.Join(ref, " "))
	return out
}

// repad restores the -1 rows a session trims from an output whose row
// count depends on the data (graph.PaddedRows), so it compares with the
// reference kernel's padded result: a trim too short shows as result rows
// turned into -1 rows.
func repad(o *graph.Node, data []byte) []byte {
	full := o.Shape.NumElements() * o.DType.Size()
	if !graph.PaddedRows(o) || len(data) >= full {
		return data
	}
	return append(data, bytes.Repeat([]byte{0xFF}, full-len(data))...) // I64 -1
}

// image is a compiled case's memory as a GPU backend lays it out: the
// plan's regions (indexed by plan.Region) with the inputs, params and
// constants written at their slots, and every other arena byte 0xAB (a
// value no kernel writes by chance, in every dtype), so an output
// element a kernel leaves unwritten shows.
func image(p *prepared) [][]byte {
	pl := p.cg.Plan()
	regions := make([][]byte, 2)
	regions[plan.Arena], regions[plan.Weights] = bytes.Repeat([]byte{0xAB}, pl.ArenaBytes), make([]byte, pl.WeightBytes)
	for _, n := range p.cg.Graph().Nodes {
		var data []byte
		switch {
		case n.Op == graph.OpConstant && n.Value != nil:
			data = n.Value.Data
		case n.Op == graph.OpInput || n.Op == graph.OpParam:
			data = p.feeds[n.Name].Data
		default:
			continue
		}
		s := pl.Slots[n.ID]
		copy(regions[s.Region][s.Offset:s.Offset+s.Bytes], data)
	}
	return regions
}

// outputs copies the outputs out of a run's regions.
func outputs(p *prepared, regions [][]byte) [][]byte {
	var outs [][]byte
	for _, o := range p.cg.Graph().Outputs() {
		s := p.cg.Plan().Slots[o.ID]
		outs = append(outs, bytes.Clone(regions[s.Region][s.Offset:s.Offset+s.Bytes]))
	}
	return outs
}

// runPTX lowers each case for CUDA (cuda.Lower: the backend's own
// lowering, copies and custom kernels included) and runs its steps on
// the PTX emulator.
func runPTX(t *testing.T, ps []*prepared) [][]result { return runLowered(ps, runSteps) }

// runLowered lowers each case for CUDA and runs its module and steps over
// the case's regions with run (the emulator, or a device).
func runLowered(ps []*prepared, run func(module string, steps []cuda.Step, regions [][]byte) error) [][]result {
	out := make([][]result, len(ps))
	for i, p := range ps {
		if p.err != nil {
			continue
		}
		module, steps, err := cuda.Lower(p.cg.Graph(), p.cg.Plan())
		if err != nil {
			out[i] = []result{{lowerErr: err}}
			continue
		}
		regions := image(p)
		err = run(module, steps, regions)
		out[i] = []result{{outs: outputs(p, regions), runErr: err}}
	}
	return out
}

// worstCase moves every approximate instruction's result (ex2.approx,
// rsqrt.approx, ...) by the largest error the PTX ISA allows, so the
// tolerances hold for the hardware's worst case, not only for correctly
// rounded results.
var worstCase = ptxemu.Options{Approx: ptxemu.ApproxBound}

// runSteps runs a lowered CUDA program over regions on the emulator.
func runSteps(module string, steps []cuda.Step, regions [][]byte) error {
	modules := map[string]*ptxemu.Module{}
	load := func(src string) (*ptxemu.Module, error) {
		if m, ok := modules[src]; ok {
			return m, nil
		}
		m, err := ptxemu.Load(src)
		modules[src] = m
		return m, err
	}
	mem := ptxemu.NewMemory()
	base := make([]uint64, len(regions))
	for r, b := range regions {
		if len(b) == 0 {
			continue
		}
		a, err := mem.Map(b)
		if err != nil {
			return err
		}
		base[r] = a
	}
	for i, s := range steps {
		if s.Kernel == nil {
			copy(regions[s.CopyTo.Region][s.CopyTo.Offset:], regions[s.CopyFrom.Region][s.CopyFrom.Offset:][:s.Bytes])
			continue
		}
		src := module
		if s.Module != "" {
			src = s.Module // a custom op's own module
		}
		m, err := load(src)
		if err != nil {
			return fmt.Errorf("loading step %d's module: %w", i, err)
		}
		args := make([]any, 0, len(s.Args)+len(s.Scalars))
		for _, a := range s.Args {
			args = append(args, base[a.Region]+uint64(a.Offset))
		}
		args = append(args, s.Scalars...)
		if err := m.LaunchWith(worstCase, mem, s.Kernel.Name, s.Kernel.Launch, args...); err != nil {
			return fmt.Errorf("step %d (%s): %w", i, s.Node, err)
		}
	}
	return nil
}

// mslVariants are the Metal lowerings run: the simdgroup_matrix GEMM of
// Apple7+ GPUs and the tiled one of older GPUs. A case whose kernels do
// not differ between them runs once.
var mslVariants = []metal.LowerOptions{{SimdGroup: true}, {SimdGroup: false}}

// runMSL lowers each case for Metal (metal.Lower) and runs every
// program's dispatches on the host in one C++ build (internal/mslhost).
func runMSL(t *testing.T, ps []*prepared) [][]result {
	out := make([][]result, len(ps))
	var progs []*mslhost.Program
	var at []int // the case of each program
	for i, p := range ps {
		if p.err != nil {
			continue
		}
		var libs []string
		var lowered [][]metal.Step
		for _, o := range mslVariants {
			lib, steps, err := metal.Lower(p.cg.Graph(), p.cg.Plan(), o)
			if err != nil {
				out[i], lowered = []result{{lowerErr: err}}, nil
				break
			}
			if !slices.Contains(libs, lib) {
				libs, lowered = append(libs, lib), append(lowered, steps)
			}
		}
		for _, steps := range lowered {
			prog := &mslhost.Program{Regions: image(p)}
			for _, s := range steps {
				st := mslhost.Step{Kernel: hostKernel(s.Kernel)}
				for _, a := range s.Args {
					st.Args = append(st.Args, mslhost.Arg{Region: int(a.Region), Offset: a.Offset})
				}
				prog.Steps = append(prog.Steps, st)
			}
			progs, at = append(progs, prog), append(at, i)
		}
	}
	err := mslhost.Run(msl.Header, progs)
	if err != nil {
		t.Errorf("running the Metal programs on the host: %v", err)
		err = errors.New("the host run failed (reported above)")
	}
	for j, i := range at {
		r := result{runErr: err}
		if err == nil {
			r.outs = outputs(ps[i], progs[j].Regions)
		}
		out[i] = append(out[i], r)
	}
	return out
}

// hostKernel is k as internal/mslhost runs it.
func hostKernel(k *msl.Kernel) *mslhost.Kernel {
	hk := &mslhost.Kernel{Name: k.Name, Source: k.Source, Groups: k.Groups, Threads: k.Threads}
	for _, b := range k.Buffers {
		hk.Buffers = append(hk.Buffers, b.Type)
	}
	return hk
}
