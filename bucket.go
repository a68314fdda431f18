package kiln

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kilnml/kiln/graph"
	"github.com/kilnml/kiln/tensor"
)

// Buckets are the extents a BucketedCache compiles at. Bucket i covers the
// extents (Uppers[i-1], Uppers[i]] (the first from 1) and is compiled at
// Uppers[i].
type Buckets struct {
	Uppers []int // strictly increasing, all >= 1

	err error // from PowerOfTwo
}

// PowerOfTwo is the ladder min, 2·min, 4·min, ... up to max: the last
// bucket is capped at max, so no extent above it is compiled (with min
// and max powers of two, every bucket is a power of two).
func PowerOfTwo(min, max int) Buckets {
	if min < 1 || max < min {
		return Buckets{err: fmt.Errorf("PowerOfTwo(%d, %d) needs 1 <= min <= max", min, max)}
	}
	var up []int
	for u := min; u < max; u *= 2 {
		up = append(up, u)
		if u > max/2 { // the next would pass max (or overflow)
			break
		}
	}
	return Buckets{Uppers: append(up, max)}
}

func (b Buckets) check() error {
	if b.err != nil {
		return b.err
	}
	if len(b.Uppers) == 0 {
		return errors.New("no buckets")
	}
	for i, u := range b.Uppers {
		if u < 1 || (i > 0 && u <= b.Uppers[i-1]) {
			return fmt.Errorf("bucket uppers %v must be positive and strictly increasing", b.Uppers)
		}
	}
	return nil
}

// BucketedCache runs a graph family at variable extents along one axis
// (sequence length, batch) by compiling one graph per bucket, lazily at
// the bucket's upper extent, and padding inputs up to it. Params set on
// the cache apply to every entry, compiled or still to come. A
// BucketedCache is not safe for concurrent use.
type BucketedCache struct {
	sess    *Session
	build   func(extent int) (*graph.Graph, error)
	uppers  []int
	axis    int
	entries map[int]*CompiledGraph // by upper
	params  []setParam             // in the order set; later ones win
}

type setParam struct {
	name  string
	data  []byte
	dtype tensor.DType
}

// NewBucketedCache makes a cache over build, which returns the graph for
// an extent: inputs whose dim at axis is that extent are the bucketed
// ones. Nothing is compiled until a run needs a bucket.
func NewBucketedCache(sess *Session, build func(extent int) (*graph.Graph, error), buckets Buckets, axis int) (*BucketedCache, error) {
	if sess == nil || build == nil {
		return nil, errors.New("kiln: NewBucketedCache: nil session or build function")
	}
	if err := buckets.check(); err != nil {
		return nil, fmt.Errorf("kiln: NewBucketedCache: %w", err)
	}
	if axis < 0 {
		return nil, fmt.Errorf("kiln: NewBucketedCache: negative axis %d", axis)
	}
	return &BucketedCache{sess: sess, build: build, uppers: slices.Clone(buckets.Uppers), axis: axis,
		entries: map[int]*CompiledGraph{}}, nil
}

// Buckets lists the bucket uppers.
func (bc *BucketedCache) Buckets() []int { return slices.Clone(bc.uppers) }

// Compiled lists the uppers of the buckets compiled so far, ascending.
func (bc *BucketedCache) Compiled() []int {
	var out []int
	for _, u := range bc.uppers {
		if bc.entries[u] != nil {
			out = append(out, u)
		}
	}
	return out
}

// Bucket is the upper extent of the bucket that holds actual.
func (bc *BucketedCache) Bucket(actual int) (int, error) {
	if actual < 1 || actual > bc.uppers[len(bc.uppers)-1] {
		return 0, fmt.Errorf("kiln: BucketedCache: extent %d outside the buckets [1, %d]", actual, bc.uppers[len(bc.uppers)-1])
	}
	i, _ := slices.BinarySearch(bc.uppers, actual)
	return bc.uppers[i], nil
}

// Entry returns the compiled graph of the bucket holding actual,
// compiling it (and setting every recorded param) on first use.
func (bc *BucketedCache) Entry(actual int) (*CompiledGraph, error) {
	up, err := bc.Bucket(actual)
	if err != nil {
		return nil, err
	}
	if cg := bc.entries[up]; cg != nil {
		return cg, nil
	}
	g, err := bc.build(up)
	if err != nil {
		return nil, fmt.Errorf("kiln: BucketedCache: bucket %d: build: %w", up, err)
	}
	if g == nil {
		return nil, fmt.Errorf("kiln: BucketedCache: bucket %d: build returned no graph", up)
	}
	cg, err := bc.sess.Compile(g)
	if err != nil {
		return nil, fmt.Errorf("kiln: BucketedCache: bucket %d: compile: %w", up, err)
	}
	if err := bc.checkAxis(cg, up); err != nil {
		cg.Close()
		return nil, err
	}
	for _, p := range bc.params {
		if err := cg.SetParamTyped(p.name, p.data, p.dtype); err != nil {
			cg.Close()
			return nil, fmt.Errorf("kiln: BucketedCache: bucket %d: %w", up, err)
		}
	}
	bc.entries[up] = cg
	return cg, nil
}

// checkAxis requires some input of a bucket's graph to have the bucket's
// extent at the cache's axis: otherwise nothing is ever padded or cut
// (an axis past every input's rank, say) and the cache would run each
// bucket at its full size without a word.
func (bc *BucketedCache) checkAxis(cg *CompiledGraph, up int) error {
	var shapes []string
	for _, in := range cg.Inputs() {
		if bc.axis < len(in.Shape) && in.Shape[bc.axis] == up {
			return nil
		}
		shapes = append(shapes, fmt.Sprintf("%s%v", in.Name, in.Shape))
	}
	return fmt.Errorf("kiln: BucketedCache: bucket %d: no input has extent %d at axis %d (inputs %s)", up, up, bc.axis, strings.Join(shapes, ", "))
}

// SetParam records a float32 param and sets it on every compiled entry;
// entries compiled later get it too.
func (bc *BucketedCache) SetParam(name string, data []float32) error {
	return bc.SetParamTyped(name, tensor.Bytes(data), tensor.F32)
}

// SetParamTyped is SetParam for raw bytes of dtype dt (see
// CompiledGraph.SetParamTyped). The data is copied. If an existing entry
// refuses it, nothing is recorded.
func (bc *BucketedCache) SetParamTyped(name string, data []byte, dt tensor.DType) error {
	p := setParam{name: name, data: slices.Clone(data), dtype: dt}
	for _, u := range bc.Compiled() {
		if err := bc.entries[u].SetParamTyped(name, p.data, dt); err != nil {
			return fmt.Errorf("kiln: BucketedCache: bucket %d: %w", u, err)
		}
	}
	bc.params = slices.DeleteFunc(bc.params, func(q setParam) bool { return q.name == name })
	bc.params = append(bc.params, p)
	return nil
}

// RunPadded runs the bucket holding actual. Each input whose compiled
// dim at the cache's axis is the bucket's upper is given at extent actual
// and zero-padded up to it (inputs of the full compiled size pass as they
// are); each output whose dim at axis is the upper is cut back to actual.
// Padding must not reach the valid rows (mask padded keys in attention).
func (bc *BucketedCache) RunPadded(actual int, inputs ...Input) ([][]float32, error) {
	typed := make([]TypedInput, len(inputs))
	for i, in := range inputs {
		typed[i] = TypedInput{Name: in.Name, Data: tensor.Bytes(in.Data), DType: tensor.F32}
	}
	cg, up, err := bc.pad(actual, typed)
	if err != nil {
		return nil, err
	}
	outs, err := cg.Run(untype(typed)...)
	if err != nil {
		return nil, fmt.Errorf("kiln: BucketedCache: bucket %d: %w", up, err)
	}
	for i, o := range cg.Outputs() {
		if small, ok := bc.cut(o.Shape, actual, up); ok {
			v := make([]float32, small.NumElements())
			copyLeading(tensor.Bytes(v), small, tensor.Bytes(outs[i]), o.Shape, 4)
			outs[i] = v
		}
	}
	return outs, nil
}

// RunPaddedTyped is RunPadded for inputs in any dtype (padded with zero
// bytes, which is zero in every dtype); outputs keep their dtypes.
func (bc *BucketedCache) RunPaddedTyped(actual int, inputs ...TypedInput) ([]TypedOutput, error) {
	typed := slices.Clone(inputs)
	cg, up, err := bc.pad(actual, typed)
	if err != nil {
		return nil, err
	}
	outs, err := cg.RunTyped(typed...)
	if err != nil {
		return nil, fmt.Errorf("kiln: BucketedCache: bucket %d: %w", up, err)
	}
	for i := range outs {
		o := &outs[i]
		if small, ok := bc.cut(o.Shape, actual, up); ok {
			e := o.DType.Size()
			v := zeroBytes(small.NumElements() * e)
			copyLeading(v, small, o.Data, o.Shape, e)
			o.Data, o.Shape = v, small
		}
	}
	return outs, nil
}

// pad finds the entry for actual and replaces, in place, the data of
// every input given at extent actual by a zero-padded copy at the upper.
func (bc *BucketedCache) pad(actual int, inputs []TypedInput) (*CompiledGraph, int, error) {
	cg, err := bc.Entry(actual)
	if err != nil {
		return nil, 0, err
	}
	up, _ := bc.Bucket(actual)
	infos := cg.Inputs()
	for i := range inputs {
		in := &inputs[i]
		j := slices.IndexFunc(infos, func(t TensorInfo) bool { return t.Name == in.Name })
		if j < 0 || !in.DType.Valid() {
			continue // Run reports it
		}
		full := infos[j].Shape
		if bc.axis >= len(full) || full[bc.axis] != up || actual == up {
			continue
		}
		small := full.Clone()
		small[bc.axis] = actual
		e := in.DType.Size()
		switch len(in.Data) {
		case small.NumElements() * e:
			padded := zeroBytes(full.NumElements() * e)
			copyLeading(padded, full, in.Data, small, e)
			in.Data = padded
		case full.NumElements() * e: // already at the upper
		default:
			return nil, 0, fmt.Errorf("kiln: BucketedCache: bucket %d: input %q needs %v (%d values) at extent %d, got %d bytes of %v",
				up, in.Name, small, small.NumElements(), actual, len(in.Data), in.DType)
		}
	}
	return cg, up, nil
}

// cut is the shape an output of shape full at extent up is cut to: its
// first actual rows along the cache's axis; false if it is not cut.
func (bc *BucketedCache) cut(full tensor.Shape, actual, up int) (tensor.Shape, bool) {
	if bc.axis >= len(full) || full[bc.axis] != up || actual == up {
		return nil, false
	}
	small := full.Clone()
	small[bc.axis] = actual
	return small, true
}

// zeroBytes allocates n zero bytes aligned for any element type, so they
// can be viewed as int64 or float64 without a misaligned pointer.
func zeroBytes(n int) []byte {
	return tensor.Bytes(make([]uint64, (n+7)/8))[:n:n]
}

// untype turns padded F32 inputs back into Inputs.
func untype(ts []TypedInput) []Input {
	out := make([]Input, len(ts))
	for i, t := range ts {
		out[i] = Input{Name: t.Name, Data: tensor.Elems[float32](t.Data)}
	}
	return out
}

// Close closes every compiled entry.
func (bc *BucketedCache) Close() error {
	var errs []error
	for u, cg := range bc.entries {
		errs = append(errs, cg.Close())
		delete(bc.entries, u)
	}
	return errors.Join(errs...)
}
