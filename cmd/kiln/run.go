package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/npy"
	"github.com/kilnml/kiln/tensor"
)

const runUsage = `usage: kiln run model.onnx [--device D] [--input name=file.npy ...] [--output dir] [--shape name=d0,d1,...]

Runs an ONNX model once on the CPU and prints each output's name, dtype,
shape and a summary of its values. Inputs come from .npy files; an input
without one gets random values (see kiln bench -h for the rule). With
--output, each output is written to dir/<name>.npy (the name with
characters other than letters, digits, '-', '_' and '.' replaced by '_';
"_2", "_3", ... appended where two outputs would share a file). The
directory is checked for writing before the model runs.
`

func runRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	var inputs listFlag
	fs.Var(&inputs, "input", "an input's value, `name=file.npy` (repeatable)")
	outDir := fs.String("output", "", "write each output to `dir`/<name>.npy")
	seed := fs.Uint64("seed", 1, "seed for random inputs")
	fs.Usage = func() { fmt.Fprint(stderr, runUsage, "\nflags:\n"); fs.PrintDefaults() }
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	path, err := modelArg("run", pos)
	if err != nil {
		return err
	}
	files, err := inputSpecs(inputs)
	if err != nil {
		return err
	}
	given, err := readInputs(files)
	if err != nil {
		return err
	}
	c, err := mf.loadModel(path, given)
	if err != nil {
		return err
	}
	defer c.cg.Close()
	in, err := feeds(c, given, *seed)
	if err != nil {
		return err
	}
	for _, f := range in {
		switch src := f.source(); {
		case f.random:
			fmt.Fprintf(stderr, "input %s %v%v: random (no --input given)\n", f.info.Name, f.info.DType, f.info.Shape)
		case src != "file":
			fmt.Fprintf(stderr, "input %s %v%v: %s\n", f.info.Name, f.info.DType, f.info.Shape, src)
		}
	}
	infos := c.cg.Outputs()
	var paths []string
	if *outDir != "" {
		// Before running: a directory that cannot be written fails now,
		// not after a long run.
		if paths, err = outputPaths(*outDir, infos); err != nil {
			return err
		}
	}
	t0 := time.Now()
	outs, err := c.cg.RunTyped(typed(in)...)
	if err != nil {
		return err
	}
	took := time.Since(t0)
	for i, o := range outs {
		t := tensor.Tensor{DType: o.DType, Shape: o.Shape, Data: o.Data}
		fmt.Fprintf(stdout, "%s %v%v: %s\n", infos[i].Name, t.DType, t.Shape, summarize(t))
		if paths != nil {
			p := paths[i]
			if err := npy.WriteFile(p, t); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "  wrote %s\n", p)
		}
	}
	fmt.Fprintf(stderr, "ran in %v\n", took.Round(time.Microsecond))
	return nil
}

// outputPaths creates dir if needed, checks that a file can be written
// there, and gives each output its own file: fileName of its name, with
// "_2", "_3", ... appended where two names map to the same file (out/a
// and out_a; A and a on a case-insensitive file system), so no output
// overwrites another.
func outputPaths(dir string, infos []kiln.TensorInfo) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	probe, err := os.CreateTemp(dir, ".kiln-write-test-*")
	if err != nil {
		return nil, fmt.Errorf("--output %s is not writable: %w", dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	taken := map[string]bool{}
	paths := make([]string, len(infos))
	for i, info := range infos {
		base := fileName(info.Name)
		name := base
		for n := 2; taken[strings.ToLower(name)]; n++ {
			name = fmt.Sprintf("%s_%d", base, n)
		}
		taken[strings.ToLower(name)] = true
		paths[i] = filepath.Join(dir, name+".npy")
	}
	return paths, nil
}

// fileName makes an output name safe as a file name: ONNX names may hold
// '/', ':' and the like ("/encoder/layer.0/Add_output_0").
func fileName(name string) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
	s = strings.TrimLeft(s, ".")
	if s == "" {
		return "output"
	}
	return s
}

// summarize describes a tensor's values in one line: min, max, mean and
// standard deviation (NaN and Inf counted apart) for floats, min and max
// for integers, the count of true values for bools; then the first few.
func summarize(t tensor.Tensor) string {
	v := t.Float64s()
	if len(v) == 0 {
		return "empty"
	}
	var b strings.Builder
	switch {
	case t.DType == tensor.Bool:
		n := 0
		for _, x := range v {
			if x != 0 {
				n++
			}
		}
		fmt.Fprintf(&b, "%d of %d true", n, len(v))
	default:
		lo, hi := math.Inf(1), math.Inf(-1)
		var sum, sq float64
		finite, nan, inf := 0, 0, 0
		for _, x := range v {
			switch {
			case math.IsNaN(x):
				nan++
				continue
			case math.IsInf(x, 0):
				inf++
			default:
				finite++
				sum += x
				sq += x * x
			}
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		if t.DType.IsFloat() {
			mean := sum / math.Max(float64(finite), 1)
			std := math.Sqrt(math.Max(sq/math.Max(float64(finite), 1)-mean*mean, 0))
			fmt.Fprintf(&b, "min %.6g max %.6g mean %.6g std %.6g", lo, hi, mean, std)
			if nan+inf > 0 {
				fmt.Fprintf(&b, " (%d NaN, %d Inf)", nan, inf)
			}
		} else {
			fmt.Fprintf(&b, "min %.0f max %.0f", lo, hi)
		}
	}
	b.WriteString(" [")
	for i, x := range v[:min(len(v), 6)] {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.6g", x)
	}
	if len(v) > 6 {
		b.WriteString(" ...")
	}
	b.WriteByte(']')
	return b.String()
}
