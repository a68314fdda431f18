package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kilnml/kiln"
	"github.com/kilnml/kiln/exec"
	"github.com/kilnml/kiln/internal/mmapfile"
	"github.com/kilnml/kiln/onnx"
	"github.com/kilnml/kiln/tensor"
)

// Where the model commands write; tests replace them.
var (
	stdout io.Writer = os.Stdout
	stderr io.Writer = os.Stderr
)

// usageError is a mistake on the command line (a bad flag, a missing
// argument): main exits with status 2 for it, 1 for other failures.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// listFlag collects a repeatable flag's values in order.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// parseArgs parses flags that may come before or after the positional
// arguments (`kiln run model.onnx --input x=a.npy`), which flag.Parse
// alone stops at. -h is a nil error after printing the usage.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(stderr)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// modelFlags are the flags every model command takes.
type modelFlags struct {
	shapes  listFlag
	dims    listFlag
	threads int
	device  string
	pool    *exec.Pool // the CPU session's workers when --threads set them (session)
}

// cpuPool is the pool a CPU session made by session runs its loops on.
func (mf *modelFlags) cpuPool() *exec.Pool {
	if mf.pool != nil {
		return mf.pool
	}
	return exec.DefaultPool()
}

func (mf *modelFlags) register(fs *flag.FlagSet) {
	fs.Var(&mf.shapes, "shape", "bind an input's shape, `name=d0,d1,...` (repeatable; for symbolic dims)")
	fs.Var(&mf.dims, "dim", "bind a symbolic dim by name, `name=size` (repeatable)")
	fs.IntVar(&mf.threads, "threads", 0, "worker threads (0: KILN_THREADS or all cores)")
	fs.StringVar(&mf.device, "device", "cpu", "where the model runs: `cpu`, cuda, cuda:N or metal")
}

// parseDevice reads --device: cpu (also ""), metal, cuda (GPU 0) or
// cuda:N.
func parseDevice(s string) (kiln.Device, error) {
	kind, index, hasIndex := strings.Cut(strings.TrimSpace(s), ":")
	switch kind {
	case "", "cpu", "metal":
		if hasIndex {
			return kiln.Device{}, usagef("--device %q: %s takes no index", s, kind)
		}
		if kind != "metal" {
			return kiln.CPU, nil
		}
		return kiln.Metal(), nil
	case "cuda":
		i := 0
		if hasIndex {
			n, err := strconv.Atoi(index)
			if err != nil || n < 0 {
				return kiln.Device{}, usagef("--device %q: %q is not a GPU number", s, index)
			}
			i = n
		}
		return kiln.CUDA(i), nil
	}
	return kiln.Device{}, usagef("--device %q: want cpu, cuda, cuda:N or metal", s)
}

// options turns the --shape and --dim flags into import options.
func (mf *modelFlags) options() ([]onnx.Option, error) {
	var opts []onnx.Option
	for _, s := range mf.shapes {
		name, list, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return nil, usagef("--shape %q: want name=d0,d1,...", s)
		}
		var dims []int
		if list != "" {
			for _, f := range strings.Split(list, ",") {
				d, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || d < 0 {
					return nil, usagef("--shape %q: %q is not a dim", s, f)
				}
				dims = append(dims, d)
			}
		}
		opts = append(opts, onnx.WithShape(name, dims...))
	}
	for _, s := range mf.dims {
		name, v, ok := strings.Cut(s, "=")
		d, err := strconv.Atoi(v)
		if !ok || name == "" || err != nil || d < 0 {
			return nil, usagef("--dim %q: want name=size", s)
		}
		opts = append(opts, onnx.WithDim(name, d))
	}
	return opts, nil
}

// session is a session on --device, with --threads applied on the CPU.
func (mf *modelFlags) session() (*kiln.Session, error) {
	dev, err := parseDevice(mf.device)
	if err != nil {
		return nil, err
	}
	s := kiln.NewSession(dev)
	if mf.threads < 0 || mf.threads > exec.MaxWorkers {
		return nil, usagef("--threads %d: want 0 to %d", mf.threads, exec.MaxWorkers)
	}
	if mf.threads > 0 && dev != kiln.CPU {
		return nil, usagef("--threads %d: worker threads are for --device cpu, not %v", mf.threads, dev)
	}
	if mf.threads > 0 {
		mf.pool = exec.NewPool(mf.threads)
		s = s.WithOptions(kiln.Options{Exec: exec.Options{Pool: mf.pool}})
	}
	return s, nil
}

// compiled is a model loaded, compiled and given its weights.
type compiled struct {
	model *onnx.Model // its Graph is the imported graph, before fusion
	cg    *kiln.CompiledGraph
}

// loadModel imports, compiles and sets the weights of an ONNX model.
// Inputs the model declares with symbolic or unknown dims take their
// shape from the value given for them (an --input file), unless --shape
// says otherwise, so a model exported with a dynamic batch runs as is.
func (mf *modelFlags) loadModel(path string, given map[string]tensor.Tensor) (*compiled, error) {
	opts, err := mf.options()
	if err != nil {
		return nil, err
	}
	sess, err := mf.session()
	if err != nil {
		return nil, err
	}
	f, err := mmapfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() // weights are copied into the compiled graph
	data := f.Bytes()
	if mp, err := onnx.Decode(data); err == nil && mp.Graph != nil {
		for _, vi := range mp.Graph.Inputs {
			t, ok := given[vi.Name]
			if ok && !mf.hasShape(vi.Name) && !static(vi) {
				opts = append(opts, onnx.WithShape(vi.Name, t.Shape...))
			}
		}
	} // else onnx.Parse reports the error
	m, err := onnx.Parse(data, append(opts, onnx.WithBaseDir(filepath.Dir(path)))...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, withHint(err))
	}
	defer m.Close()
	cg, err := sess.Compile(m.Graph)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if err := m.SetParams(cg); err != nil {
		cg.Close()
		return nil, err
	}
	return &compiled{model: m, cg: cg}, nil
}

// static reports whether an input's declared shape is fully fixed.
func static(vi *onnx.ValueInfo) bool {
	if !vi.HasShape {
		return false
	}
	for _, d := range vi.Dims {
		if !d.HasValue {
			return false
		}
	}
	return true
}

func (mf *modelFlags) hasShape(name string) bool {
	for _, s := range mf.shapes {
		if n, _, _ := strings.Cut(s, "="); n == name {
			return true
		}
	}
	return false
}

// modelArg checks that exactly one positional argument, the model, was
// given.
func modelArg(cmd string, pos []string) (string, error) {
	switch len(pos) {
	case 0:
		return "", usagef("%s: no model file given", cmd)
	case 1:
		return pos[0], nil
	}
	return "", usagef("%s: one model file expected, got %q", cmd, pos)
}

// withHint points the importer's advice about unbound dims at the flags
// that carry it on the command line.
func withHint(err error) error {
	if strings.Contains(err.Error(), "unbound dims") {
		return fmt.Errorf("%w\n(on the command line: --shape name=d0,d1,... or --dim name=size)", err)
	}
	return err
}
